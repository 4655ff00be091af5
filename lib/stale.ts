/**
 * Stale-while-revalidate for one value read from a store: the first call waits for the read; within `ttlMs` the
 * value is reused; past it, the last value is answered at once while one background read replaces it, for up to
 * `staleMs` more (then a call waits for the read again, so a store that stays down surfaces as errors). With
 * `ttlMs` 0 every call reads. In the embedded process the API shares one chDB session with ingest and every
 * processor: a value refreshed this way never makes a request queue behind their statements.
 */
export interface StaleOptions {
  ttlMs: number;
  /** How long past `ttlMs` the last value is still answered while a read replaces it (default 10 s). */
  staleMs?: number;
}

export function staleWhileRevalidate<T>(read: () => Promise<T>, options: StaleOptions): () => Promise<T> {
  const { ttlMs, staleMs = 10_000 } = options;
  let last: { at: number; value: T } | null = null;
  let reading: Promise<T> | null = null;
  const refresh = (): Promise<T> => {
    reading ??= read()
      .then((value) => {
        last = { at: Date.now(), value };
        return value;
      })
      .finally(() => {
        reading = null;
      });
    return reading;
  };
  return async () => {
    if (ttlMs <= 0) return read();
    const age = last ? Date.now() - last.at : Number.POSITIVE_INFINITY;
    if (last && age <= ttlMs) return last.value;
    if (last && age <= ttlMs + staleMs) {
      refresh().catch(() => undefined);
      return last.value;
    }
    return refresh();
  };
}
