/**
 * Where the pipeline stands, for /status and the metrics: ingest's phase and what it still has to publish
 * (`ingest_progress`, written by ingest after its rounds), and the newest block each processor handled
 * (`processor_progress`, what the processors of a process handled, written together at most once a second). The API reads both in one
 * background refresh and answers from memory.
 */
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics.ts";
import type { Pg } from "./stores/postgres.ts";

export type IngestPhase = "backfill" | "live";

export interface IngestProgressRow {
  phase: IngestPhase;
  /** Backfill start (ms). */
  start_ts: number;
  /** Lowest per-chain cursor timestamp: everything before it is published. */
  cursor_ts: number;
  /** Newest published block timestamp (highest per-chain cursor). */
  published_ts: number;
  /** Newest block timestamp seen at the node. */
  tip_ts: number;
  /**
   * Blocks the node has (with their confirmations) that ingest has not published yet, over the 16 chains; null
   * until every chain has a cursor.
   */
  blocks_to_go: number | null;
  /** Blocks published per second over the last 30 s; null before two rounds. */
  blocks_per_s: number | null;
  updated_at: number;
}

export interface ProcessorProgressRow {
  processor: string;
  /** Timestamp (ms) of the newest block whose messages the processor handled. */
  block_ts: number;
  updated_at: number;
}

export interface PipelineProgress {
  ingest: IngestProgressRow | null;
  processors: ProcessorProgressRow[];
}

export async function saveIngestProgress(pg: Pg, p: IngestProgressRow): Promise<void> {
  await pg.query(
    "ingest_progress_save",
    `INSERT INTO ingest_progress (id, phase, start_ts, cursor_ts, published_ts, tip_ts, blocks_to_go, blocks_per_s, updated_at)
     VALUES (1, $1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (id) DO UPDATE SET phase = EXCLUDED.phase, start_ts = EXCLUDED.start_ts,
       cursor_ts = EXCLUDED.cursor_ts, published_ts = EXCLUDED.published_ts, tip_ts = EXCLUDED.tip_ts,
       blocks_to_go = EXCLUDED.blocks_to_go, blocks_per_s = EXCLUDED.blocks_per_s, updated_at = EXCLUDED.updated_at`,
    [
      p.phase,
      p.start_ts,
      p.cursor_ts,
      p.published_ts,
      p.tip_ts,
      p.blocks_to_go as unknown as number,
      p.blocks_per_s as unknown as number,
      p.updated_at,
    ],
  );
}

/** Records a processor's newest handled block; a row never moves back (several processes may share a group). */
export async function saveProcessorProgress(pg: Pg, p: ProcessorProgressRow): Promise<void> {
  await pg.query(
    "processor_progress_save",
    `INSERT INTO processor_progress (processor, block_ts, updated_at) VALUES ($1, $2, $3)
     ON CONFLICT (processor) DO UPDATE SET block_ts = GREATEST(processor_progress.block_ts, EXCLUDED.block_ts),
       updated_at = EXCLUDED.updated_at`,
    [p.processor, p.block_ts, p.updated_at],
  );
}

export async function readPipelineProgress(pg: Pg): Promise<PipelineProgress> {
  const n = (v: string | number | null): number | null => (v === null ? null : Number(v));
  const ingest = await pg.query<{
    phase: IngestPhase;
    start_ts: string;
    cursor_ts: string;
    published_ts: string;
    tip_ts: string;
    blocks_to_go: string | null;
    blocks_per_s: number | null;
    updated_at: string;
  }>(
    "ingest_progress_read",
    `SELECT phase, start_ts, cursor_ts, published_ts, tip_ts, blocks_to_go, blocks_per_s, updated_at
     FROM ingest_progress WHERE id = 1`,
  );
  const processors = await pg.query<{ processor: string; block_ts: string; updated_at: string }>(
    "processor_progress_read",
    "SELECT processor, block_ts, updated_at FROM processor_progress ORDER BY processor",
  );
  const i = ingest[0];
  return {
    ingest: i
      ? {
          phase: i.phase,
          start_ts: Number(i.start_ts),
          cursor_ts: Number(i.cursor_ts),
          published_ts: Number(i.published_ts),
          tip_ts: Number(i.tip_ts),
          blocks_to_go: n(i.blocks_to_go),
          blocks_per_s: n(i.blocks_per_s),
          updated_at: Number(i.updated_at),
        }
      : null,
    processors: processors.map((r) => ({
      processor: r.processor,
      block_ts: Number(r.block_ts),
      updated_at: Number(r.updated_at),
    })),
  };
}

/** The /status `progress` object. */
export interface ProgressView {
  phase: IngestPhase | "unknown";
  blocks_to_go: number | null;
  time_to_go_ms: number | null;
  eta_ms: number | null;
  blocks_per_s: number | null;
  start_ts: number | null;
  cursor_ts: number | null;
  tip_ts: number | null;
  updated_at: number | null;
  processors: { name: string; block_ts: number; lag_ms: number | null; updated_at: number }[];
}

/** Derived figures: time still to go (tip − cursor), ETA (blocks to go ÷ rate), each processor's lag. */
export function progressView(p: PipelineProgress): ProgressView {
  const i = p.ingest;
  const toGo = i?.blocks_to_go ?? null;
  const eta =
    i === null || toGo === null
      ? null
      : toGo === 0
        ? 0
        : i.blocks_per_s && i.blocks_per_s > 0
          ? Math.round((toGo / i.blocks_per_s) * 1000)
          : null;
  return {
    phase: i?.phase ?? "unknown",
    blocks_to_go: i?.blocks_to_go ?? null,
    time_to_go_ms: i ? (toGo === 0 ? 0 : Math.max(0, i.tip_ts - i.cursor_ts)) : null,
    eta_ms: eta,
    blocks_per_s: i?.blocks_per_s ?? null,
    start_ts: i?.start_ts ?? null,
    cursor_ts: i?.cursor_ts ?? null,
    tip_ts: i?.tip_ts ?? null,
    updated_at: i?.updated_at ?? null,
    processors: p.processors.map((r) => ({
      name: r.processor,
      block_ts: r.block_ts,
      lag_ms: i ? Math.max(0, i.published_ts - r.block_ts) : null,
      updated_at: r.updated_at,
    })),
  };
}

/** Sets the progress gauges from a view (the API after each read; ingest and processors set theirs as they go). */
export function setProgressGauges(metrics: Metrics, v: ProgressView): void {
  if (v.phase !== "unknown") setIngestGauges(metrics, v);
  metrics.processorLagMs.reset();
  for (const p of v.processors) {
    metrics.processorBlockTs.set({ processor: p.name }, p.block_ts);
    if (p.lag_ms !== null) metrics.processorLagMs.set({ processor: p.name }, p.lag_ms);
  }
}

export function setIngestGauges(
  metrics: Metrics,
  v: Pick<ProgressView, "phase" | "blocks_to_go" | "time_to_go_ms" | "eta_ms" | "blocks_per_s">,
): void {
  for (const phase of ["backfill", "live"] as const)
    metrics.ingestPhase.set({ phase }, v.phase === phase ? 1 : 0);
  const set = (g: Metrics["ingestBlocksToGo"], value: number | null) =>
    value === null ? g.reset() : g.set(value);
  set(metrics.ingestBlocksToGo, v.blocks_to_go);
  set(metrics.ingestTimeToGoMs, v.time_to_go_ms);
  set(metrics.ingestEtaSeconds, v.eta_ms === null ? null : v.eta_ms / 1000);
  set(metrics.ingestBlocksPerSecond, v.blocks_per_s);
}

export interface ProcessorProgressRecorder {
  /** Notes the newest block of a handled batch (in memory; written at most every second). */
  record(blockTs: number): void;
  /** Writes what was noted since the last write (this process's other processors' too). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/** The processors' progress rows of one process, written together (one statement a second for all of them). */
interface ProgressWriter {
  pending: Map<string, number>;
  recorders: number;
  timer: NodeJS.Timeout | null;
  writing: Promise<void>;
}
const writers = new WeakMap<Pg, ProgressWriter>();

/** Records processors' newest handled blocks; a row never moves back (several processes may share a group). */
async function saveProcessorsProgress(pg: Pg, rows: [string, number][], updatedAt: number): Promise<void> {
  await pg.query(
    "processor_progress_save",
    `INSERT INTO processor_progress (processor, block_ts, updated_at)
     SELECT p, b, $3 FROM unnest($1::text[], $2::bigint[]) AS x(p, b)
     ON CONFLICT (processor) DO UPDATE SET block_ts = GREATEST(processor_progress.block_ts, EXCLUDED.block_ts),
       updated_at = EXCLUDED.updated_at`,
    [rows.map((r) => r[0]), rows.map((r) => String(r[1])), updatedAt],
  );
}

/**
 * Keeps a processor's progress row current without a write per batch: what every processor of the process noted
 * goes in one statement a second (a statement per processor and second before: 11 processors, about 180 PGlite
 * statements in 90 s of following).
 */
export function createProcessorProgressRecorder(
  deps: { pg: Pg; log: Logger; metrics: Metrics },
  processor: string,
): ProcessorProgressRecorder {
  // Shared by the recorders on one database handle (a caller without one gets its own).
  const shared = typeof deps.pg === "object" && deps.pg !== null;
  let writer = shared ? writers.get(deps.pg) : undefined;
  if (!writer) {
    writer = { pending: new Map(), recorders: 0, timer: null, writing: Promise.resolve() };
    if (shared) writers.set(deps.pg, writer);
  }
  const w = writer;
  const flush = async () => {
    await w.writing;
    if (w.pending.size === 0) return;
    const rows = [...w.pending];
    w.pending.clear();
    w.writing = saveProcessorsProgress(deps.pg, rows, Date.now()).catch((err: unknown) => {
      for (const [name, ts] of rows) w.pending.set(name, Math.max(w.pending.get(name) ?? 0, ts));
      deps.log.warn(
        { err, processors: rows.map((r) => r[0]) },
        "Saving the processors' progress failed; retrying with the next write.",
      );
    });
    await w.writing;
  };
  w.recorders += 1;
  if (!w.timer) {
    w.timer = setInterval(() => void flush(), 1_000);
    w.timer.unref();
  }
  let newest = 0;
  let stopped = false;
  return {
    record(blockTs) {
      if (blockTs <= 0) return;
      newest = Math.max(newest, blockTs);
      w.pending.set(processor, Math.max(w.pending.get(processor) ?? 0, blockTs));
      deps.metrics.processorBlockTs.set({ processor }, newest);
    },
    flush,
    async stop() {
      if (!stopped) {
        stopped = true;
        w.recorders -= 1;
        if (w.recorders === 0 && w.timer) {
          clearInterval(w.timer);
          w.timer = null;
        }
      }
      await flush();
    },
  };
}
