/** Documentation and operations: /openapi.json, /healthz, /readyz, /metrics. */

import { Type } from "@sinclair/typebox";
import { type Progress, readProgress } from "../../../lib/events/reader.ts";
import {
  type ProgressView,
  progressView,
  readPipelineProgress,
  setProgressGauges,
} from "../../../lib/pipeline-progress.ts";
import { staleWhileRevalidate } from "../../../lib/stale.ts";
import {
  codeHashChanges,
  priceSourcesStatus,
  recentDecodeErrors,
  refreshWebhookGauge,
} from "../../../lib/status.ts";
import { requireDb } from "../../require-db.ts";
import { StringEnum } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

/** Per-chain durable height, lag and the poll watermark, as gauges and as the /status body. */
async function refreshChainGauges(deps: ApiDeps, read: () => Promise<Progress>) {
  if (!deps.ch) return null;
  const progress = await read();
  const now = Date.now();
  for (const c of progress.chains) {
    deps.metrics.chainHeight.set({ chain_index: String(c.chain_index) }, c.height);
    deps.metrics.chainLagMs.set({ chain_index: String(c.chain_index) }, now - c.block_ts);
  }
  deps.metrics.watermarkTs.set(progress.watermark);
  if (progress.feed) {
    deps.metrics.tradeFeedLagMs.reset();
    deps.metrics.tradeFeedLagMs.set({ active: String(progress.feed.active) }, now - progress.feed.position);
  }
  return { ...progress, now };
}

function tailStatus(deps: ApiDeps) {
  const tail = deps.events?.tail;
  if (!tail) return null;
  const { events, low, reloads } = tail.stats();
  return { events, capacity: deps.config.EVENTS_TAIL_CACHE, low, reloads };
}

export async function metaRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  // /status reads the stores through one shared refresh (EVENTS_WATERMARK_CACHE_MS, like the watermark): past it,
  // the last read is answered while one background read replaces it, so /status does not queue behind ingest.
  const cached = { ttlMs: deps.config.EVENTS_WATERMARK_CACHE_MS };
  const progress = staleWhileRevalidate(() => readProgress(need("ch")), cached);
  const sources = staleWhileRevalidate(
    () => (deps.pg ? priceSourcesStatus(deps.pg) : Promise.resolve([])),
    cached,
  );
  const codeHashes = staleWhileRevalidate(
    () => (deps.pg ? codeHashChanges(deps.pg) : Promise.resolve([])),
    cached,
  );
  // A scan of a week of events' payloads: read at most every 10 s, whatever /status's polling.
  const decodeErrors = staleWhileRevalidate(
    async () => (deps.ch && deps.events ? recentDecodeErrors(deps.ch, await deps.events.watermark()) : []),
    { ttlMs: 10_000 },
  );
  const pipeline = staleWhileRevalidate(async (): Promise<ProgressView | null> => {
    if (!deps.pg) return null;
    const view = progressView(await readPipelineProgress(deps.pg));
    setProgressGauges(deps.metrics, view);
    return view;
  }, cached);
  app.get(
    "/openapi.json",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "OpenAPI 3.0 description of this API",
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => app.swagger(),
  );

  app.get(
    "/healthz",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "Liveness: the process answers",
        response: { 200: Type.Object({ status: StringEnum(["ok"]) }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  const StoreState = StringEnum(["ok", "down", "off"]);
  const Ready = Type.Object({
    status: StringEnum(["ok", "degraded"]),
    postgres: StoreState,
    clickhouse: StoreState,
  });
  app.get(
    "/readyz",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "Readiness: checks each store with a trivial query",
        description:
          "200 when every configured store answers (stores switched off count as ready), else 503.",
        response: { 200: Ready, 503: Ready },
      },
    },
    async (_request, reply) => {
      const check = async (fn: (() => Promise<unknown>) | null) => {
        if (!fn) return "off" as const;
        try {
          await fn();
          return "ok" as const;
        } catch {
          return "down" as const;
        }
      };
      const { pg, ch } = deps;
      const postgres = await check(pg ? () => pg.query("readyz", "SELECT 1") : null);
      const clickhouse = await check(ch ? () => ch.query("readyz", "SELECT 1") : null);
      const ok = postgres !== "down" && clickhouse !== "down";
      return reply.code(ok ? 200 : 503).send({ status: ok ? "ok" : "degraded", postgres, clickhouse });
    },
  );

  const ChainStatus = Type.Object({
    chain_index: Type.Integer(),
    height: Type.Integer({ description: "Highest block whose events are durably written." }),
    block_hash: Type.String(),
    block_ts: Type.Integer({ description: "Timestamp of that block (ms)." }),
    lag_ms: Type.Integer({ description: "now - block_ts." }),
  });
  const PriceSourceStatus = Type.Object({
    id: Type.String({ description: "Price source id (the exchange's ccxt id)." }),
    status: StringEnum(["ok", "degraded"], {
      description: "`degraded` while polls of the source fail (rate limit, errors, bad answers, timeouts).",
    }),
    last_ok_at: Type.Union([Type.Integer(), Type.Null()], { description: "Last successful poll (ms)." }),
    last_error: Type.Union([Type.String(), Type.Null()], { description: "The last failure." }),
    last_error_at: Type.Union([Type.Integer(), Type.Null()], { description: "When it happened (ms)." }),
  });
  const ProcessorProgress = Type.Object({
    name: Type.String({ description: "Processor name (`process <name>`)." }),
    block_ts: Type.Integer({ description: "Timestamp (ms) of the newest block whose messages it handled." }),
    lag_ms: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "Chain time between ingest's newest published block and `block_ts` (0: caught up); null before ingest first saved its progress.",
    }),
    updated_at: Type.Integer({ description: "When it last saved its progress (ms; at most once a second)." }),
  });
  const NullableInt = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });
  const PipelineProgress = Type.Object(
    {
      phase: StringEnum(["backfill", "live", "unknown"], {
        description:
          "`backfill` while whole windows of history are behind the node's tip, `live` once ingest follows it; `unknown` before ingest first saved its progress.",
      }),
      blocks_to_go: NullableInt(
        "Blocks the node has (with CONFIRMATIONS on top) that ingest has not published yet, over the 16 chains; null until every chain has a cursor.",
      ),
      time_to_go_ms: NullableInt(
        "Chain time still to publish: the newest block time seen at the node minus the lowest chain cursor (0 with no block to go).",
      ),
      eta_ms: NullableInt(
        "Estimated time until every block is published: blocks_to_go at the rate of the last 30 s; null while unknown.",
      ),
      blocks_per_s: Type.Union([Type.Number(), Type.Null()], {
        description: "Blocks ingest published per second over the last 30 s.",
      }),
      start_ts: NullableInt("Backfill start (ms)."),
      cursor_ts: NullableInt("Lowest per-chain cursor time (ms): every block before it is published."),
      tip_ts: NullableInt("Newest block time seen at the node (ms)."),
      updated_at: NullableInt("When ingest last saved its progress (ms)."),
      processors: Type.Array(ProcessorProgress, {
        description: "Each processor that handled a batch, by name.",
      }),
    },
    {
      description:
        "Backfill progress: ingest's phase, what it still has to publish and each processor's lag, as ingest and the processors last saved them (ingest_progress, processor_progress), read in the same background refresh as the chains.",
    },
  );
  app.get(
    "/status",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Docs"],
        summary: "Indexer status: per-chain durable position and lag, and the poll watermark",
        description:
          "`progress` gives the backfill's phase, the blocks and chain time still to go, the ETA and each processor's lag. `watermark` is the oldest of the 16 chains' newest durable block timestamps, and not later than the trade watcher's feed position while the watcher runs (`trade_feed`); /events/all serves events up to it. It is 0 until every chain has a position. The positions and the price sources' health are read at most `EVENTS_WATERMARK_CACHE_MS` (200 ms) before; past that, the previous read is answered while one new read runs (never more than 10 s past), so `/status` never waits behind ingest.",
        response: {
          200: Type.Object({
            now: Type.Integer(),
            watermark: Type.Integer(),
            watermark_lag_ms: Type.Union([Type.Integer(), Type.Null()]),
            confirmations: Type.Integer({
              description: "Blocks on top of a block before ingest publishes it.",
            }),
            chains: Type.Array(ChainStatus),
            progress: PipelineProgress,
            trade_feed: Type.Union(
              [
                Type.Object({
                  position: Type.Integer({
                    description:
                      "Every market event (exchange fill, EVM pool swap) with an id up to this time (ms) is written; later ones get later ids.",
                  }),
                  active: Type.Boolean({
                    description:
                      "True while the trade watcher runs: the watermark is then at most `position`. A watcher stopped cleanly leaves it false.",
                  }),
                  lag_ms: Type.Integer({ description: "now − position." }),
                  updated_at: Type.Integer({ description: "When the watcher last wrote its position (ms)." }),
                }),
                Type.Null(),
              ],
              { description: "The trade watcher's events feed; null when no watcher ever ran." },
            ),
            price_sources: Type.Array(PriceSourceStatus, {
              description:
                "Exchange price sources (kind `cex`) and EVM pool sources (`uniswap`, `pancakeswap`, once polled), and the health of their polling.",
            }),
            recent_decode_errors: Type.Array(
              Type.Object({
                id: Type.String({ description: "The generic event's id." }),
                dapp_id: Type.String(),
                contract_address: Type.String(),
                contract_event_index: NullableInt("The contract event index."),
                decoder: Type.String({ description: "The decoder that refused the event." }),
                reason: Type.String({
                  description:
                    "Its `decode_error`: a field count or type the layout does not have, `code_hash_changed`, …",
                }),
                timestamp: Type.Integer({ description: "Block time (ms)." }),
              }),
              {
                description:
                  "The newest main-chain events of the 7 days of block time before the watermark a dapp decoder refused (at most 10, newest first), published generic with a `decode_error` in their payload (counted in `alephium_normalize_decode_errors_total`). Read at most every 10 s.",
              },
            ),
            code_hash_changes: Type.Array(
              Type.Object({
                contract_address: Type.String(),
                dapp_id: Type.String(),
                label: Type.String({ description: "The built-in list's label, or empty." }),
                expected_code_hash: Type.String({
                  description:
                    "The code its decoder's layout was read from (artifact, the operator's row, or the node's first answer for a contract with neither).",
                }),
                live_code_hash: Type.String({
                  description:
                    "The code it runs now (blake2b-256 of the bytecode): from a block that migrated it, or from the node's contract state.",
                }),
                since_ts: Type.Integer({
                  description:
                    "Time (ms) from which its events are refused: the migrating block's time, or the node check's time (blocks published before it keep their decoding).",
                }),
                source: StringEnum(["migration", "node"], {
                  description:
                    "How the change was learned: a block's event carried the new code (`migration`), or the node's contract state differed at a check (`node`, CODE_HASH_CHECK_INTERVAL_S).",
                }),
              }),
              {
                description:
                  'Known dapp contracts upgraded to code their decoder was not written for: their events are published generic with `decode_error: "code_hash_changed"` (counted in `alephium_normalize_decode_errors_total`) until an operator registers the new layout, a `decoder_contracts` row with the new `code_hash` (docs/dapps.md).',
              },
            ),
            events_tail: Type.Union(
              [
                Type.Object({
                  events: Type.Integer({ description: "Events held." }),
                  capacity: Type.Integer({ description: "EVENTS_TAIL_CACHE." }),
                  low: Type.Union([Type.String(), Type.Null()], {
                    description:
                      "Ids above this one are held (empty: from the first event; null: not loaded yet).",
                  }),
                  reloads: Type.Integer({ description: "Full loads since start (first load and rewrites)." }),
                }),
                Type.Null(),
              ],
              {
                description:
                  "This API process's in-memory tail of the newest events (null when EVENTS_TAIL_CACHE is 0).",
              },
            ),
          }),
        },
      },
    },
    async () => {
      const [p, priceSources, pipelineProgress, codeHashChangesNow, decodeErrorsNow] = await Promise.all([
        refreshChainGauges(deps, progress),
        sources(),
        pipeline(),
        codeHashes(),
        decodeErrors(),
      ]);
      const now = p?.now ?? Date.now();
      return {
        now,
        watermark: p?.watermark ?? 0,
        watermark_lag_ms: p?.watermark ? now - p.watermark : null,
        confirmations: deps.config.CONFIRMATIONS,
        chains: (p?.chains ?? []).map((c) => ({ ...c, lag_ms: now - c.block_ts })),
        progress: pipelineProgress ?? progressView({ ingest: null, processors: [] }),
        trade_feed: p?.feed ? { ...p.feed, lag_ms: now - p.feed.position } : null,
        price_sources: priceSources,
        code_hash_changes: codeHashChangesNow,
        recent_decode_errors: decodeErrorsNow,
        events_tail: tailStatus(deps),
      };
    },
  );

  app.get(
    "/metrics",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "Prometheus metrics (text exposition format)",
        response: {
          200: {
            description: "Prometheus text exposition format.",
            content: { "text/plain": { schema: Type.String() } },
          },
        },
      },
    },
    async (_request, reply) => {
      if (deps.ch) await refreshChainGauges(deps, progress).catch(() => undefined);
      await pipeline().catch(() => undefined);
      if (deps.pg) await refreshWebhookGauge(deps.pg, deps.metrics).catch(() => undefined);
      reply.type(deps.metrics.registry.contentType);
      return deps.metrics.registry.metrics();
    },
  );
}
