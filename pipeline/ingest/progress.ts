/**
 * Progress of ingest, on a terminal as one status line (cli-progress), otherwise as a log line every
 * `logEveryMs`:
 * - backfill: share of the history published, blocks/s and normalized events/s, ETA;
 * - live: how far the newest published block is behind the node's tip, blocks/s and normalized events/s.
 * Rates are over the last `windowMs` (not lifetime averages), so they describe what happens now.
 * Normalized events (what the API serves) are counted where the events sink runs in the same process;
 * a lone `ingest` process shows blocks only.
 */
import cliProgress from "cli-progress";
import type { Logger } from "../../lib/logger.ts";
import type { IngestProgress } from "./ingest.ts";

export interface ProgressReporter {
  update(p: IngestProgress): void;
  stop(): void;
}

export interface ProgressOptions {
  stream?: NodeJS.WriteStream;
  /** Normalized events written so far in this process; absent when no events sink runs here. */
  events?: () => number;
  now?: () => number;
  windowMs?: number;
  logEveryMs?: number;
}

interface Sample {
  at: number;
  blocks: number;
  events: number;
  cursorTs: number;
}

export function createProgressReporter(log: Logger, options: ProgressOptions = {}): ProgressReporter {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? Date.now;
  const windowMs = options.windowMs ?? 30_000;
  const logEveryMs = options.logEveryMs ?? 10_000;
  const samples: Sample[] = [];
  let bar: cliProgress.SingleBar | null = null;
  let barPhase: IngestProgress["phase"] | null = null;
  let lastLog = Number.NEGATIVE_INFINITY;

  /** Rates between the oldest sample inside the window and this one. */
  const rates = (p: IngestProgress) => {
    const latest = { at: now(), blocks: p.blocks, events: options.events?.() ?? 0, cursorTs: p.cursorTs };
    samples.push(latest);
    while (samples.length > 2 && (samples[1]?.at ?? latest.at) <= latest.at - windowMs) samples.shift();
    const first = samples[0] ?? latest;
    const secs = (latest.at - first.at) / 1000;
    const per = (d: number) => (secs > 0 ? d / secs : 0);
    const span = Math.max(1, p.tipTs - p.startTs);
    const cursorPace = per(latest.cursorTs - first.cursorTs);
    return {
      measured: secs > 0,
      events: latest.events,
      bps: per(latest.blocks - first.blocks),
      eps: per(latest.events - first.events),
      done: Math.min(1, Math.max(0, (p.cursorTs - p.startTs) / span)),
      eta: cursorPace > 0 ? Math.round((p.tipTs - p.cursorTs) / cursorPace) : null,
      lagS: Math.max(0, Math.round((p.tipTs - p.cursorTs) / 1000)),
    };
  };

  const showBar = (p: IngestProgress, r: ReturnType<typeof rates>) => {
    if (barPhase !== p.phase) {
      bar?.stop();
      const counts = options.events ? " | {eps} events/s" : "";
      bar = new cliProgress.SingleBar(
        {
          stream,
          format:
            p.phase === "backfill"
              ? `backfill |{bar}| {percentage}% | {bps} blocks/s${counts} | ETA {eta}`
              : `live | {lag}s behind the node's tip | {bps} blocks/s${counts} | {blocks} blocks${options.events ? ", {events} events" : ""}`,
          hideCursor: false,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(1000, 0);
      barPhase = p.phase;
    }
    bar?.update(Math.round(r.done * 1000), {
      bps: r.bps.toFixed(1),
      eps: r.eps.toFixed(1),
      eta: r.eta === null ? "…" : `${r.eta}s`,
      lag: r.lagS,
      blocks: p.blocks,
      events: r.events,
    });
  };

  return {
    update(p) {
      const r = rates(p);
      if (stream.isTTY) return showBar(p, r);
      // A rate needs two samples; the first line waits for the second.
      if (!r.measured || now() - lastLog < logEveryMs) return;
      lastLog = now();
      const common = {
        phase: p.phase,
        blocks: p.blocks,
        blocks_per_s: Number(r.bps.toFixed(1)),
        ...(options.events ? { events: r.events, events_per_s: Number(r.eps.toFixed(1)) } : {}),
        cursor_ts: p.cursorTs,
      };
      if (p.phase === "backfill") {
        log.info(
          { ...common, done_pct: Number((r.done * 100).toFixed(1)), eta_s: r.eta },
          "Ingest backfill progress.",
        );
      } else {
        log.info({ ...common, behind_tip_s: r.lagS }, "Ingest following the node.");
      }
    },
    stop() {
      bar?.stop();
    },
  };
}
