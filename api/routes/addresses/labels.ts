/** Addresses group, labels: list, add (admin), delete (admin). Labels decorate `address_labels` on events. */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { INT32_MAX } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const ADDRESS = "^[1-9A-HJ-NP-Za-km-z]{20,60}(:[0-3])?$";

const LabelRecord = Type.Object(
  {
    address: Type.String(),
    label: Type.String(),
    icon: Type.Union([Type.String(), Type.Null()]),
    mapped_label: Type.String(),
    source: Type.String(),
    priority: Type.Integer({ description: "Lower wins when an address has labels from several sources." }),
    updated_at: Type.String({ format: "date-time" }),
  },
  { $id: "AddressLabelRecord", title: "AddressLabelRecord" },
);

export async function addressLabelRoutes(app: App, deps: ApiDeps): Promise<void> {
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
      const labels = await deps.labels!.list({
        addresses: q.address?.split(",").map((a) => a.trim()),
        search: q.search,
        source: q.source,
        limit: q.limit,
        offset: q.offset,
      });
      return { labels, limit: q.limit, offset: q.offset };
    },
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
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ok: Type.Boolean(), label: Type.Ref("AddressLabelRecord") }) },
      },
    },
    async (request) => {
      const b = request.body;
      const label = await deps.labels!.upsert({
        address: b.address,
        source: b.source,
        label: b.label,
        icon: b.icon ?? null,
        mapped_label: b.mapped_label ?? b.label,
        priority: b.priority,
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
      const deleted = await deps.labels!.remove(address, source ?? null);
      if (deleted === 0)
        throw notFound(`No label for ${address}${source ? ` from ${source}` : ""}`, { address });
      return { ok: true, deleted };
    },
  );
}
