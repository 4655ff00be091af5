/** Retries with exponential backoff and full jitter; gives up on errors that say they are final. */
export interface RetryOptions {
  retries: number;
  baseMs: number;
  maxMs: number;
  signal?: AbortSignal;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

export function isFinal(error: unknown): boolean {
  const status = (error as { status?: number })?.status;
  // 4xx other than 408/429 will not change by retrying.
  return typeof status === "number" && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= options.retries || isFinal(error) || options.signal?.aborted) throw error;
      const delay = Math.random() * Math.min(options.maxMs, options.baseMs * 2 ** attempt);
      options.onRetry?.(error, attempt + 1, delay);
      await sleep(delay, options.signal);
    }
  }
}
