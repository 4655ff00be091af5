/**
 * Runs a long-lived process: `main` returns a close function; SIGINT/SIGTERM call it once, a second
 * signal exits at once, and a fatal error is logged and exits non-zero.
 */
import type { Logger } from "./logger.ts";

export type Main = () => Promise<() => Promise<void>>;

export async function runProcess(name: string, log: Logger, main: Main): Promise<void> {
  let close: (() => Promise<void>) | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, "Second signal: exiting now.");
      process.exit(130);
    }
    stopping = true;
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
