/**
 * Pages reused for a short time: caught-up pollers all ask for the same page, and one read serves
 * them (also while it is in flight). Callers key a page by everything it depends on (its query and
 * the watermark), so a reused page is the page a fresh read gives until a retraction or a label edit.
 *
 * With `staleMs`, a page past its `ttlMs` is still served for up to `staleMs` more while one read in the
 * background replaces it (stale-while-revalidate): a request never waits for the store when the page it
 * asks for was read recently. In the embedded process the store is one chDB session shared with ingest and
 * every processor, and a read queued behind their statements is what made the routes' p99.
 */
export interface PageCache<T> {
  get(key: string, read: () => Promise<T>): Promise<T>;
  /** The newest value read for `key` if one has resolved, whatever its age (no read started). */
  peek(key: string): T | undefined;
}

export interface PageCacheOptions {
  /** How long a page is served as fresh (0 = no reuse). */
  ttlMs: number;
  /** How long past `ttlMs` a page is still served while a background read replaces it (default 0). */
  staleMs?: number;
}

/** Kept pages beyond which the cache starts over. */
const MAX_PAGES = 5_000;

interface Entry<T> {
  at: number;
  value: Promise<T>;
  /** The resolved value, once there is one. */
  settled?: { value: T };
  /** A background read replacing this entry. */
  refreshing?: boolean;
}

export function createPageCache<T>(options: number | PageCacheOptions): PageCache<T> {
  const { ttlMs, staleMs = 0 } = typeof options === "number" ? { ttlMs: options } : options;
  const pages = new Map<string, Entry<T>>();
  const start = (key: string, read: () => Promise<T>): Entry<T> => {
    const entry: Entry<T> = { at: Date.now(), value: read() };
    entry.value.then(
      (value) => {
        entry.settled = { value };
      },
      () => {
        if (pages.get(key) === entry) pages.delete(key);
      },
    );
    return entry;
  };
  return {
    get(key, read) {
      if (ttlMs <= 0) return read();
      const hit = pages.get(key);
      const age = hit ? Date.now() - hit.at : Number.POSITIVE_INFINITY;
      if (hit && age < ttlMs) return hit.value;
      if (hit?.settled && age < ttlMs + staleMs) {
        if (!hit.refreshing) {
          hit.refreshing = true;
          const next = start(key, read);
          // The old page stays until the new one resolves; a failed refresh keeps it until it is too old.
          next.value.then(
            () => pages.set(key, next),
            () => {
              hit.refreshing = false;
            },
          );
        }
        return Promise.resolve(hit.settled.value);
      }
      if (pages.size > MAX_PAGES) pages.clear();
      const entry = start(key, read);
      pages.set(key, entry);
      return entry.value;
    },
    peek(key) {
      return pages.get(key)?.settled?.value;
    },
  };
}
