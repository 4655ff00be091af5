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
