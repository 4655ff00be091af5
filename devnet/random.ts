/**
 * Seeded pseudo-random source for the devnet test double (mulberry32).
 * Every value of the simulated chain comes from one of these, so a seed fully determines the chain.
 */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
  /** Random element of a non-empty array. */
  pick<T>(items: readonly T[]): T;
  /** `bytes` random bytes as lowercase hex. */
  hex(bytes: number): string;
  /** Uniform bigint in [min, max] (inclusive), good enough for amounts (not cryptographic). */
  bigint(min: bigint, max: bigint): bigint;
}

/** Creates a mulberry32 generator; identical seeds yield identical sequences. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const nextU32 = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const next = (): number => nextU32() / 4294967296;
  let scratch = Buffer.alloc(64);
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error("pick from an empty array");
      return item;
    },
    hex(bytes) {
      // Through a buffer, not `+=`: a concatenated string stays a rope of 8-character pieces as long as it
      // lives, and the chain keeps every hash, key and signature it makes (over half its heap).
      const words = Math.ceil(bytes / 4);
      if (scratch.length < words * 4) scratch = Buffer.alloc(words * 4);
      for (let i = 0; i < words; i++) scratch.writeUInt32BE(nextU32(), i * 4);
      return scratch.toString("hex", 0, bytes);
    },
    bigint(min, max) {
      const span = max - min + 1n;
      // 96 random bits are plenty for the amount ranges used by the generator.
      const r = (BigInt(nextU32()) << 64n) | (BigInt(nextU32()) << 32n) | BigInt(nextU32());
      return min + (r % span);
    },
  };
}

/**
 * A uniform float in [0, 1) that depends only on the integers given (a stateless hash, murmur3's finalizer over
 * each word). The devnet's schedules (bursts, quiet gaps, trend phases) are functions of chain time through
 * it: a reorg that remakes a block at another timestamp follows the same schedule, and drawing from it never
 * shifts the seeded sequence of {@link Rng}.
 */
export function hashUnit(...words: number[]): number {
  let h = 0x9e3779b9;
  for (const w of words) {
    h = Math.imul(h ^ (w | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h ^= h >>> 12;
  return (h >>> 0) / 4294967296;
}
