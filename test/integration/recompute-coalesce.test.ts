// Test passes: embedded and server (held rounds live in PGlite or the PostgreSQL server; the embedded pipeline in both).
/**
 * Held rounds (RECOMPUTE_COALESCE_MS, pipeline/held-batches.ts): on the embedded pipeline, series-recompute and
 * holders-recompute hold rounds whose blocks span less than the window and recompute them together. Held rounds are
 * in PostgreSQL until their recompute is written: series points lag while rounds are held, a flush writes them, a
 * process killed with SIGKILL while holding loses none (the next start recomputes them), and a reorg after held
 * rounds leaves the state of one clean pass. Both passes run the in-process bus (holding is off over Kafka, where a
 * replica's partitions can move); the server pass keeps the held rounds on the PostgreSQL server.
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createDevnetChain } from "../../devnet/chain.ts";
import { registerDevnetDapps } from "../../devnet/register.ts";
import { startDevnetServer } from "../../devnet/server.ts";
import { migratePostgres } from "../../lib/migrate.ts";
import { createPostgres } from "../../lib/stores/postgres.ts";
import { countHeldBatches } from "../../pipeline/held-batches.ts";
import { CONSUMER_GROUPS } from "../../pipeline/messages.ts";
import { serveChOverIpc } from "../helpers/ch-over-ipc.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import {
  cleanSeriesState,
  HOUR,
  SERIES_DEVNET,
  SERIES_PROCESSORS,
  SERIES_TEST_ENV,
  seriesStateHash,
} from "../helpers/series.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const DAY = 24 * HOUR;
const ENTRY = fileURLToPath(new URL("../helpers/follow-process.ts", import.meta.url));
const archiveDir = () => mkdtempSync(join(tmpdir(), "series-held-"));

/** A clean pass over the same chain (every round recomputed at once) into fresh stores beside `ch`'s. */
const cleanState = (p: { chain: TestPipeline["chain"]; server: TestPipeline["server"] }, ch: TestCh) =>
  cleanSeriesState(p, ch.dataDir, {
    confirmations: 0,
    kafka: false,
    env: { ...SERIES_TEST_ENV, SERIES_ARCHIVE_DIR: archiveDir(), RECOMPUTE_COALESCE_MS: "0" },
    processors: SERIES_PROCESSORS,
  });

const pointRows = async (ch: TestCh) =>
  Number(
    (
      await ch.ch.query<{ n: string }>("t", "SELECT count() AS n FROM series_points FINAL WHERE deleted = 0")
    )[0]?.n ?? 0,
  );

describe("held recompute rounds", () => {
  let p: TestPipeline | undefined;
  afterAll(async () => p?.close());

  it("lag while held, are released at the window's span and on flush, and leave the state of a clean pass", async () => {
    // 300 blocks 15 minutes apart on each chain (about 4.7 hours) in rounds of at most 30 minutes; a 2-hour window.
    p = await startTestPipeline({
      blocks: 300,
      devnet: SERIES_DEVNET,
      confirmations: 0,
      kafka: false,
      env: { ...SERIES_TEST_ENV, SERIES_ARCHIVE_DIR: archiveDir(), RECOMPUTE_COALESCE_MS: String(2 * HOUR) },
      processors: SERIES_PROCESSORS,
    });
    const pipeline = p;
    let rounds = 0;
    let heldMax = 0;
    for (; rounds < 100; rounds++) {
      const r = await pipeline.ingestor.runOnce();
      heldMax = Math.max(heldMax, await countHeldBatches(pipeline.pg.pg, CONSUMER_GROUPS.seriesRecompute));
      if (r.caughtUp) break;
    }
    const held = await countHeldBatches(pipeline.pg.pg, CONSUMER_GROUPS.seriesRecompute);
    const heldHolders = await countHeldBatches(pipeline.pg.pg, CONSUMER_GROUPS.holdersRecompute);
    // Some rounds were released (points exist), fewer than all are held, and the last ones wait.
    expect(rounds).toBeGreaterThan(8);
    expect(heldMax).toBeGreaterThanOrEqual(3);
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThan(rounds);
    expect(heldHolders).toBeGreaterThan(0);
    expect(await pointRows(pipeline.ch)).toBeGreaterThan(0);
    const before = await seriesStateHash(pipeline.ch);

    // A flush recomputes what is held and empties the table.
    await pipeline.processors.get("series-recompute")!.flush();
    await pipeline.processors.get("holders-recompute")!.flush();
    expect(await countHeldBatches(pipeline.pg.pg)).toBe(0);
    const after = await seriesStateHash(pipeline.ch);
    expect(after.points).not.toEqual(before.points);
    expect(after.holders).not.toEqual(before.holders);

    const clean = await cleanState(pipeline, pipeline.ch);
    expect(after).toEqual(clean);
    // chDB opens one data directory per process: the next case opens its own.
    p = undefined;
    await pipeline.close();
  }, 300_000);

  it("a process killed with SIGKILL while 10 or more rounds are held loses none: after a reorg and a restart, the state of a clean pass", async () => {
    const chain = createDevnetChain({ seed: 11, ...SERIES_DEVNET });
    chain.advance(400);
    const server = await startDevnetServer(chain, { port: 0 });
    const ch = await openTestCh();
    // The children's PostgreSQL: a database on the server in the server pass, else a PGlite directory they open.
    const serverPg: TestPg | null = process.env.TEST_POSTGRES_URL ? await openTestPg() : null;
    const pgDir = serverPg ? "" : mkdtempSync(join(tmpdir(), "pglite-held-"));
    const setupPg =
      serverPg?.pg ?? (await createPostgres({ url: "", dataDir: pgDir, poolSize: 1, log: quietLog }));
    if (!serverPg) await migratePostgres(setupPg, quietLog);
    await registerDevnetDapps(setupPg, chain);
    if (!serverPg) await setupPg.close();

    const env = {
      LOG_LEVEL: "silent",
      NODE_URL: server.nodeUrl,
      EXPLORER_URL: server.explorerUrl,
      CONFIRMATIONS: "0",
      INGEST_START_TS: String(chain.options.startTimestamp - 1),
      INGEST_CONCURRENCY: "2",
      INGEST_POLL_MS: "50",
      INGEST_FIRST_WINDOW_MS: "600000",
      ...SERIES_TEST_ENV,
      SERIES_ARCHIVE_DIR: archiveDir(),
      // A day: every round of this chain (at most 30 minutes of blocks each) is held until a flush or a stop.
      RECOMPUTE_COALESCE_MS: String(DAY),
    };
    const children: ChildProcess[] = [];
    const start = (mode: "follow" | "finish", onMessage: (m: Record<string, unknown>) => void) => {
      const child = fork(ENTRY, [], {
        execArgv: ["--import", "tsx"],
        serialization: "advanced",
        env: {
          ...process.env,
          FOLLOW_ENV: JSON.stringify(env),
          FOLLOW_MODE: mode,
          FOLLOW_PROCESSORS: JSON.stringify(SERIES_PROCESSORS),
          FOLLOW_PG_URL: serverPg?.url ?? "",
          FOLLOW_PG_DIR: pgDir,
          FOLLOW_CH_DATABASE: ch.ch.database,
        },
        stdio: ["ignore", "ignore", "pipe", "ipc"],
      });
      children.push(child);
      serveChOverIpc(child, ch.ch);
      child.on("message", (m: unknown) => {
        if (typeof m === "object" && m !== null && (m as { t?: unknown }).t !== "ch")
          onMessage(m as Record<string, unknown>);
      });
      child.stderr?.on("data", (d: Buffer) => process.stderr.write(`[follow ${child.pid}] ${d}`));
      return child;
    };
    const exited = (c: ChildProcess) =>
      new Promise<void>((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) resolve();
        else c.once("exit", () => resolve());
      });

    try {
      // Catch up holding every round, then a reorg of chain 0 (its blocks' rounds are held), and more blocks: the
      // child is killed in the second round after the reorg, its rounds held.
      const reports: { held: number; caughtUp: boolean }[] = [];
      const first = start("follow", (m) => {
        if (m.t === "round") reports.push({ held: Number(m.held), caughtUp: Boolean(m.caughtUp) });
      });
      await waitFor(
        "the first process to catch up holding its rounds",
        async () => {
          if (first.exitCode !== null) throw new Error(`the process exited with ${first.exitCode}`);
          return reports.at(-1)?.caughtUp === true;
        },
        300_000,
      );
      const reorg = chain.reorg(0, 2);
      expect(reorg.orphaned.length).toBeGreaterThan(0);
      chain.advance(48);
      const seen = reports.length;
      await waitFor("two rounds after the reorg", async () => reports.length >= seen + 2, 120_000);
      first.kill("SIGKILL");
      await exited(first);
      expect(first.signalCode).toBe("SIGKILL");
      const heldAtKill = reports.at(-1)!.held;
      expect(heldAtKill).toBeGreaterThanOrEqual(10);
      chain.advance(48);

      // The restart recomputes what was held before it takes a batch, catches up and stops (handling what it held).
      let heldAtStart = -1;
      let heldAtEnd = -1;
      const second = start("finish", (m) => {
        if (m.t === "held") heldAtStart = Number(m.held);
        if (m.t === "done") heldAtEnd = Number(m.held);
      });
      await exited(second);
      expect(second.exitCode).toBe(0);
      expect(heldAtStart).toBeGreaterThanOrEqual(heldAtKill);
      expect(heldAtEnd).toBe(0);

      const state = await seriesStateHash(ch);
      expect(state.points!.rows).toBeGreaterThan(0);
      expect(state.holders!.rows).toBeGreaterThan(0);
      expect(state).toEqual(await cleanState({ chain, server }, ch));
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
      await Promise.all(children.map(exited));
      await serverPg?.close();
      if (pgDir) rmSync(pgDir, { recursive: true, force: true });
      await server.close();
      await ch.close();
    }
  }, 600_000);
});
