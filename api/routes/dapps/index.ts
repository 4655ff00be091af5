/** Dapps group: list, add (or re-activate), update, soft delete, and category links (at most 3). */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { type DappUpdate, MAX_CATEGORIES } from "../../../lib/tokens/repo.ts";
import { requireDb } from "../../require-db.ts";
import { NoBody, Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { NullableBody } from "../tokens/schemas.ts";

export const DappSchema = Type.Object(
  {
    id: Type.String({ description: "Stable dapp id, as in normalized events' dapp_id." }),
    name: Type.String(),
    short_name: Type.String({ description: "Short display name; the name when none is set." }),
    description: Nullable(Type.String()),
    website: Nullable(Type.String()),
    logo: Nullable(Type.String({ description: "Logo URL." })),
    icon: Nullable(Type.String({ description: "Same as `logo` (the AlphScan explorer's name)." })),
    categories: Type.Array(Type.String(), { description: "Up to 3 category ids (deleted ones omitted)." }),
    deleted: Type.Boolean(),
    tvl_usd: Nullable(
      Type.Number({
        description:
          "USD value locked in the dapp's Alephium DEX pools watched with includeInTVL (reserves × price_usd; see Token.tvlUsd), kept current by the figures processor; null when none is counted.",
      }),
    ),
    created_at: Type.Number({ description: "Unix ms." }),
    updated_at: Type.Number({ description: "Unix ms." }),
  },
  { $id: "Dapp", title: "Dapp" },
);

const DappId = Type.String({ pattern: "^[a-z0-9][a-z0-9_-]{0,63}$", description: "Dapp id." });
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const DappResult = Type.Object({ ok: Type.Boolean(), dapp: Type.Ref("Dapp") });
const DappParams = Type.Object({ dappid: DappId });

export async function dappRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(DappSchema);

  app.get(
    "/dapps/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Dapps"],
        summary: "List dapps with their categories",
        querystring: Type.Object({
          include_deleted: Type.Boolean({ default: false, description: "Also list soft-deleted dapps." }),
        }),
        response: { 200: Type.Object({ dapps: Type.Array(Type.Ref("Dapp")) }) },
      },
    },
    async (request) => ({ dapps: await need("registry").listDapps(request.query.include_deleted) }),
  );

  app.get(
    "/dapps/:dappid",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Dapps"],
        summary: "One dapp by id (name, short name, icon, categories)",
        description:
          "The dapp record the AlphScan explorer reads (`name`, `short_name`, `icon`) beside this API's fields, as in " +
          "/dapps/all. 404 for an unknown or soft-deleted id. The ids of the five dapp groups' routes " +
          "(`/dapps/furnace/...`) are dapp ids too.",
        params: DappParams,
        response: { 200: Type.Object({ dapp: Type.Ref("Dapp") }), 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const dapp = await need("registry").getDapp(request.params.dappid);
      if (!dapp) throw notFound(`Dapp ${request.params.dappid} not found`, { dappid: request.params.dappid });
      return { dapp };
    },
  );

  app.post(
    "/dapps/add",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Dapps"],
        summary: "Create a dapp, or re-activate and update an existing id",
        description: "Fields not given keep their stored values when the id exists.",
        body: Type.Object(
          {
            id: DappId,
            name: Text(200),
            short_name: Type.Optional(Text(100)),
            description: Type.Optional(Text(2000)),
            website: Type.Optional(Text(2000)),
            logo: Type.Optional(Text(2000)),
          },
          { additionalProperties: false },
        ),
        response: { 200: DappResult },
      },
    },
    async (request) => ({ ok: true, dapp: await need("registry").addDapp(request.body) }),
  );

  app.post(
    "/dapps/:dappid/update",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Dapps"],
        summary: "Change a dapp's fields (null fields are ignored; 400 when none is given)",
        params: DappParams,
        body: Type.Object(
          {
            name: Type.Optional(NullableBody(Text(200))),
            short_name: Type.Optional(NullableBody(Text(100))),
            description: Type.Optional(NullableBody(Text(2000))),
            website: Type.Optional(NullableBody(Text(2000))),
            logo: Type.Optional(NullableBody(Text(2000))),
          },
          { additionalProperties: false },
        ),
        response: { 200: DappResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => ({
      ok: true,
      dapp: await need("registry").updateDapp(request.params.dappid, request.body as DappUpdate),
    }),
  );

  app.post(
    "/dapps/:dappid/del",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Dapps"],
        summary: "Soft-delete a dapp (POST /dapps/add with its id re-activates it)",
        params: DappParams,
        body: NoBody,
        response: { 200: DappResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => ({ ok: true, dapp: await need("registry").deleteDapp(request.params.dappid) }),
  );

  app.post(
    "/dapps/:dappid/categories",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Dapps"],
        summary: "Set a dapp's categories (replaces them; at most 3)",
        description: `Up to ${MAX_CATEGORIES} existing category ids; 400 beyond or for an unknown id; [] clears.`,
        params: DappParams,
        body: Type.Object(
          { category_ids: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 }) },
          { additionalProperties: false },
        ),
        response: { 200: DappResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => ({
      ok: true,
      dapp: await need("registry").setDappCategories(request.params.dappid, request.body.category_ids),
    }),
  );
}
