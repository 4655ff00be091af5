/**
 * Labels of the addresses events carry, kept in memory (misses included) until `label_generation`
 * moves: a trigger bumps it on every statement that can change a label, and it is read at most every
 * `checkMs`, so a label edit shows within that time. `checkMs` 0 keeps nothing.
 */
import type { AddressLabel, AddressLabelsRepo } from "../labels/repo.ts";

export interface LabelCache {
  /** The primary label of each of these addresses that has one. */
  labels(addresses: Iterable<string>): Promise<Record<string, AddressLabel>>;
}

/** Kept addresses beyond which the cache starts over. */
const MAX_KEPT = 200_000;

export function createLabelCache(repo: AddressLabelsRepo, options: { checkMs: number }): LabelCache {
  const { checkMs } = options;
  const kept = new Map<string, AddressLabel | null>();
  let generation = { checkedAt: 0, value: "" };
  /** Bumped when the cache is dropped: a read that started before must not store what it found. */
  let epoch = 0;

  async function checkGeneration() {
    const now = Date.now();
    if (now - generation.checkedAt < checkMs) return;
    generation.checkedAt = now;
    const value = await repo.generation();
    if (value !== generation.value) {
      kept.clear();
      epoch += 1;
    }
    generation = { checkedAt: now, value };
  }

  return {
    async labels(addresses) {
      const out: Record<string, AddressLabel> = {};
      if (checkMs > 0) await checkGeneration();
      const missing: string[] = [];
      for (const a of new Set(addresses)) {
        if (!a) continue;
        const hit = checkMs > 0 ? kept.get(a) : undefined;
        if (hit === undefined) missing.push(a);
        else if (hit) out[a] = hit;
      }
      if (missing.length === 0) return out;
      const startedIn = epoch;
      const found = await repo.primary(missing);
      Object.assign(out, found);
      if (checkMs > 0 && startedIn === epoch) {
        if (kept.size > MAX_KEPT) kept.clear();
        for (const a of missing) kept.set(a, found[a] ?? null);
      }
      return out;
    },
  };
}
