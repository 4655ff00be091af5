/**
 * What a live holders batch costs once its pairs have a long history. A pool-like address P takes an output and
 * spends its previous one in every block (ALPH and a token), and pays one of 200 users: P's pairs gain two moves a
 * block. The same small batches (BENCH_LIVE_BLOCKS blocks each, BENCH_LIVE_BATCHES of them) are timed twice, in one
 * run on one chDB store: first before any history (the bound: a batch whose pairs have next to nothing before it),
 * then after BENCH_HOURS hours of history (a block every 8 s, stored in backfill batches of 900 blocks). A batch
 * whose cost grows with its pairs' history falls behind the bound as the hours grow.
 *
 * Run: npm run bench:holders   (BENCH_HOURS=48, BENCH_LIVE_BATCHES=40, BENCH_LIVE_BLOCKS=4; BENCH_PROFILE=1 adds
 * each phase's statements by label; the holders pass itself, lib/series/holders.ts, without Kafka or the other
 * processors). Then ALPH's total in the index (the supply figures' `indexAlphTotal`, from the net moves per period)
 * beside the same sum over every ALPH move, its bound before `holder_hour_sums`: median of 5 reads each.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ALPH_TOKEN_ID } from "../lib/chain/types.ts";
import { loadConfig } from "../lib/config.ts";
import { indexAlphTotal, indexAlphTotalFromMoves } from "../lib/figures/alph-supply.ts";
import { createLogger } from "../lib/logger.ts";
import { prepareStores } from "../lib/migrate.ts";
import { type HolderMessage, handleHolderMessages } from "../lib/series/holders.ts";
import { createSeriesDeps } from "../lib/series/settings.ts";
import { openStores } from "../lib/stores/index.ts";
import { profileStores } from "./profile.ts";

const HOURS = Number(process.env.BENCH_HOURS ?? 48);
const LIVE_BATCHES = Number(process.env.BENCH_LIVE_BATCHES ?? 40);
const LIVE_BLOCKS = Number(process.env.BENCH_LIVE_BLOCKS ?? 4);
const BLOCK_MS = 8_000;
const BACKFILL_BLOCKS = 900;
const PROFILE = process.env.BENCH_PROFILE === "1";
const TOKEN = "7".repeat(64);
const POOL = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH";
const USERS = Array.from({ length: 200 }, (_, i) => `1User${i.toString().padStart(40, "0")}`);

const log = createLogger({ level: "silent" });
const dir = mkdtempSync(join(tmpdir(), "bench-holders-"));
const stores = await openStores(loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent" }), log, {
  command: "bench:holders",
});
await prepareStores(stores, log);
const ch = stores.ch!;
const deps = createSeriesDeps({ ch, config: loadConfig({ DATA_DIR: dir, LOG_LEVEL: "silent" }), log });

const hex = (n: number, tag: string) => `${tag}${n.toString(16).padStart(64 - tag.length, "0")}`;

/** A chain of P's blocks: block n spends P's output of block n - 1 and pays P again and one user. */
function chain(tag: string, start: number) {
  let n = 0;
  let seq = 1;
  return (ts: number): HolderMessage => {
    const output = (key: string, address: string, alph: bigint, token: bigint) => ({
      hint: 0,
      key,
      attoAlphAmount: alph.toString(),
      address,
      tokens: [{ id: TOKEN, amount: token.toString() }],
      lockTime: 0,
      message: "",
    });
    const hash = hex(n, tag);
    const entry = {
      hash,
      timestamp: ts,
      transactions: [
        {
          unsigned: {
            txId: hex(n, "f"),
            inputs:
              n === 0 ? [] : [{ outputRef: { hint: 0, key: hex(n - 1, `${tag}0`) }, unlockScript: "00" }],
            fixedOutputs: [
              output(hex(n, `${tag}0`), POOL, 10n ** 20n + BigInt(n), 10n ** 9n + BigInt(n)),
              output(hex(n, `${tag}1`), USERS[n % USERS.length]!, 10n ** 18n, 1000n),
            ],
          },
          contractInputs: [],
          generatedOutputs: [],
        },
      ],
    };
    n++;
    return { kind: "block", hash, timestamp: ts, seq: start + seq++, block_json: JSON.stringify(entry) };
  };
}

/** `count` blocks of `next`, one every BLOCK_MS after `from`. */
const blocksAfter = (next: (ts: number) => HolderMessage, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => next(from + (i + 1) * BLOCK_MS));

/** Times BENCH_LIVE_BATCHES batches of BENCH_LIVE_BLOCKS blocks of `next`, from `from` on; ms per batch. */
async function live(next: (ts: number) => HolderMessage, from: number): Promise<number[]> {
  const times: number[] = [];
  for (let b = 0; b < LIVE_BATCHES; b++) {
    const batch = blocksAfter(next, from + b * LIVE_BLOCKS * BLOCK_MS, LIVE_BLOCKS);
    const t = performance.now();
    await handleHolderMessages(deps, batch);
    times.push(performance.now() - t);
  }
  return times;
}

const meanOf = (ms: number[]) => ms.reduce((a, b) => a + b, 0) / ms.length;
const stats = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `mean ${meanOf(ms).toFixed(1)} ms, p50 ${at(0.5).toFixed(1)} ms, p90 ${at(0.9).toFixed(1)} ms`;
};

const T0 = Date.UTC(2026, 0, 1);
// Warm-up (the first statements of a store cost more), then the bound: P with only the warm-up's blocks before.
await live(chain("c", 0), T0 - 3_600_000);
const profile = PROFILE ? profileStores(stores) : undefined;
const bound = await live(chain("b", 10_000), T0);
const boundTable = profile?.table((meanOf(bound) * bound.length) / 1000, 12);

// The history: HOURS hours of P's blocks, in backfill batches.
const next = chain("a", 1_000_000);
const total = Math.floor((HOURS * 3_600_000) / BLOCK_MS);
const start = T0 + 3_600_000;
const started = performance.now();
for (let done = 0; done < total; ) {
  const size = Math.min(BACKFILL_BLOCKS, total - done);
  await handleHolderMessages(deps, blocksAfter(next, start + done * BLOCK_MS, size));
  done += size;
  process.stderr.write(`\rhistory: ${done}/${total} blocks`);
}
process.stderr.write("\n");
const backfillS = (performance.now() - started) / 1000;
profile?.reset();
const after = await live(next, start + total * BLOCK_MS);

console.log(
  `holders bench: ${LIVE_BATCHES} live batches of ${LIVE_BLOCKS} blocks; P moves twice a block (ALPH and a token)`,
);
console.log(`  before any history (the bound): ${stats(bound)}`);
console.log(
  `  after ${HOURS} h of history (${total} blocks, ${2 * total} moves of each of P's pairs, backfilled in ${backfillS.toFixed(1)} s): ${stats(after)}`,
);
console.log(`  after / bound: ${(meanOf(after) / meanOf(bound)).toFixed(2)}x`);
// ALPH's total: the net moves per period against every move (the read before), same store, alternating.
const reads: Record<"periods" | "moves", number[]> = { periods: [], moves: [] };
const totals = new Set<string>();
for (let i = 0; i < 5; i++)
  for (const [name, read] of [
    ["periods", indexAlphTotal],
    ["moves", indexAlphTotalFromMoves],
  ] as const) {
    const t = performance.now();
    totals.add(await read(ch));
    reads[name].push(performance.now() - t);
  }
const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
const [periodRows] = await ch.query<{ n: string }>(
  "bench_period_rows",
  "SELECT toString(count()) AS n FROM holder_period_sums FINAL WHERE token_id = {alph:String}",
  { alph: ALPH_TOKEN_ID },
);
const [moveRows] = await ch.query<{ n: string }>(
  "bench_move_rows",
  "SELECT toString(count()) AS n FROM holder_moves FINAL WHERE token_id = {alph:String}",
  { alph: ALPH_TOKEN_ID },
);
if (totals.size !== 1) throw new Error(`ALPH's total differs between the reads: ${[...totals].join(" / ")}`);
console.log(
  `  ALPH's total in the index: ${median(reads.periods).toFixed(1)} ms from ${periodRows?.n} period sums; ` +
    `${median(reads.moves).toFixed(1)} ms summing ${moveRows?.n} moves (the read before); equal totals`,
);
if (boundTable) console.log(`before any history:\n${boundTable}`);
if (profile) console.log(`after the history:\n${profile.table((meanOf(after) * after.length) / 1000, 12)}`);

await stores.close();
rmSync(dir, { recursive: true, force: true });
