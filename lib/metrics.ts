import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** One registry per process (no global default registry), passed down in the deps bag. */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<"method" | "route" | "status">;
  httpDuration: Histogram<"method" | "route">;
  pipelineMessages: Counter<"stage" | "topic">;
  pipelineRows: Counter<"stage" | "table">;
  chainHeight: Gauge<"chain_index">;
  chainLagMs: Gauge<"chain_index">;
  watermarkTs: Gauge;
  tradeFeedLagMs: Gauge<"active">;
  processorBatchSeconds: Histogram<"processor">;
  processorFailures: Counter<"processor" | "retryable">;
  priceSourceUp: Gauge<"source">;
  priceSourceLastOk: Gauge<"source">;
  priceSourceFailures: Counter<"source">;
  decodeErrors: Counter<"decoder" | "event_index">;
  streamConnections: Gauge;
  streamEvents: Counter;
  streamEnds: Counter<"reason">;
  codeHashRefusals: Counter<"contract_address">;
  codeChecks: Counter<"result">;
  ingestPhase: Gauge<"phase">;
  ingestBlocksToGo: Gauge;
  ingestTimeToGoMs: Gauge;
  ingestEtaSeconds: Gauge;
  ingestBlocksPerSecond: Gauge;
  ingestNodeWaitSeconds: Counter;
  processorBlockTs: Gauge<"processor">;
  processorLagMs: Gauge<"processor">;
  sqlQueries: Counter<"outcome">;
  webhooks: Gauge<"state">;
  webhookDeliveries: Counter<"outcome">;
  nftMetadataFetches: Counter<"outcome">;
}

/** Every metric of the service carries this prefix. */
export const METRICS_PREFIX = "alephium_";

export function createMetrics(): Metrics {
  const registry = new Registry();
  return {
    registry,
    httpRequests: new Counter({
      name: `${METRICS_PREFIX}http_requests_total`,
      help: "HTTP requests answered, by route and status.",
      labelNames: ["method", "route", "status"],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: `${METRICS_PREFIX}http_request_duration_seconds`,
      help: "HTTP request duration.",
      labelNames: ["method", "route"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    pipelineMessages: new Counter({
      name: `${METRICS_PREFIX}pipeline_messages_total`,
      help: "Bus messages handled by a pipeline stage.",
      labelNames: ["stage", "topic"],
      registers: [registry],
    }),
    pipelineRows: new Counter({
      name: `${METRICS_PREFIX}pipeline_rows_written_total`,
      help: "Rows written by a pipeline stage.",
      labelNames: ["stage", "table"],
      registers: [registry],
    }),
    chainHeight: new Gauge({
      name: `${METRICS_PREFIX}chain_durable_height`,
      help: "Highest durably written block height per chain.",
      labelNames: ["chain_index"],
      registers: [registry],
    }),
    chainLagMs: new Gauge({
      name: `${METRICS_PREFIX}chain_lag_ms`,
      help: "Time between now and the newest durable block of each chain.",
      labelNames: ["chain_index"],
      registers: [registry],
    }),
    watermarkTs: new Gauge({
      name: `${METRICS_PREFIX}events_watermark_ms`,
      help: "Low watermark (ms) up to which events are served to pollers.",
      registers: [registry],
    }),
    tradeFeedLagMs: new Gauge({
      name: `${METRICS_PREFIX}trade_feed_lag_ms`,
      help: "Time between now and the trade watcher's feed position (label active: whether it bounds the watermark); a growing lag with active=true means a watcher stopped without pausing its feed.",
      labelNames: ["active"],
      registers: [registry],
    }),
    processorBatchSeconds: new Histogram({
      name: `${METRICS_PREFIX}processor_batch_seconds`,
      help: "Time a processor took to handle one batch (successful attempts).",
      labelNames: ["processor"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    processorFailures: new Counter({
      name: `${METRICS_PREFIX}processor_failures_total`,
      help: "Failed attempts to handle a batch, by processor and whether the error was retryable.",
      labelNames: ["processor", "retryable"],
      registers: [registry],
    }),
    priceSourceUp: new Gauge({
      name: `${METRICS_PREFIX}price_source_up`,
      help: "1 when the last poll of an exchange price source succeeded, 0 while it is degraded.",
      labelNames: ["source"],
      registers: [registry],
    }),
    priceSourceLastOk: new Gauge({
      name: `${METRICS_PREFIX}price_source_last_ok_ms`,
      help: "Time (ms) of the last successful poll of an exchange price source.",
      labelNames: ["source"],
      registers: [registry],
    }),
    priceSourceFailures: new Counter({
      name: `${METRICS_PREFIX}price_source_failures_total`,
      help: "Failed polls of an exchange price source (rate limits, errors, bad answers, timeouts).",
      labelNames: ["source"],
      registers: [registry],
    }),
    streamConnections: new Gauge({
      name: `${METRICS_PREFIX}stream_connections`,
      help: "Open /events/stream connections of this API process.",
      registers: [registry],
    }),
    streamEvents: new Counter({
      name: `${METRICS_PREFIX}stream_events_total`,
      help: "Events sent on /events/stream connections of this API process (counted when a stream ends).",
      registers: [registry],
    }),
    streamEnds: new Counter({
      name: `${METRICS_PREFIX}stream_ends_total`,
      help: "/events/stream connections ended, by reason: closed (by the client), caught_up, slow_consumer, shutdown, error.",
      labelNames: ["reason"],
      registers: [registry],
    }),
    decodeErrors: new Counter({
      name: `${METRICS_PREFIX}normalize_decode_errors_total`,
      help: "Contract events a dapp decoder refused (layout mismatch), published as generic events with decode_error.",
      labelNames: ["decoder", "event_index"],
      registers: [registry],
    }),
    codeHashRefusals: new Counter({
      name: `${METRICS_PREFIX}normalize_code_hash_refusals_total`,
      help: "Events of known dapp contracts whose live code is not the code their decoder was written for, published generic (decode_error code_hash_changed); /status lists the contracts.",
      labelNames: ["contract_address"],
      registers: [registry],
    }),
    codeChecks: new Counter({
      name: `${METRICS_PREFIX}normalize_code_checks_total`,
      help: "Known dapp contracts' code hashes read from the node (CODE_HASH_CHECK_INTERVAL_S) by result: match, changed (differs from the code known; /status lists it), baseline (first answer for a contract without an expected hash), absent (the node has no such contract), error (the round stopped).",
      labelNames: ["result"],
      registers: [registry],
    }),
    ingestPhase: new Gauge({
      name: `${METRICS_PREFIX}ingest_phase`,
      help: "1 for ingest's current phase (backfill: whole windows of history behind the node's tip; live: following it), 0 for the other.",
      labelNames: ["phase"],
      registers: [registry],
    }),
    ingestBlocksToGo: new Gauge({
      name: `${METRICS_PREFIX}ingest_blocks_to_go`,
      help: "Blocks the node has (with their confirmations) that ingest has not published yet, over the 16 chains.",
      registers: [registry],
    }),
    ingestTimeToGoMs: new Gauge({
      name: `${METRICS_PREFIX}ingest_time_to_go_ms`,
      help: "Chain time still to publish: the node's newest block time minus ingest's lowest chain cursor.",
      registers: [registry],
    }),
    ingestEtaSeconds: new Gauge({
      name: `${METRICS_PREFIX}ingest_eta_seconds`,
      help: "Estimated time until ingest has published every block: blocks to go at the rate of the last 30 s (absent while unknown).",
      registers: [registry],
    }),
    ingestBlocksPerSecond: new Gauge({
      name: `${METRICS_PREFIX}ingest_blocks_per_second`,
      help: "Blocks ingest published per second over the last 30 s.",
      registers: [registry],
    }),
    ingestNodeWaitSeconds: new Counter({
      name: `${METRICS_PREFIX}ingest_node_wait_seconds_total`,
      help: "Time ingest rounds waited for the node's blocks (blocks-with-events): the node is the bound when this grows nearly as fast as the clock. A window fetched early, while the round before published, counts only the time the round still waited for it.",
      registers: [registry],
    }),
    processorBlockTs: new Gauge({
      name: `${METRICS_PREFIX}processor_block_ts_ms`,
      help: "Timestamp (ms) of the newest block whose messages a processor handled.",
      labelNames: ["processor"],
      registers: [registry],
    }),
    processorLagMs: new Gauge({
      name: `${METRICS_PREFIX}processor_lag_ms`,
      help: "Chain time between ingest's newest published block and a processor's newest handled block.",
      labelNames: ["processor"],
      registers: [registry],
    }),
    sqlQueries: new Counter({
      name: `${METRICS_PREFIX}sql_queries_total`,
      help: "POST /sql queries by outcome: ok, or the error code (sql_table_function, sql_limit_exceeded ...).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    webhooks: new Gauge({
      name: `${METRICS_PREFIX}webhooks`,
      help: "Webhooks by state (active, disabled: retries exhausted or disabled by their owner), read from PostgreSQL when /metrics is read.",
      labelNames: ["state"],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: `${METRICS_PREFIX}webhook_deliveries_total`,
      help: "Webhook delivery attempts by outcome (ok: a 2xx answer; failed: an error, a timeout or another status).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    nftMetadataFetches: new Counter({
      name: `${METRICS_PREFIX}nft_metadata_fetches_total`,
      help: "NFT token and collection URI fetches by outcome (ok: a JSON document read; failed: an error, a timeout, too large or not JSON; refused: a scheme or an address the fetcher refuses).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
  };
}
