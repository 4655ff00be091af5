/**
 * Wires pipeline processes from one deps bag. In embedded mode every processor and ingest run in
 * one process over the in-process bus; in distributed mode each runs in its own process (same CLI).
 */
import type { Config } from "../lib/config.ts";
import type { Logger } from "../lib/logger.ts";
import type { Metrics } from "../lib/metrics.ts";
import { createBus } from "../lib/stores/bus.ts";
import type { Stores } from "../lib/stores/index.ts";
import type { PipelineDeps } from "./deps.ts";
import { createIngestor, type IngestOptions, type Ingestor, type IngestProgress } from "./ingest/ingest.ts";
import { createNodeClient } from "./ingest/node-client.ts";
import { createCodecs } from "./messages.ts";
import type { Processor, ProcessorFactory } from "./processor.ts";
import type { ProcessorName } from "./processor-names.ts";
import { candlesProcessor } from "./processors/candles.ts";
import { eventsSinkProcessor } from "./processors/events-sink.ts";
import { figuresProcessor } from "./processors/figures.ts";
import { holdersProcessor } from "./processors/holders.ts";
import { holdersRecomputeProcessor } from "./processors/holders-recompute.ts";
import { normalizeProcessor } from "./processors/normalize.ts";
import { paymentsProcessor } from "./processors/payments.ts";
import { rawSinkProcessor } from "./processors/raw-sink.ts";
import { registryProcessor } from "./processors/registry.ts";
import { seriesProcessor } from "./processors/series.ts";
import { seriesRecomputeProcessor } from "./processors/series-recompute.ts";

export type { ProcessorName } from "./processor-names.ts";

/**
 * Every processor by its command-line name (`process <name>`, pipeline/processor-names.ts, in its order); `start`
 * runs them all.
 */
export const PROCESSORS = {
  normalize: normalizeProcessor,
  "raw-sink": rawSinkProcessor,
  "events-sink": eventsSinkProcessor,
  registry: registryProcessor,
  candles: candlesProcessor,
  figures: figuresProcessor,
  payments: paymentsProcessor,
  series: seriesProcessor,
  "series-recompute": seriesRecomputeProcessor,
  holders: holdersProcessor,
  "holders-recompute": holdersRecomputeProcessor,
} as const satisfies Record<ProcessorName, ProcessorFactory>;

export async function createPipelineDeps(
  ctx: { config: Config; log: Logger; metrics: Metrics },
  stores: Stores,
): Promise<PipelineDeps> {
  if (!stores.pg || !stores.ch) throw new Error("The pipeline needs the databases (DATABASES=on)");
  const bus = createBus({
    brokers: ctx.config.KAFKA_BROKERS,
    clientId: ctx.config.KAFKA_CLIENT_ID,
    topicPrefix: ctx.config.KAFKA_TOPIC_PREFIX,
    log: ctx.log,
    produceMaxBytes: ctx.config.KAFKA_PRODUCE_MAX_BYTES,
  });
  return { ...ctx, pg: stores.pg, ch: stores.ch, bus, codecs: await createCodecs(ctx.config) };
}

export function ingestOptions(config: Config, onProgress?: (p: IngestProgress) => void): IngestOptions {
  return {
    startTs: config.INGEST_START_TS,
    confirmations: config.CONFIRMATIONS,
    maxWindowMs: config.INGEST_WINDOW_MS,
    firstWindowMs: config.INGEST_FIRST_WINDOW_MS,
    concurrency: config.INGEST_CONCURRENCY,
    prefetch: config.INGEST_PREFETCH,
    pollMs: config.INGEST_POLL_MS,
    onProgress,
  };
}

export interface RunningPipeline {
  processors: Processor[];
  ingestor: Ingestor | null;
  stop(): Promise<void>;
}

/** Starts the named processors, then (optionally) ingest; `stop` reverses the order. */
export async function startPipeline(
  deps: PipelineDeps,
  options: { processors: ProcessorName[]; ingest: boolean; onProgress?: (p: IngestProgress) => void },
): Promise<RunningPipeline> {
  const processors = options.processors.map((name) => PROCESSORS[name](deps));
  // Consumer groups join in parallel (each Kafka group join waits for the broker's rebalance delay).
  await Promise.all(
    processors.map(async (p) => {
      await p.start();
      deps.log.info({ processor: p.name, bus: deps.bus.kind }, "Processor started.");
    }),
  );
  let ingestor: Ingestor | null = null;
  if (options.ingest) {
    const client = createNodeClient({
      url: deps.config.NODE_URL,
      apiKey: deps.config.NODE_API_KEY,
      log: deps.log,
    });
    ingestor = createIngestor(deps, client, ingestOptions(deps.config, options.onProgress));
    ingestor.start();
    deps.log.info(
      { node: deps.config.NODE_URL, confirmations: deps.config.CONFIRMATIONS },
      "Ingest started.",
    );
  }
  return {
    processors,
    ingestor,
    async stop() {
      await ingestor?.stop();
      for (const p of [...processors].reverse()) await p.stop();
      await deps.bus.close();
    },
  };
}
