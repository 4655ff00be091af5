/**
 * Progress of a backfill: a bar with blocks/s, events/s and ETA on a terminal (cli-progress),
 * a log line every few seconds otherwise.
 */
import cliProgress from "cli-progress";
import type { Logger } from "../../lib/logger.ts";
import type { IngestProgress } from "./ingest.ts";

export interface ProgressReporter {
  update(p: IngestProgress): void;
  stop(): void;
}

export function createProgressReporter(
  log: Logger,
  stream: NodeJS.WriteStream = process.stderr,
): ProgressReporter {
  const started = Date.now();
  let bar: cliProgress.SingleBar | null = null;
  let lastLog = 0;
  const rates = (p: IngestProgress) => {
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    const span = Math.max(1, p.tipTs - p.startTs);
    const done = Math.min(1, Math.max(0, (p.cursorTs - p.startTs) / span));
    const eta = done > 0 ? Math.round((secs / done) * (1 - done)) : 0;
    return { bps: p.blocks / secs, eps: p.events / secs, done, eta };
  };
  return {
    update(p) {
      const r = rates(p);
      if (stream.isTTY) {
        bar ??= new cliProgress.SingleBar(
          {
            stream,
            format:
              "backfill |{bar}| {percentage}% | {blocks} blocks {bps} blk/s | {events} raw events {eps} ev/s | ETA {eta_formatted}",
            etaBuffer: 50,
          },
          cliProgress.Presets.shades_classic,
        );
        if (!bar.isActive) bar.start(1000, 0);
        bar.update(Math.round(r.done * 1000), {
          blocks: p.blocks,
          events: p.events,
          bps: r.bps.toFixed(1),
          eps: r.eps.toFixed(1),
        });
        return;
      }
      if (Date.now() - lastLog < 5_000) return;
      lastLog = Date.now();
      log.info(
        {
          blocks: p.blocks,
          events: p.events,
          blocks_per_s: Number(r.bps.toFixed(1)),
          events_per_s: Number(r.eps.toFixed(1)),
          done_pct: Number((r.done * 100).toFixed(1)),
          eta_s: r.eta,
          cursor_ts: p.cursorTs,
        },
        "Ingest progress.",
      );
    },
    stop() {
      bar?.stop();
    },
  };
}
