/**
 * What the replica tests share (test/integration/replicas*.test.ts): the consumer groups of every processor, the
 * end state they compare by hash, publishing without waiting for the groups, draining them wherever their members
 * run, and one clean single-replica pass over the same chain to compare with.
 */
import { expect } from "vitest";
import { CHAINS } from "../../lib/chain/types.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import { TOPICS } from "../../pipeline/messages.ts";
import { PROCESSORS, type ProcessorName } from "../../pipeline/runtime.ts";
import { behindGroups, eventsStateHash, startTestPipeline, type TestPipeline, waitFor } from "./pipeline.ts";
import { pricesStateHash } from "./prices.ts";
import { seriesStateHash } from "./series.ts";
import { openTestCh, openTestPg, type TestCh } from "./stores.ts";

export const PROCESSOR_NAMES = Object.keys(PROCESSORS) as ProcessorName[];
export const GROUPS = PROCESSOR_NAMES.map((n) => ({
  topic: TOPICS[PROCESSORS[n].definition.topic],
  group: PROCESSORS[n].definition.group,
}));

async function rawStateHash(ch: Ch) {
  const [r] = await ch.query<{ rows: string; hash: string }>(
    "raw_state_hash",
    "SELECT count() AS rows, toString(sum(cityHash64(toString(tuple(*))))) AS hash FROM (SELECT * EXCEPT (version) FROM raw_blocks FINAL)",
  );
  return { rows: Number(r?.rows ?? 0), hash: r?.hash ?? "" };
}

/** Events, raw blocks, prices and figures' facts, series and holders: each table's rows and hash. */
export async function replicaStateOf(ch: TestCh) {
  return {
    events: await eventsStateHash(ch),
    raw: await rawStateHash(ch.ch),
    prices: await pricesStateHash(ch),
    series: await seriesStateHash(ch),
  };
}

/** Publishes everything the node has, without waiting for the consumer groups. */
export async function ingestAll(p: TestPipeline): Promise<void> {
  for (let i = 0; i < 500; i++) if ((await p.ingestor.runOnce()).caughtUp) return;
  throw new Error("ingest did not catch up");
}

/** Waits until every consumer group (wherever its members run) has committed everything published. */
export async function drainGroups(p: TestPipeline): Promise<void> {
  let zeros = 0;
  await waitFor(
    "every consumer group to drain",
    async () => {
      zeros = (await p.deps.bus.lag(GROUPS)) === 0 ? zeros + 1 : 0;
      return zeros >= 2;
    },
    180_000,
    () => behindGroups(p.deps.bus, GROUPS),
  );
}

type ReplicaState = Awaited<ReturnType<typeof replicaStateOf>>;

/**
 * Clean passes' states by what makes them (the chain's options and main-chain tips, and the pass's options), for
 * a file whose cases replay the same chain: one clean pass serves them all (`reference` of expectStateOfCleanPass).
 */
export type CleanPassCache = Map<string, ReplicaState>;

/**
 * The replicated state has data in every part, and equals one clean single-replica pass over the same chain (over
 * Kafka unless `kafka` is false, with `confirmations` (default 2) and `env` as the replicated pass had them). After
 * a reorg the raw blocks are left out: the replicated pass keeps the orphaned ones (off the main chain), which a
 * clean pass never saw. With `reference`, the state of an earlier clean pass over the same chain with the same
 * options is compared with instead of making another; when it differs, a fresh clean pass is made and compared with
 * (so a difference is never a stale reference's, and the differing series rows are printed).
 */
export async function expectStateOfCleanPass(
  pipeline: TestPipeline,
  options: {
    kafka?: boolean;
    confirmations?: number;
    afterReorg?: boolean;
    env?: Record<string, string>;
    reference?: CleanPassCache;
  } = {},
): Promise<void> {
  // Rounds the recomputes hold (a run with TEST_RECOMPUTE_COALESCE_MS) are handled first.
  for (const p of pipeline.processors.values()) await p.flush();
  const replicated = await replicaStateOf(pipeline.ch);
  expect(replicated.events.rows).toBeGreaterThan(200);
  expect(replicated.series.points!.rows).toBeGreaterThan(100);
  expect(replicated.series.holders!.rows).toBeGreaterThan(100);
  expect(replicated.prices.trades!.rows).toBeGreaterThan(0);
  expect(replicated.prices.supply_changes!.rows).toBeGreaterThan(50);

  const { reference, ...passOptions } = options;
  const chain = pipeline.chain;
  const tips = Array.from({ length: CHAINS }, (_, c) => chain.mainChain(c).at(-1)?.block.hash ?? "");
  const key = JSON.stringify([chain.options, tips, passOptions]);
  const known = reference?.get(key);
  const same = (single: ReplicaState) =>
    JSON.stringify(replicated.events) === JSON.stringify(single.events) &&
    (options.afterReorg || JSON.stringify(replicated.raw) === JSON.stringify(single.raw)) &&
    JSON.stringify(replicated.prices) === JSON.stringify(single.prices) &&
    JSON.stringify(replicated.series) === JSON.stringify(single.series);
  if (known && same(known)) return;

  // One clean single-replica pass over the same chain into fresh stores (a new database in the same chDB).
  const pg = await openTestPg();
  const ch = await openTestCh({ dataDir: pipeline.ch.dataDir });
  const clean = await startTestPipeline({
    chain: pipeline.chain,
    server: pipeline.server,
    stores: { pg, ch },
    confirmations: options.confirmations ?? 2,
    kafka: options.kafka ?? true,
    env: options.env,
  });
  try {
    await clean.catchUp();
    const single = await replicaStateOf(ch);
    reference?.set(key, single);
    if (JSON.stringify(replicated.series) !== JSON.stringify(single.series))
      console.warn(`[replicas] series rows that differ:\n${await seriesDifference(pipeline.ch, ch)}`);
    expect(replicated.events).toEqual(single.events);
    if (!options.afterReorg) expect(replicated.raw).toEqual(single.raw);
    expect(replicated.prices).toEqual(single.prices);
    expect(replicated.series).toEqual(single.series);
  } finally {
    await clean.close();
    await pg.close();
    await ch.close();
  }
}

/** The series rows one database has and the other has not (both in one chDB directory), to say what differs. */
async function seriesDifference(a: TestCh, b: TestCh): Promise<string> {
  const lines: string[] = [];
  const tables = [
    ["series_block_facts", "* EXCEPT (version)", "main_chain"],
    ["series_points", "* EXCEPT (version, state)", "deleted = 0"],
  ] as const;
  for (const [table, cols, where] of tables)
    for (const [x, y, side] of [
      [a, b, "replicated only"],
      [b, a, "clean only"],
    ] as const) {
      const rows = await a.ch.query(
        "replicas_difference",
        `SELECT * FROM (
           (SELECT * FROM (SELECT ${cols} FROM ${x.ch.database}.${table} FINAL WHERE ${where}))
           EXCEPT
           (SELECT * FROM (SELECT ${cols} FROM ${y.ch.database}.${table} FINAL WHERE ${where}))
         ) LIMIT 20`,
      );
      for (const r of rows) lines.push(`${table} ${side}: ${JSON.stringify(r)}`);
    }
  return lines.join("\n");
}
