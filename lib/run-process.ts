/**
 * Runs a long-lived process: `main` returns a close function; SIGINT/SIGTERM call it once, a second
 * signal (more than REPEAT_MS after the first) exits at once, and a fatal error is logged and exits non-zero.
 */
import type { Logger } from "./logger.ts";

export type Main = () => Promise<() => Promise<void>>;

/**
 * A repeated signal within this time is the same Ctrl-C delivered twice: the terminal signals the whole process
 * group, and wrappers in it (npm, tsx) forward it to their child as well.
 */
const REPEAT_MS = 2_000;

export async function runProcess(name: string, log: Logger, main: Main): Promise<void> {
  let close: (() => Promise<void>) | undefined;
  let stoppingAt = 0;
  const stop = async (signal: string) => {
    if (stoppingAt > 0) {
      if (Date.now() - stoppingAt < REPEAT_MS) {
        log.info(
          { signal },
          "Signal repeated by a wrapper: still shutting down (signal again to exit at once).",
        );
        return;
      }
      log.warn({ signal }, "Second signal: exiting now.");
      process.exit(130);
    }
    stoppingAt = Date.now();
    log.info({ process: name, signal }, "Shutting down.");
    try {
      await close?.();
      process.exit(0);
    } catch (error) {
      log.fatal({ err: error }, "Shutdown failed.");
      process.exit(1);
    }
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
  try {
    close = await main();
  } catch (error) {
    log.fatal({ err: error, process: name }, "Process failed to start.");
    // Give pino a tick to flush.
    setTimeout(() => process.exit(1), 50);
  }
}
