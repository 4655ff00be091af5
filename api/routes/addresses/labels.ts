/** Addresses group, labels: list, add (admin), delete (admin). Labels decorate `address_labels` on events. */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { requireDb } from "../../require-db.ts";
import { INT32_MAX, Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const ADDRESS = "^[1-9A-HJ-NP-Za-km-z]{20,60}(:[0-3])?$";

const LabelMetadata = Type.Object(
  {
    type: Nullable(
      Type.String({ description: "What the address is, e.g. `contract`, `token`, `exchange`." }),
    ),
    name: Nullable(Type.String({ description: "The name of what the address is (a token's name, ...)." })),
    state: Nullable(Type.String({ description: "Its state as the labeller gave it, e.g. `active`." })),
    dapp: Nullable(
      Type.String({ description: "Same as `dapp_id` when that dapp exists (not deleted), else null." }),
    ),
    dapp_id: Nullable(
      Type.String({ description: "The dapp the address belongs to, as given with the label." }),
    ),
    dapp_name: Nullable(Type.String({ description: "That dapp's name (from /dapps), null when unknown." })),
    dapp_icon: Nullable(Type.String({ description: "That dapp's logo URL, null when unknown." })),
  },
  { description: "What the label says about its address; every field null when not given." },
);

const LabelRecord = Type.Object(
  {
    address: Type.String(),
    label: Type.String(),
    icon: Type.Union([Type.String(), Type.Null()]),
    mapped_label: Type.String(),
    source: Type.String(),
    priority: Type.Integer({ description: "Lower wins when an address has labels from several sources." }),
    display_order: Type.Integer({ description: "Same as `priority`: labels are shown lowest first." }),
    icon_hash: Nullable(
      Type.String({
        description: "A hash of the icon's content given with the label (a cache key), null when not.",
      }),
    ),
    metadata: LabelMetadata,
    created_at: Type.String({ format: "date-time" }),
    updated_at: Type.String({ format: "date-time" }),
  },
  { $id: "AddressLabelRecord", title: "AddressLabelRecord" },
);

export async function addressLabelRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(LabelRecord);

  app.get(
    "/addresses/labels",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "List address labels (optionally of some addresses, or matching a search)",
        querystring: Type.Object({
          address: Type.Optional(Type.String({ maxLength: 4000, description: "Comma-separated addresses." })),
          search: Type.Optional(
            Type.String({ maxLength: 200, description: "Case-insensitive substring of the label." }),
          ),
          source: Type.Optional(Type.String({ maxLength: 100 })),
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
          offset: Type.Integer({ minimum: 0, maximum: INT32_MAX, default: 0 }),
        }),
        response: {
          200: Type.Object({
            labels: Type.Array(Type.Ref("AddressLabelRecord")),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const labels = await need("labels").list({
        addresses: q.address?.split(",").map((a) => a.trim()),
        search: q.search,
        source: q.source,
        limit: q.limit,
        offset: q.offset,
      });
      return { labels, limit: q.limit, offset: q.offset };
    },
  );

  app.get(
    "/addresses/:address/labels",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "Every label of one address, in display order",
        description:
          "The label rows the AlphScan explorer reads: the address's stored labels (lowest `display_order` " +
          "first), then the symbol of the registered token whose contract it is (source `token_registry`, display " +
          "order 1000). `labels` is empty for an address without labels. `GET /addresses/labels?address=` lists " +
          "the stored rows of several addresses.",
        params: Type.Object({ address: Type.String({ pattern: ADDRESS, description: "Base58 address." }) }),
        response: {
          200: Type.Object({ address: Type.String(), labels: Type.Array(Type.Ref("AddressLabelRecord")) }),
        },
      },
    },
    async (request) => ({
      address: request.params.address,
      labels: await need("labels").ofAddress(request.params.address),
    }),
  );

  app.post(
    "/addresses/labels/add",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "Add or replace the label of an address for a source",
        body: Type.Object(
          {
            address: Type.String({ pattern: ADDRESS, description: "Base58 address." }),
            label: Type.String({ minLength: 1, maxLength: 200 }),
            icon: Type.Optional(Type.Union([Type.String({ format: "uri", maxLength: 2000 }), Type.Null()])),
            mapped_label: Type.Optional(
              Type.String({ minLength: 1, maxLength: 200, description: "Defaults to label." }),
            ),
            source: Type.String({ minLength: 1, maxLength: 100, default: "admin" }),
            priority: Type.Integer({ minimum: 0, maximum: 1000, default: 100 }),
            icon_hash: Type.Optional(
              Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]),
            ),
            metadata: Type.Optional(
              Type.Object(
                {
                  type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
                  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
                  state: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
                  dapp_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
                },
                {
                  additionalProperties: false,
                  description: "Stored with the label; dapp, dapp_name and dapp_icon are read from the dapp.",
                },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ok: Type.Boolean(), label: Type.Ref("AddressLabelRecord") }) },
      },
    },
    async (request) => {
      const b = request.body;
      const label = await need("labels").upsert({
        address: b.address,
        source: b.source,
        label: b.label,
        icon: b.icon ?? null,
        mapped_label: b.mapped_label ?? b.label,
        priority: b.priority,
        icon_hash: b.icon_hash ?? null,
        metadata: b.metadata ?? {},
      });
      return { ok: true, label };
    },
  );

  app.post(
    "/addresses/labels/del",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "Delete an address's label (of one source, or of every source)",
        body: Type.Object(
          {
            address: Type.String({ pattern: ADDRESS }),
            source: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ ok: Type.Boolean(), deleted: Type.Integer() }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const { address, source } = request.body;
      const deleted = await need("labels").remove(address, source ?? null);
      if (deleted === 0)
        throw notFound(`No label for ${address}${source ? ` from ${source}` : ""}`, { address });
      return { ok: true, deleted };
    },
  );
}
