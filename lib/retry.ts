/**
 * The one retry helper: exponential backoff with full jitter. It reads the retry decision the error
 * carries (`AppError.retryable`, set from structured fields by the module that talks to the external
 * system: stores, bus, node and explorer clients). Any other error is final: a bug is not fixed by
 * running it again.
 */
import { AppError } from "./errors.ts";

export interface RetryOptions {
  retries: number;
  baseMs: number;
  maxMs: number;
  signal?: AbortSignal;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

export function isRetryable(error: unknown): boolean {
  return error instanceof AppError && error.retryable;
}

/** For HTTP clients: a 4xx other than 408/429 will not change by retrying; anything else may. */
export function retryableStatus(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500 || status < 400;
}

/** Resolves after `ms`, or at once when `signal` aborts; leaves no listener behind either way. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Full-jitter delay of the given attempt (1-based). */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.random() * Math.min(maxMs, baseMs * 2 ** (attempt - 1));
}

export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt > options.retries || !isRetryable(error) || options.signal?.aborted) throw error;
      const delay = backoffMs(attempt, options.baseMs, options.maxMs);
      options.onRetry?.(error, attempt, delay);
      await sleep(delay, options.signal);
    }
  }
}
