/**
 * Pages reused for a short time: caught-up pollers all ask for the same page, and one read serves
 * them (also while it is in flight). Callers key a page by everything it depends on (its query and
 * the watermark), so a reused page is the page a fresh read gives until a retraction or a label edit.
 */
export interface PageCache<T> {
  get(key: string, read: () => Promise<T>): Promise<T>;
}

/** Kept pages beyond which the cache starts over. */
const MAX_PAGES = 5_000;

export function createPageCache<T>(ttlMs: number): PageCache<T> {
  const pages = new Map<string, { at: number; value: Promise<T> }>();
  return {
    get(key, read) {
      if (ttlMs <= 0) return read();
      const hit = pages.get(key);
      if (hit && Date.now() - hit.at < ttlMs) return hit.value;
      if (pages.size > MAX_PAGES) pages.clear();
      const value = read();
      pages.set(key, { at: Date.now(), value });
      value.catch(() => pages.delete(key));
      return value;
    },
  };
}
