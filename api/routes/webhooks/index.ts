/** Webhook group: outbound webhooks of key owners (issue 24, point 2; lib/webhooks). */
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { WEBHOOK_STATES } from "../../../lib/webhooks/repo.ts";
import type { Viewer } from "../../../lib/webhooks/service.ts";
import { requireDb } from "../../require-db.ts";
import {
  CreatedNext,
  createdListQuery,
  DateTime,
  NoBody,
  Nullable,
  problemOf,
  StringEnum,
} from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const TAGS = ["Webhook"];

export const WEBHOOKS_DOC = `Outbound webhooks: the service POSTs the events matching a filter (the filters of \`/events/all\`) to
your URL, in batches, in id order, with the pollers' guarantee: a webhook is a poller of \`/events/all?poll=1\` that the
service drives from its cursor \`after_id\`, under the same watermark.

**Body.** \`{ "webhook_id": "…", "events": [ … ] }\`, \`application/json\`: up to WEBHOOK_BATCH (default 100) events,
each as \`/events/all\` serves it, oldest first. Reorg notices (category \`chain\`) arrive in order like any event; a
filtered webhook gets those about events of its filter, naming only those events at or below its position.

**Signature** (Standard Webhooks, standardwebhooks.com). Headers \`webhook-id\` (the message id: the same on every
attempt of one batch, different for the next), \`webhook-timestamp\` (Unix seconds of this attempt) and
\`webhook-signature: v1,<base64 HMAC-SHA256>\` over \`<webhook-id>.<webhook-timestamp>.<body>\`, keyed with the
base64-decoded part of your secret after \`whsec_\`. The secret is answered once, by the create call, and never
again (it is stored to sign; delete and create the webhook to change it). Verify the signature over the raw body,
compare in constant time and refuse a timestamp far from your clock (the reference libraries allow 5 minutes);
the repository's docs/webhooks.md has a Node example.

**Delivery and retries.** Any 2xx answered within WEBHOOK_TIMEOUT_MS (default 10 s) acknowledges the batch: the
cursor \`after_id\` moves to its last event and the next batch follows (at once when the batch was full, otherwise
when new events are served: the job workers look every WEBHOOK_WAKE_MS, default 200 ms; at the latest after
WEBHOOK_POLL_S, default 5 s). Anything else (another status, redirects included; a timeout; a refused
connection; an address refused as below) is a failed attempt: logged, and the same batch with the same
\`webhook-id\` is sent again after an exponential backoff (WEBHOOK_RETRY_DELAY_S × 2^n, times 1 to 2 for jitter; by
default 10 s, 20 s, 40 s, …). The cursor never moves ahead of a 2xx. Delivery is at least once: a batch may arrive
again (a lost answer, a worker that died mid-request), so deduplicate by \`webhook-id\` or by the events' ids, which
only grow.

**Automatic disabling.** When one batch fails WEBHOOK_RETRY_LIMIT + 1 times in a row (default 13 attempts,
spread over about 11 to 23 hours with the default delays) the webhook is \`disabled\` with \`disabled_reason\`
naming the last error; nothing is sent until the owner re-enables it (\`POST /webhooks/{webhookid}/enable\`), which
resets the failures and resumes from the cursor with the same pending batch. An outage of the service's own stores
does not count as a failure.

**Addresses.** \`http\` and \`https\` only. The host is resolved (every address) when the webhook is created and
again before every delivery, and the connection goes to the addresses checked. A loopback, private (10/8,
172.16/12, 192.168/16, 100.64/10, fc00::/7), link-local (169.254/16, fe80::/10), unspecified, multicast or reserved
address is refused: 400 \`webhook_url_refused\` naming \`url\` at creation, a failed attempt at delivery (DNS may
change). An operator allows ranges with WEBHOOK_ALLOWED_CIDRS.

**Owners.** A webhook belongs to the owner (\`user_id\`) of the key that created it: any key of that owner sees and
manages it, an admin key sees all; another owner's webhook answers 404. WEBHOOK_MAX_PER_OWNER (default 20) per owner
(409 \`too_many_webhooks\` beyond). Deliveries run on the job workers (\`start\`, \`process jobs\`; any number of
processes, one batch in flight per webhook).`;

const Filters = Type.Object(
  {
    dapp_id: Type.Optional(Type.String({ maxLength: 100, description: "As `dapp_id` of `/events/all`." })),
    address: Type.Optional(Type.String({ maxLength: 100, description: "As `address` of `/events/all`." })),
    token_address: Type.Optional(
      Type.String({ maxLength: 100, description: "As `token_address` of `/events/all`." }),
    ),
    category: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 32,
        description: "Any of these categories (the comma-separated `category` of `/events/all`).",
      }),
    ),
    sub_kind: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 32,
        description: "Any of these sub kinds (the comma-separated `sub_kind` of `/events/all`).",
      }),
    ),
  },
  { additionalProperties: false, description: "Which events to deliver; none: every event." },
);

const WebhookSchema = Type.Object(
  {
    webhook_id: Type.String({ format: "uuid" }),
    user_id: Type.String({ description: "Owner: the `user_id` of the key that created it." }),
    key_id: Type.String({ description: "The key that created it." }),
    url: Type.String(),
    filters: Type.Object(
      {
        dapp_id: Type.Optional(Type.String()),
        address: Type.Optional(Type.String()),
        token_address: Type.Optional(Type.String()),
        category: Type.Optional(Type.Array(Type.String())),
        sub_kind: Type.Optional(Type.Array(Type.String())),
      },
      { description: "The filters as stored (trimmed, empty ones dropped)." },
    ),
    after_id: Type.String({
      description:
        "Cursor: the last event id a 2xx acknowledged (or the start); delivery continues after it.",
    }),
    pending_last_id: Nullable(
      Type.String({
        description: "Last event id of the batch being sent (retried until a 2xx); null between batches.",
      }),
    ),
    state: StringEnum(WEBHOOK_STATES, {
      description: "`active` delivers; `disabled` after a run of failures or by its owner.",
    }),
    failures: Type.Integer({ description: "Failed attempts since the last 2xx." }),
    last_error: Nullable(Type.String({ description: "Error of the last failed attempt; cleared by a 2xx." })),
    disabled_reason: Nullable(Type.String()),
    disabled_at: Nullable(DateTime()),
    last_success_at: Nullable(DateTime("Time of the last 2xx.")),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: "Webhook", title: "Webhook" },
);

const DeliverySchema = Type.Object(
  {
    delivery_id: Type.Integer({ description: "Grows with each attempt; the `before` cursor." }),
    message_id: Type.String({ description: "The `webhook-id` header sent (one per batch)." }),
    first_event_id: Type.String(),
    last_event_id: Type.String(),
    event_count: Type.Integer(),
    attempt: Type.Integer({ description: "Attempt at this batch: 1 first, then each retry." }),
    ok: Type.Boolean({ description: "True for a 2xx." }),
    status: Nullable(Type.Integer({ description: "HTTP status; null when no response came." })),
    error: Nullable(
      Type.String({
        description:
          "Why the attempt failed: `HTTP <status>`, `timeout: …`, `refused: …` (address policy), or the connection error.",
      }),
    ),
    latency_ms: Type.Integer({
      description: "From the request start to the end of the response (or the failure).",
    }),
    created_at: DateTime(),
  },
  { $id: "WebhookDelivery", title: "WebhookDelivery" },
);

const IdParams = Type.Object({
  webhookid: Type.String({ format: "uuid", description: "Webhook id (`webhook_id`)." }),
});
const Result = Type.Object({ ok: Type.Boolean(), webhook: Type.Ref("Webhook") });

function viewer(request: FastifyRequest): Viewer {
  const key = request.apiKey!;
  return { user_id: key.user_id, key_id: key.key_id, level: key.level };
}

export async function webhookRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(WebhookSchema);
  app.addSchema(DeliverySchema);
  const hooks = () => need("webhooks");
  const access = { access: "user" as const, db: "required" as const };

  app.post(
    "/webhooks",
    {
      config: access,
      schema: {
        tags: TAGS,
        summary: "Register a webhook (the signing secret is answered once)",
        description: `${WEBHOOKS_DOC}\n\nThe answer holds \`secret\` (\`whsec_\` + base64 of 32 random bytes): keep it, it is never shown again. Without \`after_id\` delivery starts at the watermark (events from now on); \`after_id=0\` starts at the first event.`,
        body: Type.Object(
          {
            url: Type.String({
              minLength: 1,
              maxLength: 2048,
              description: "Where to POST: http(s), resolving to public addresses only (see above).",
            }),
            filters: Type.Optional(Filters),
            after_id: Type.Optional(
              Type.String({
                pattern: "^[0-9-]{1,64}$",
                description:
                  "Deliver the events after this id (`0`: from the first); default: from the watermark.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            ok: Type.Boolean(),
            webhook: Type.Ref("Webhook"),
            secret: Type.String({ description: "The signing secret, shown this once." }),
          }),
          409: problemOf("The owner already has WEBHOOK_MAX_PER_OWNER webhooks."),
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const created = await hooks().create(viewer(request), {
        url: b.url,
        ...(b.filters ? { filters: b.filters } : {}),
        ...(b.after_id !== undefined ? { afterId: b.after_id } : {}),
      });
      return reply.code(201).send({ ok: true, ...created });
    },
  );

  app.get(
    "/webhooks",
    {
      config: access,
      schema: {
        tags: TAGS,
        summary: "List webhooks, newest first (an owner's own; an admin key: all)",
        description: `${WEBHOOKS_DOC}\n\nPages newest first by creation; pass \`next\` back as \`cursor\`.`,
        querystring: Type.Object(createdListQuery("Webhooks"), { additionalProperties: false }),
        response: {
          200: Type.Object({
            webhooks: Type.Array(Type.Ref("Webhook")),
            next: CreatedNext,
          }),
        },
      },
    },
    async (request) =>
      hooks().list(viewer(request), {
        limit: request.query.limit,
        ...(request.query.cursor ? { cursor: request.query.cursor } : {}),
      }),
  );

  app.get(
    "/webhooks/:webhookid",
    {
      config: access,
      schema: {
        tags: TAGS,
        summary: "Show a webhook: its cursor, pending batch, state and last error",
        description: "404 for an unknown webhook and for another owner's (unless the key is an admin key).",
        params: IdParams,
        response: {
          200: Result,
          404: problemOf("No such webhook, or another owner's (unless the key is an admin key)."),
        },
      },
    },
    async (request) => ({ ok: true, webhook: await hooks().get(viewer(request), request.params.webhookid) }),
  );

  app.post(
    "/webhooks/:webhookid/delete",
    {
      config: access,
      schema: {
        tags: TAGS,
        summary: "Delete a webhook and its delivery log",
        description:
          "Nothing is sent after this answer, except a batch already being POSTed, whose result is then dropped. 404 for an unknown webhook or another owner's.",
        params: IdParams,
        body: NoBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), webhook_id: Type.String({ format: "uuid" }) }),
          404: problemOf("No such webhook, or another owner's (unless the key is an admin key)."),
        },
      },
    },
    async (request) => {
      await hooks().remove(viewer(request), request.params.webhookid);
      return { ok: true, webhook_id: request.params.webhookid };
    },
  );

  app.post(
    "/webhooks/:webhookid/enable",
    {
      config: access,
      schema: {
        tags: TAGS,
        summary: "Re-enable a disabled webhook",
        description:
          "Resets the failures and starts delivering again from the cursor (`after_id`), the pending batch first with its `webhook-id`. Enabling an active webhook changes nothing. 404 for an unknown webhook or another owner's.",
        params: IdParams,
        body: NoBody,
        response: {
          200: Result,
          404: problemOf("No such webhook, or another owner's (unless the key is an admin key)."),
        },
      },
    },
    async (request) => ({
      ok: true,
      webhook: await hooks().enable(viewer(request), request.params.webhookid),
    }),
  );

  app.post(
    "/webhooks/:webhookid/disable",
    {
      config: access,
      schema: {
        tags: TAGS,
        summary: "Pause a webhook",
        description:
          "Stops deliveries (a batch already being POSTed completes, but its answer moves nothing); the cursor stays, so `enable` resumes where it stopped. Disabling a disabled webhook changes nothing. 404 for an unknown webhook or another owner's.",
        params: IdParams,
        body: NoBody,
        response: {
          200: Result,
          404: problemOf("No such webhook, or another owner's (unless the key is an admin key)."),
        },
      },
    },
    async (request) => ({
      ok: true,
      webhook: await hooks().disable(viewer(request), request.params.webhookid),
    }),
  );

  app.get(
    "/webhooks/:webhookid/deliveries",
    {
      config: access,
      schema: {
        tags: TAGS,
        summary: "Delivery log of a webhook: each attempt with its status and latency, newest first",
        description:
          "Every POST attempt, 2xx or not: the batch (message id, first and last event id, count), the attempt number at that batch, the HTTP status or the error, and the latency. The newest WEBHOOK_LOG_KEEP (default 1,000) attempts per webhook are kept. Next page: `before` = the last `delivery_id` received. 404 for an unknown webhook or another owner's.",
        params: IdParams,
        querystring: Type.Object(
          {
            limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: "Attempts per page." }),
            before: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 9_007_199_254_740_991,
                description: "Only attempts with a smaller `delivery_id` (the next page).",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ deliveries: Type.Array(Type.Ref("WebhookDelivery")) }),
          404: problemOf("No such webhook, or another owner's (unless the key is an admin key)."),
        },
      },
    },
    async (request) => ({
      deliveries: await hooks().deliveries(viewer(request), request.params.webhookid, {
        limit: request.query.limit,
        ...(request.query.before !== undefined ? { before: request.query.before } : {}),
      }),
    }),
  );
}
