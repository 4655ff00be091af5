/**
 * Bench (devnet): blocks/s of the simulated network's production (ledger, transactions, DEX, block assembly),
 * per segment of the chain as it grows, beside JSON.stringify of the same blocks and events in the same run:
 * the cost of only writing out what was made, so the ratio survives a noisy machine. A restart of the demo
 * rebuilds its whole chain from the seed, so the total is also the restart time of a chain that long.
 * Run: npm run bench:devnet   (BENCH_BLOCKS=8000, BENCH_SEGMENT=2000)
 */
import { createDevnetChain, type DevnetBlock } from "../devnet/chain.ts";

const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 8000);
const SEGMENT = Number(process.env.BENCH_SEGMENT ?? 2000);
const chain = createDevnetChain({ seed: 3 });

const perSecond = (n: number, ms: number): number => Math.round(n / (ms / 1000));
const rows: { upTo: number; made: number; bound: number; bytes: number }[] = [];
let totalMs = 0;
for (let done = 0; done < BLOCKS; done += SEGMENT) {
  const n = Math.min(SEGMENT, BLOCKS - done);
  const t0 = performance.now();
  const blocks: DevnetBlock[] = chain.advance(n);
  const made = performance.now() - t0;
  totalMs += made;
  const t1 = performance.now();
  let bytes = 0;
  for (const b of blocks) bytes += JSON.stringify({ block: b.block, events: b.events }).length;
  const bound = performance.now() - t1;
  rows.push({
    upTo: done + n,
    made: perSecond(n, made),
    bound: perSecond(n, bound),
    bytes: Math.round(bytes / n),
  });
}

process.stdout.write(`\nDevnet production bench (seed 3, ${BLOCKS} blocks in segments of ${SEGMENT})\n`);
process.stdout.write("chain length   blocks/s   JSON.stringify blocks/s   vs stringify   bytes/block\n");
for (const r of rows) {
  const ratio = `${((r.made / Math.max(1, r.bound)) * 100).toFixed(1)}%`;
  process.stdout.write(
    `${String(r.upTo).padStart(12)} ${String(r.made).padStart(10)} ${String(r.bound).padStart(25)} ${ratio.padStart(14)} ${String(r.bytes).padStart(13)}\n`,
  );
}
// The demo makes 2000 blocks ahead, then 2 blocks/s: a chain of BLOCKS blocks is that many hours of running.
const hours = Math.max(0, (BLOCKS - 2000) / 2 / 3600);
process.stdout.write(
  `all ${BLOCKS} blocks: ${(totalMs / 1000).toFixed(1)} s, the restart time of a demo that ran ${hours.toFixed(1)} h\n`,
);
