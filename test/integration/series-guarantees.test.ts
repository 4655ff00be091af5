// Test passes: embedded and server (its reorg case over Kafka; the replay case skips there with a notice).
/**
 * Guarantees 2 and 3 for the series tables: re-delivery, crashes mid-batch, processor restarts, a
 * reprocess of the whole range (reaching archived pages, which are rebuilt from the facts) and a
 * reorg leave facts, points, segments, archive pages and instances identical to one clean pass, and so
 * do the holders processor's outputs, spends, balance moves and crossings (token-holders).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createDevnetChain } from "../../devnet/chain.ts";
import { startDevnetServer } from "../../devnet/server.ts";
import { reprocessRange } from "../../pipeline/reprocess.ts";
import { KAFKA_BROKERS, startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import {
  cleanSeriesState,
  SERIES_BLOCKS,
  SERIES_DEVNET,
  SERIES_PROCESSORS,
  SERIES_TEST_ENV,
  seriesStateHash,
} from "../helpers/series.ts";

const envWith = () => ({ ...SERIES_TEST_ENV, SERIES_ARCHIVE_DIR: mkdtempSync(join(tmpdir(), "series-g-")) });

/** A clean pass over the same simulated chain into fresh stores and a fresh archive directory. */
const cleanPass = (p: TestPipeline, confirmations: number) =>
  cleanSeriesState(p, p.ch.dataDir, { confirmations, env: envWith(), processors: SERIES_PROCESSORS });

// Over Kafka this case took about five minutes here on the 28 hours of chain time it had then (the mock cluster's
// small batches, each costing the series processor about 9 statements; 298 s on 2026-11-24; the 8.5 hours it has
// now are not measured there); the in-process passes run it, and over Kafka the reorg case below and replay-reorg still run.
const kafkaPass = Boolean(KAFKA_BROKERS);
if (kafkaPass)
  console.warn(
    "[skip notice] series crash/restart/reprocess guarantee: runs on the in-process bus passes (over Kafka it takes about 5 minutes)",
  );

describe.skipIf(kafkaPass)("series: replays are harmless", () => {
  let p: TestPipeline | undefined;
  afterAll(async () => p?.close());

  it("crashes, restarts, re-delivery and a reprocess leave the state of one clean pass", async () => {
    p = await startTestPipeline({
      blocks: SERIES_BLOCKS,
      devnet: SERIES_DEVNET,
      confirmations: 2,
      env: envWith(),
      processors: SERIES_PROCESSORS,
    });
    const pipeline = p;
    // Crash the series processor twice: after its facts insert, and after its points but before its segments;
    // and the holders processor twice: after its outputs insert, and just before its crossings insert (after
    // the facts and points they change).
    const realInsert = pipeline.deps.ch.insert.bind(pipeline.deps.ch);
    let crashes = 2;
    let holderCrashes = 2;
    pipeline.deps.ch.insert = async (label, table, rows) => {
      if (table === "holder_outputs" && rows.length > 0 && holderCrashes === 2) {
        holderCrashes--;
        await realInsert(label, table, rows);
        throw new Error("injected crash after the holders' outputs insert");
      }
      if (table === "holder_changes" && rows.length > 0 && holderCrashes === 1) {
        holderCrashes--;
        throw new Error("injected crash before the holders' crossings insert");
      }
      if (
        table === "series_block_facts" &&
        label !== "holder_facts_insert" &&
        rows.length > 0 &&
        crashes === 2
      ) {
        // Counted before the await: over Kafka, batches of several partitions insert at once.
        crashes--;
        await realInsert(label, table, rows);
        throw new Error("injected crash after the series facts insert");
      }
      if (table === "series_segments" && rows.length > 0 && crashes === 1) {
        crashes--;
        throw new Error("injected crash before the series segments insert");
      }
      return realInsert(label, table, rows);
    };
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 1000; i++) {
      if (random() < 0.2) await pipeline.restartProcessor("series");
      if (random() < 0.1) await pipeline.restartProcessor("holders");
      if (random() < 0.1) await pipeline.restartProcessor("series-recompute");
      if (random() < 0.1) await pipeline.restartProcessor("holders-recompute");
      try {
        if ((await pipeline.ingestor.runOnce()).caughtUp) break;
      } catch {
        // the injected crash: the round is retried and must not lose or duplicate anything
      }
    }
    await pipeline.catchUp();
    expect(crashes).toBe(0);
    expect(holderCrashes).toBe(0);
    const first = await seriesStateHash(pipeline.ch);
    expect(first.holders!.rows).toBeGreaterThan(5000);
    expect(first.facts!.rows).toBeGreaterThan(5000);
    expect(first.segments!.rows).toBeGreaterThan(128);
    expect(first.pages!.rows).toBeGreaterThan(10);

    // Re-deliver the whole range (new sequence numbers, same content): archived pages are rebuilt.
    await reprocessRange(pipeline.deps, 0, Number.MAX_SAFE_INTEGER);
    await pipeline.catchUp();
    expect(await seriesStateHash(pipeline.ch)).toEqual(first);

    expect(await cleanPass(pipeline, 2)).toEqual(first);
  }, 600_000);
});

describe("series: reorgs are handled", () => {
  let p: TestPipeline | undefined;
  afterAll(async () => p?.close());

  it("a reorg retracts the orphaned blocks' facts and leaves the state of a clean pass", async () => {
    const chain = createDevnetChain({ seed: 11, ...SERIES_DEVNET });
    // 15 blocks on each chain (3.75 hours): the reorg and its comparison need blocks on chain 0, not a long chain.
    chain.advance(240);
    const server = await startDevnetServer(chain, { port: 0 });
    p = await startTestPipeline({
      chain,
      server,
      confirmations: 0,
      env: envWith(),
      processors: SERIES_PROCESSORS,
    });
    const pipeline = p;
    await pipeline.catchUp();
    const reorg = chain.reorg(0, 2);
    expect(reorg.orphaned).toHaveLength(2);
    const before = await pipeline.ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM series_block_facts FINAL WHERE block_hash IN {h:Array(String)} AND main_chain",
      { h: reorg.orphaned },
    );
    expect(Number(before[0]?.n)).toBeGreaterThan(0);
    chain.advance(32);
    await pipeline.catchUp();
    const after = await pipeline.ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM series_block_facts FINAL WHERE block_hash IN {h:Array(String)} AND main_chain",
      { h: reorg.orphaned },
    );
    expect(Number(after[0]?.n)).toBe(0);
    // The orphaned blocks' outputs and spends no longer count towards any balance.
    const [holders] = await pipeline.ch.ch.query<{ n: string; main: string }>(
      "t",
      "SELECT count() AS n, countIf(main_chain) AS main FROM holder_outputs FINAL WHERE block_hash IN {h:Array(String)}",
      { h: reorg.orphaned },
    );
    expect(Number(holders?.n)).toBeGreaterThan(0);
    expect(Number(holders?.main)).toBe(0);
    expect(await seriesStateHash(pipeline.ch)).toEqual(await cleanPass(pipeline, 0));
    await pipeline.close();
    p = undefined;
    await server.close();
  }, 300_000);
});
