/** Events group: `/events/all` (list and poll) and `/transaction/{txid}/events`. */
import { Type } from "@sinclair/typebox";
import type { FastifyReply } from "fastify";
import type { CsvColumn } from "../../../lib/csv.ts";
import { badRequest } from "../../../lib/errors.ts";
import type { EventsPage } from "../../../lib/events/service.ts";
import {
  CSV_NOTE,
  FormatQuery,
  jsonOrCsv,
  responseFormat,
  sendCsv,
  urlWith,
  varyOnAccept,
} from "../../csv.ts";
import { requireDb } from "../../require-db.ts";
import { Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

export const LabelRowSchema = Type.Object(
  {
    label: Type.String(),
    icon: Type.Optional(Type.String({ description: "Icon URL" })),
    mapped_label: Type.String(),
    source: Type.String(),
  },
  { $id: "AddressLabel", title: "AddressLabel" },
);

export const NormalizedEventSchema = Type.Object(
  {
    id: Type.String({ description: "Sortable event id; the cursor of `after_id`." }),
    dapp_id: Type.String(),
    category: Type.String({
      description: "See the taxonomy (dex, transfer, token, mining, contract, cex; chain for reorg notices).",
    }),
    sub_kind: Type.String(),
    type: Type.String(),
    from: Type.String(),
    to: Type.String(),
    with: Type.String(),
    token_address: Type.String(),
    token_id: Type.String({ description: "Token id (64 hex); 64 zeros for ALPH." }),
    amount: Type.String({
      description: "Primary amount in the token's smallest unit (U256 decimal string).",
    }),
    is_main: Type.Boolean({ description: "True for the main event of its transaction." }),
    tx_id: Type.String({
      description:
        "Transaction id (64 hex); for market events the EVM transaction (0x + 64 hex) of a pool swap, empty for an exchange fill.",
    }),
    tx_index: Type.Integer(),
    event_index: Type.Integer(),
    block_hash: Type.String({
      description:
        "Block hash (64 hex); empty for market events and reorg notices (their block is in the payload).",
    }),
    block_height: Type.Integer({
      description: "Height on its chain; the EVM block number of a pool swap's market event.",
    }),
    chain_index: Type.Integer({
      description:
        "fromGroup * 4 + toGroup (0..15); 16 for market events (exchange fills and EVM pool swaps recorded by the trade watcher, whose ids sort by the time they were recorded); 17 for reorg notices (category `chain`, type `reorg`): `retraction` when a reorg deeper than the ingest's confirmations removed events that may have been served (`payload.retracted_ids`, with `payload.block_hash`, `chain_index`, `height`), `late_block` when it added a block whose events sort below ids already served (`payload.added_ids` and `payload.events`, the block's events). A notice's id sorts after every event it corrects; a poller applies it by removing `retracted_ids` and adding `events`.",
    }),
    timestamp: Type.Integer({
      description:
        "Block timestamp, Unix ms; the venue's trade time for market events; for reorg notices the time their id sorts at.",
    }),
    contract_address: Type.String(),
    contract_event_index: Nullable(Type.Integer()),
    payload: Type.Object({}, { additionalProperties: true, description: "Category-specific fields." }),
    payload_ref: Nullable(Type.String({ description: "Reference of an offloaded payload." })),
    address_labels: Type.Record(Type.String(), Type.Ref("AddressLabel"), {
      description: "Primary label per address among from, to, with and token_address.",
    }),
  },
  { $id: "NormalizedEvent", title: "NormalizedEvent" },
);

const EventsQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
  after_id: Type.Optional(
    Type.String({ pattern: "^[0-9-]{1,64}$", description: "Cursor: last event id seen." }),
  ),
  poll: Type.Optional(
    Type.Unsafe<"0" | "1">({ type: "string", enum: ["0", "1"], description: "`1` for poll mode." }),
  ),
  dapp_id: Type.Optional(Type.String({ maxLength: 100 })),
  address: Type.Optional(Type.String({ maxLength: 100 })),
  token_address: Type.Optional(Type.String({ maxLength: 100 })),
  category: Type.Optional(Type.String({ maxLength: 500, description: "Comma-separated list." })),
  sub_kind: Type.Optional(Type.String({ maxLength: 500, description: "Comma-separated list." })),
  ...FormatQuery,
});

type EventRow = Record<string, unknown>;
const text = (name: string): CsvColumn<EventRow> => ({ name, kind: "text" });
const int = (name: string): CsvColumn<EventRow> => ({ name, kind: "number" });

/** CSV columns of an event: the NormalizedEvent fields in schema order, `timestamp_iso` after `timestamp`. */
export const EVENT_CSV_COLUMNS: CsvColumn<EventRow>[] = [
  ...["id", "dapp_id", "category", "sub_kind", "type", "from", "to", "with", "token_address", "token_id"].map(
    text,
  ),
  int("amount"),
  { name: "is_main", kind: "boolean" },
  text("tx_id"),
  int("tx_index"),
  int("event_index"),
  text("block_hash"),
  int("block_height"),
  int("chain_index"),
  int("timestamp"),
  { name: "timestamp_iso", kind: "iso", get: (e) => e.timestamp },
  text("contract_address"),
  int("contract_event_index"),
  { name: "payload", kind: "json" },
  text("payload_ref"),
  { name: "address_labels", kind: "json" },
];

const csv = (v: string | undefined) =>
  v
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);

export const TX_HASH = "^[0-9a-fA-F]{64}$";
/** An EVM transaction hash (market events of EVM pool swaps). */
const EVM_TX_HASH = /^0x[0-9a-fA-F]{64}$/;

/** A page's documents as one JSON array, joined once per page (pages are shared through the service's cache). */
const arrays = new WeakMap<EventsPage, string>();
function arrayOf(page: EventsPage): string {
  let text = arrays.get(page);
  if (text === undefined) {
    text = `[${page.docs.join(",")}]`;
    arrays.set(page, text);
  }
  return text;
}

export async function eventsRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(LabelRowSchema);
  app.addSchema(NormalizedEventSchema);

  app.get(
    "/events/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Events"],
        summary: "Normalized events across all transactions (list and poll)",
        description: [
          "List mode (no `poll`): newest first; pass the last id of a page as `after_id` for the next (older) page.",
          "Poll mode (`poll=1&after_id=<last id seen>`): events newer than `after_id`, oldest first. Events become",
          "visible only up to the low watermark of the 16 chains, so a poller that repeats the call with the last id",
          "it received gets every event exactly once, in id order. `poll=1` without `after_id` answers like list mode.",
          "Reorgs deeper than the ingest's confirmations arrive as reorg notices (`chain_index` 17, category `chain`,",
          "sub_kind `retraction` or `late_block`, dapp_id `alephium`) in the same stream, after the events they correct:",
          "remove the notice's `payload.retracted_ids` from what you hold and add its `payload.events` (by id). A filtered",
          "poll gets the notices about events of its filters: a notice names only the events that match them, at or",
          "below `after_id` (those it may have received or passed), with its payload inline; none when no event matches.",
          CSV_NOTE,
          "In CSV, one row per event (`payload` and `address_labels` as JSON text); the cursor of the next page is",
          'in `X-Next-Cursor` and `Link: <url>; rel="next"` (the same request with `after_id` set): in list mode',
          "when the page is full (`limit` rows); in poll mode always: the last id received, or `after_id` when none (the",
          "newest id when `poll=1` came without `after_id`).",
        ].join(" "),
        querystring: EventsQuery,
        response: {
          200: jsonOrCsv(
            Type.Object({
              events: Type.Array(Type.Ref("NormalizedEvent")),
              poll: Type.Optional(Type.Boolean()),
            }),
            EVENT_CSV_COLUMNS.map((c) => c.name).join(", "),
          ),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const poll = q.poll === "1";
      const events = await need("events").page(
        {
          dapp_id: q.dapp_id,
          address: q.address,
          token_address: q.token_address,
          category: csv(q.category),
          sub_kind: csv(q.sub_kind),
        },
        { limit: q.limit, afterId: q.after_id, poll },
      );
      varyOnAccept(reply as FastifyReply);
      if (responseFormat(request) === "csv") {
        const rows = events.docs.map((doc) => JSON.parse(doc) as EventRow);
        const { ids } = events;
        // Poll mode (oldest first): the last id received; `poll=1` without `after_id` is a list-mode page,
        // whose newest (first) id is where polling starts. List mode: the oldest id of a full page.
        const cursor = poll
          ? q.after_id === undefined
            ? ids[0]
            : (ids.at(-1) ?? q.after_id)
          : ids.length === q.limit
            ? ids.at(-1)
            : undefined;
        return sendCsv(reply as FastifyReply, {
          columns: EVENT_CSV_COLUMNS,
          rows,
          filename: "events.csv",
          next: cursor === undefined ? null : { cursor, url: urlWith(request, "after_id", cursor) },
        });
      }
      // Served as built from the stored documents (a JSON string passes Fastify's serializer untouched).
      return (reply as FastifyReply)
        .type("application/json; charset=utf-8")
        .send(`{"events":${arrayOf(events)}${poll ? ',"poll":true' : ""}}`);
    },
  );

  app.get(
    "/transaction/:txid/events",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Transaction"],
        summary: "Normalized events of one transaction",
        description:
          "An Alephium transaction's events, or, for `0x` + 64 hex, the market events (EVM pool swaps of pairs with `enable_trades`, recorded by the trade watcher) of that EVM transaction. Exchange fills have no transaction.",
        params: Type.Object({
          txid: Type.String({
            description: "Transaction hash: 64 hex (Alephium), or 0x + 64 hex (an EVM transaction).",
          }),
        }),
        response: {
          200: Type.Object({
            transaction_id: Type.String(),
            events: Type.Array(Type.Ref("NormalizedEvent")),
            meta: Type.Optional(
              Type.Object({
                payload_chunk_hydration_enabled: Type.Boolean({
                  description:
                    "False means offloaded payloads were not merged (payload is {} where payload_ref is set).",
                }),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const txid = request.params.txid;
      if (!new RegExp(TX_HASH).test(txid) && !EVM_TX_HASH.test(txid))
        throw badRequest(
          `Invalid txid ${JSON.stringify(txid)}: expected 64 hex characters (or 0x and 64 hex for an EVM transaction).`,
        );
      const repo = need("events");
      const events = await repo.byTransaction(txid.toLowerCase());
      return {
        transaction_id: txid.toLowerCase(),
        events,
        meta: { payload_chunk_hydration_enabled: repo.hydration },
      };
    },
  );
}
