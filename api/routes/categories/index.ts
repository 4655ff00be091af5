/** Category group: list (with counts), add or re-activate, soft delete. */
import { Type } from "@sinclair/typebox";
import { requireDb } from "../../require-db.ts";
import type { ApiDeps, App } from "../../types.ts";

const CategorySchema = Type.Object(
  {
    id: Type.String(),
    sort_order: Type.Integer({ description: "Display order, ascending." }),
    deleted: Type.Boolean({
      description: "Soft-deleted; re-activated by POST /category/add with the same id.",
    }),
    count_token: Type.Integer({ description: "Non-deleted tokens in the category." }),
    count_dapp: Type.Integer({ description: "Non-deleted dapps linked to the category." }),
  },
  { $id: "Category", title: "Category" },
);

const CategoryId = Type.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,63}$", description: "Category id." });
const CategoryResult = Type.Object({ ok: Type.Boolean(), category: Type.Ref("Category") });

export async function categoryRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(CategorySchema);

  app.get(
    "/category/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Category"],
        summary: "List categories with token and dapp counts",
        querystring: Type.Object({
          include_deleted: Type.Boolean({
            default: false,
            description: "Also list soft-deleted categories.",
          }),
        }),
        response: { 200: Type.Object({ categories: Type.Array(Type.Ref("Category")) }) },
      },
    },
    async (request) => ({ categories: await need("registry").listCategories(request.query.include_deleted) }),
  );

  app.post(
    "/category/add",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Category"],
        summary: "Create a category, or re-activate a soft-deleted one",
        description: "An existing id is re-activated; its sort_order changes only when given.",
        body: Type.Object(
          {
            id: CategoryId,
            sort_order: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: CategoryResult },
      },
    },
    async (request) => ({
      ok: true,
      category: await need("registry").addCategory(request.body.id, request.body.sort_order),
    }),
  );

  app.post(
    "/category/del",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Category"],
        summary: "Soft-delete a category",
        description:
          "The row and its links stay (`deleted` true); it disappears from token and dapp category lists until re-added.",
        body: Type.Object({ id: CategoryId }, { additionalProperties: false }),
        response: { 200: CategoryResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => ({ ok: true, category: await need("registry").deleteCategory(request.body.id) }),
  );
}
