/** `GET /events/stream`: the events of `/events/all` pushed as Server-Sent Events (lib/events/stream.ts). */
import { Type } from "@sinclair/typebox";
import { AppError, badRequest } from "../../../lib/errors.ts";
import { responseSink, serveStream, streamSettings } from "../../../lib/events/stream.ts";
import { requireDb } from "../../require-db.ts";
import type { ApiDeps, App } from "../../types.ts";

const EVENT_ID = /^[0-9-]{1,64}$/;

/** A comma-separated filter as its non-empty items, or undefined when it has none. */
function commaList(v: string | undefined): string[] | undefined {
  const items = v
    ?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return items?.length ? items : undefined;
}

const DESCRIPTION = `The events of \`/events/all\` pushed as they pass the watermark, as Server-Sent Events
(\`text/event-stream\`): each event is one message whose \`data\` is the event's JSON (as in \`/events/all\`) and whose
\`id\` is the event id. Same filters as \`/events/all\`.

**Resuming.** A client that reconnects with \`Last-Event-ID\` (browsers' \`EventSource\` sends it by itself) or with
\`after_id\` gets every matching event after that id exactly once, in id order, across reconnects, API restarts and
replays: the pollers' guarantee, from the same watermark. \`Last-Event-ID\` wins over \`after_id\`. With neither, the
stream starts at the watermark (new events only); \`after_id=0\` starts at the first event.

**Reorgs** deeper than the ingest's confirmations arrive as reorg notices in the stream, in order (as in
\`/events/all\`); a filtered stream gets those about events of its filters, naming only those events at or below
its position.

**Connection.** A \`retry:\` hint (STREAM_RETRY_MS) opens the stream; a comment line (\`: keep-alive\`) follows any
STREAM_HEARTBEAT_MS without data. A client that reads too slowly (STREAM_BUFFER_BYTES unsent, or a write not drained
within STREAM_DRAIN_MS) gets a final \`end\` event \`{ reason: "slow_consumer", resume_after_id, detail }\` and is
disconnected; an API process that stops sends \`end\` with \`reason: "shutdown"\`. Reconnect after \`resume_after_id\`.

**Limits.** Open streams per key and API process by plan (STREAM_CONNECTIONS: free 1, pro 10, enterprise 100 by
default); one more answers 429 \`too_many_streams\`. Each request counts once against the key's rate limit.

**Browsers.** The browser's own \`EventSource\` cannot send headers: give the key as \`api_key\` in the query instead
(\`new EventSource("https://api.example/events/stream?api_key=" + KEY)\`), taken only when neither key header is sent.
From a page on another origin this is a CORS request like any other: the key's \`allowed_origins\` (when not empty)
must list the page's origin. A key in a URL can end up in proxies' and browsers' histories: give pages a key
restricted to their origins. This API writes \`api_key=***\` in its own request log.

**Client.** Outside browsers, the \`eventsource\` npm package (v4) is the same WHATWG EventSource with a \`fetch\`
option that adds the key's headers:

\`\`\`js
// npm install eventsource (v4: the WHATWG EventSource for Node 20+ and browsers, with a fetch option for the key).
import { EventSource } from "eventsource";

const KEY = process.env.API_KEY;
// after_id: the last id you stored (or 0 for everything); on reconnect Last-Event-ID takes over.
const source = new EventSource(\`https://api.example/events/stream?dapp_id=ayin&after_id=\${lastStoredId}\`, {
  fetch: (url, init) =>
    fetch(url, { ...init, headers: { ...init.headers, "x-api-key": KEY, authorization: \`Bearer \${KEY}\` } }),
});
// A dropped connection is retried after the \`retry:\` hint with Last-Event-ID, sent by EventSource itself.
source.onmessage = (message) => store(message.lastEventId, JSON.parse(message.data));
source.addEventListener("end", (message) => {
  const { reason } = JSON.parse(message.data); // shutdown or slow_consumer: EventSource reconnects
  if (reason === "caught_up") source.close(); // with until_caught_up=1: everything under the watermark was sent
});
\`\`\``;

export async function eventStreamRoutes(app: App, deps: ApiDeps): Promise<void> {
  const c = deps.config;
  const need = requireDb(deps);
  const settings = streamSettings(c);
  const limits = new Map(Object.entries(c.STREAM_CONNECTIONS));

  app.get(
    "/events/stream",
    {
      config: { access: "user", db: "required", keyInQuery: true },
      schema: {
        tags: ["Events"],
        summary: "Live normalized events as Server-Sent Events, resumable with Last-Event-ID",
        description: DESCRIPTION,
        headers: Type.Object({
          "last-event-id": Type.Optional(
            Type.String({
              maxLength: 64,
              description: "Last event id received (sent by EventSource on reconnect).",
            }),
          ),
        }),
        querystring: Type.Object(
          {
            after_id: Type.Optional(
              Type.String({ pattern: "^[0-9-]{1,64}$", description: "Deliver events after this id." }),
            ),
            until_caught_up: Type.Optional(
              Type.Unsafe<"0" | "1">({
                type: "string",
                enum: ["0", "1"],
                description:
                  '`1`: end with an `end` event `{ reason: "caught_up", resume_after_id }` once every event under the watermark was sent (a batch reader, `curl`), instead of waiting for new ones.',
              }),
            ),
            api_key: Type.Optional(
              Type.String({
                maxLength: 200,
                description:
                  "The API key, for browsers' EventSource (which cannot send headers); used only when neither key header is sent.",
              }),
            ),
            dapp_id: Type.Optional(Type.String({ maxLength: 100 })),
            address: Type.Optional(Type.String({ maxLength: 100 })),
            token_address: Type.Optional(Type.String({ maxLength: 100 })),
            category: Type.Optional(Type.String({ maxLength: 500, description: "Comma-separated list." })),
            sub_kind: Type.Optional(Type.String({ maxLength: 500, description: "Comma-separated list." })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: {
            description:
              "An endless `text/event-stream`: `id:` and `data:` per event, `event: end` before a cut.",
            content: { "text/event-stream": { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      const lastEventId = request.headers["last-event-id"];
      if (lastEventId !== undefined && !EVENT_ID.test(lastEventId)) {
        throw badRequest(`last-event-id ${JSON.stringify(lastEventId.slice(0, 80))} is not an event id`, {
          field: "last-event-id",
        });
      }
      const key = request.apiKey;
      const plan = key?.plan_id ?? "";
      const allowed = limits.get(plan) ?? c.STREAM_CONNECTIONS_OTHER;
      const release = need("streamHub").acquire(key?.key_id ?? `ip:${request.ip}`, allowed);
      if (!release) {
        throw new AppError(
          "too_many_streams",
          `This key already has ${allowed} open event stream(s), the limit of plan ${plan || "(none)"}; close one first.`,
          { status: 429, details: { limit: allowed } },
        );
      }
      const q = request.query;
      const category = commaList(q.category);
      const subKind = commaList(q.sub_kind);
      const filters = {
        ...(q.dapp_id ? { dapp_id: q.dapp_id } : {}),
        ...(q.address ? { address: q.address } : {}),
        ...(q.token_address ? { token_address: q.token_address } : {}),
        ...(category ? { category } : {}),
        ...(subKind ? { sub_kind: subKind } : {}),
      };
      const raw = reply.raw;
      reply.hijack();
      raw.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-accel-buffering": "no",
        "x-request-id": request.id,
      });
      // node:http keeps the header block it built (`headersSent` reads it) for the response's life, as a rope of a
      // few pieces per header: about 2.9 KB for these 480 characters, on every open stream. Reading a character
      // flattens it in place (0.5 KB). A no-op if node stops keeping it.
      const block = (raw as unknown as { _header?: unknown })._header;
      if (typeof block === "string") block.charCodeAt(0);
      const sink = responseSink(raw, settings.drainMs);
      deps.metrics.streamConnections.inc();
      // Not awaited, and no named closure: the handler returns once the stream is open, so neither its frame nor
      // Fastify's wait on it stays for the connection's life (the stream's own loop is what an open connection keeps).
      void serveStream(need("streamHub"), need("events"), settings, {
        filters,
        afterId: lastEventId ?? q.after_id ?? null,
        untilCaughtUp: q.until_caught_up === "1",
        sink,
      })
        .then(
          (result) => {
            request.log.info({ delivered: result.delivered, reason: result.reason }, "Event stream ended.");
            deps.metrics.streamEvents.inc(result.delivered);
            return result.reason;
          },
          (error: unknown) => {
            request.log.warn({ err: error }, "Event stream failed.");
            sink.write(
              `event: end\ndata: ${JSON.stringify({ reason: "error", detail: "The stream failed; reconnect with Last-Event-ID." })}\n\n`,
            );
            sink.end();
            return "error";
          },
        )
        .then((reason) => {
          deps.metrics.streamEnds.inc({ reason });
          deps.metrics.streamConnections.dec();
          release();
        });
    },
  );
}
