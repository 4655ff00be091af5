/**
 * Bench (devnet): blocks/s of the simulated network's production (ledger, transactions, DEX, block assembly)
 * and the heap it keeps per 1,000 blocks, per segment of the chain as it grows, beside JSON.stringify of the
 * same blocks and events in the same run: the cost of only writing out what was made, so the ratio survives a
 * noisy machine. Flat figures down the segments mean a long-running demo neither slows down nor bloats. A
 * restart of the demo rebuilds its whole chain from the seed, so the total is also the restart time of a chain
 * that long, and the last segment's rate extrapolates it to a demo that ran a day.
 * Run: npm run bench:devnet   (BENCH_BLOCKS=50000, BENCH_SEGMENT=10000; heap figures need node --expose-gc)
 */
import { createDevnetChain } from "../devnet/chain.ts";
import { DEVNET_RUN_DEFAULTS } from "../devnet/main.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 50_000);
const SEGMENT = Number(process.env.BENCH_SEGMENT ?? 10_000);
/** The demo makes DEVNET_RUN_DEFAULTS.blocks ahead (two hours), then 2 blocks/s. */
const DEMO_AHEAD = DEVNET_RUN_DEFAULTS.blocks;
const DEMO_RATE = 2;
const chain = createDevnetChain({ seed: 3 });

const gc = (globalThis as { gc?: () => void }).gc;
/** Heap in use after a full collection; without --expose-gc the figure includes garbage and is marked so. */
const heapUsed = (): number => {
  gc?.();
  return process.memoryUsage().heapUsed;
};

const perSecond = (n: number, ms: number): number => Math.round(n / (ms / 1000));
const rows: {
  upTo: number;
  made: number;
  bound: number;
  bytes: number;
  mbPer1000: number;
  heapMb: number;
}[] = [];
let totalMs = 0;
let heapBefore = heapUsed();
for (let done = 0; done < BLOCKS; done += SEGMENT) {
  const n = Math.min(SEGMENT, BLOCKS - done);
  const t0 = performance.now();
  const blocks = chain.advance(n);
  const made = performance.now() - t0;
  totalMs += made;
  const t1 = performance.now();
  let bytes = 0;
  for (const b of blocks) bytes += JSON.stringify({ block: b.block, events: b.events }).length;
  const bound = performance.now() - t1;
  blocks.length = 0;
  const heapAfter = heapUsed();
  rows.push({
    upTo: done + n,
    made: perSecond(n, made),
    bound: perSecond(n, bound),
    bytes: Math.round(bytes / n),
    mbPer1000: ((heapAfter - heapBefore) / 2 ** 20 / n) * 1000,
    heapMb: heapAfter / 2 ** 20,
  });
  heapBefore = heapAfter;
}

process.stdout.write(`\nDevnet production bench (seed 3, ${BLOCKS} blocks in segments of ${SEGMENT})\n`);
if (!gc) process.stdout.write("(run with node --expose-gc for heap figures after a full collection)\n");
process.stdout.write(
  "chain length   blocks/s   JSON.stringify blocks/s   vs stringify   bytes/block   heap MB/1000 blocks   heap MB\n",
);
for (const r of rows) {
  const ratio = `${((r.made / Math.max(1, r.bound)) * 100).toFixed(1)}%`;
  process.stdout.write(
    `${String(r.upTo).padStart(12)} ${String(r.made).padStart(10)} ${String(r.bound).padStart(25)} ${ratio.padStart(14)} ${String(r.bytes).padStart(13)} ${r.mbPer1000.toFixed(2).padStart(21)} ${r.heapMb.toFixed(0).padStart(9)}\n`,
  );
}
const hours = Math.max(0, (BLOCKS - DEMO_AHEAD) / DEMO_RATE / 3600);
process.stdout.write(
  `all ${BLOCKS} blocks: ${(totalMs / 1000).toFixed(1)} s, the restart time of a demo that ran ${hours.toFixed(1)} h\n`,
);
const dayBlocks = DEMO_AHEAD + DEMO_RATE * 86_400;
const last = rows.at(-1);
if (last && dayBlocks > BLOCKS) {
  const restart = totalMs / 1000 + (dayBlocks - BLOCKS) / last.made;
  const heap = last.heapMb + ((dayBlocks - BLOCKS) / 1000) * last.mbPer1000;
  process.stdout.write(
    `a demo that ran one day (${dayBlocks} blocks): restart ~${restart.toFixed(0)} s and ~${heap.toFixed(0)} MB of heap, extrapolated at the last segment's rate\n`,
  );
}
