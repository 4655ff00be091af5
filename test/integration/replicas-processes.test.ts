// Test passes: server (replicas in child processes over Kafka and PostgreSQL; skipped with a notice elsewhere).
/**
 * Scale-out across processes: every processor runs as 3 replicas of its consumer group in 3 child processes (each
 * runs one replica of every processor, test/helpers/replica-process.ts), over Kafka (the kcat mock cluster) and the
 * PostgreSQL server. The first child starts alone (so it owns every partition at first); it is killed with SIGKILL
 * while the groups work through the stream, a fourth child joins, and the end state equals one clean single-replica
 * pass by hash (events, raw blocks, prices and figures' facts, series and holders).
 *
 * What the kill leaves is what a killed process leaves: its Kafka group members stop heartbeating (the brokers
 * hand their partitions to the others after the session timeout, and the batches they had not committed are
 * replayed: the recomputes' included, whose partitions are series instances and tokens), and its PostgreSQL
 * connections close, which frees its shared hold of the holders-recompute lock. The children reach the test's chDB
 * through this process (test/helpers/ch-over-ipc.ts), because chDB opens its data directory in one process only and
 * CI has no ClickHouse server.
 *
 * Runs with KAFKA_BROKERS and TEST_POSTGRES_URL (CI's Kafka pass; REPLICA_PROCESSES=0 skips it). Before the
 * holders' pending moments (ClickHouse 0017), 3 of 34 runs here ended with token-holders facts a killed holders
 * batch wrote and its larger replay did not take back (docs/known-gaps.md, Scale-out; holders-order.test.ts and
 * replay-rebatch.test.ts now reproduce it in one process); since the fix, 19 of 19 runs passed, most of them beside
 * other tests on both cores. On a mismatch it prints the rows.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { processorLockName } from "../../pipeline/processor.ts";
import { PROCESSORS } from "../../pipeline/runtime.ts";
import { serveChOverIpc } from "../helpers/ch-over-ipc.ts";
import { KAFKA_BROKERS, startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import { drainGroups, expectStateOfCleanPass, ingestAll, PROCESSOR_NAMES } from "../helpers/replicas.ts";

const optedOut = process.env.REPLICA_PROCESSES === "0";
const ready = !optedOut && Boolean(KAFKA_BROKERS) && Boolean(process.env.TEST_POSTGRES_URL);
if (!ready)
  console.warn(
    optedOut
      ? "[skip notice] processor replicas in processes: REPLICA_PROCESSES=0 skips it"
      : "[skip notice] processor replicas in processes: need Kafka (KAFKA_BROKERS, the kcat mock cluster) and " +
          "PostgreSQL (TEST_POSTGRES_URL) for the holders-recompute lock",
  );

const ENTRY = fileURLToPath(new URL("../helpers/replica-process.ts", import.meta.url));

interface Child {
  process: ChildProcess;
  /** Processors whose start resolved (a singleton's once it holds its lock). */
  started: Set<string>;
  failures: string[];
  calls: () => number;
}

function startChild(p: TestPipeline): Child {
  const env = {
    LOG_LEVEL: "silent",
    NODE_URL: p.config.NODE_URL,
    EXPLORER_URL: p.config.EXPLORER_URL,
    CONFIRMATIONS: String(p.config.CONFIRMATIONS),
    KAFKA_BROKERS: p.config.KAFKA_BROKERS.join(","),
    KAFKA_TOPIC_PREFIX: p.config.KAFKA_TOPIC_PREFIX,
  };
  const child = fork(ENTRY, [], {
    execArgv: ["--import", "tsx"],
    serialization: "advanced",
    env: {
      ...process.env,
      REPLICA_ENV: JSON.stringify(env),
      REPLICA_PG_URL: p.pg.url,
      REPLICA_CH_DATABASE: p.ch.ch.database,
    },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  const c: Child = { process: child, started: new Set(), failures: [], calls: () => 0 };
  c.calls = serveChOverIpc(child, p.ch.ch).calls;
  child.on("message", (m: { t?: string; name?: string; message?: string }) => {
    if (m.t === "started" && m.name) c.started.add(m.name);
    if (m.t === "failed") c.failures.push(`${m.name}: ${m.message}`);
  });
  // What a child says on stderr (a crash's stack) reaches the test's output.
  child.stderr?.on("data", (d: Buffer) => process.stderr.write(`[replica ${child.pid}] ${d}`));
  return c;
}

/** Waits until the child started `names` (a singleton starts once it holds its lock). */
async function startedIn(c: Child, names: readonly string[], what: string) {
  await waitFor(
    what,
    async () => {
      if (c.failures.length > 0) throw new Error(`a replica failed to start: ${c.failures.join("; ")}`);
      if (c.process.exitCode !== null) throw new Error(`a replica exited with ${c.process.exitCode}`);
      return names.every((n) => c.started.has(n));
    },
    120_000,
  );
}

/** How many sessions hold the holders-recompute lock (its replicas hold it shared). */
async function holdersRecomputeHolds(p: TestPipeline): Promise<number> {
  const rows = await p.pg.pg.query<{ n: string }>(
    "lock_holds",
    `SELECT count(*) AS n FROM pg_locks
     WHERE locktype = 'advisory' AND classid = 8738 AND objid = hashtext($1)::oid AND granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    [processorLockName(PROCESSORS["holders-recompute"].definition.group)],
  );
  return Number(rows[0]?.n ?? 0);
}

describe.skipIf(!ready)("every processor as 3 replicas in 3 processes", () => {
  let p: TestPipeline | undefined;
  const children: Child[] = [];
  afterAll(async () => {
    for (const c of children)
      if (c.process.exitCode === null && c.process.signalCode === null) c.process.kill("SIGTERM");
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.process.exitCode !== null || c.process.signalCode !== null) return resolve();
            const timer = setTimeout(() => {
              c.process.kill("SIGKILL");
              resolve();
            }, 15_000);
            c.process.once("exit", () => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
    await p?.close();
  });

  it("the first process killed with SIGKILL mid-stream and one process added: the state of one clean single-replica pass", async () => {
    p = await startTestPipeline({ blocks: 90, confirmations: 2, kafka: true });
    const pipeline = p;
    // This process only ingests: every replica runs in a child.
    for (const [name, processor] of pipeline.processors) {
      await processor.stop();
      pipeline.processors.delete(name);
    }

    // The first child starts alone; two more join. Every processor starts in each (none stands by for a lock).
    const first = startChild(pipeline);
    children.push(first);
    await startedIn(first, PROCESSOR_NAMES, "the first replica process to start every processor");
    for (let i = 0; i < 2; i++) children.push(startChild(pipeline));
    for (const c of children.slice(1))
      await startedIn(c, PROCESSOR_NAMES, "two more replica processes to start every processor");
    expect(await holdersRecomputeHolds(pipeline)).toBe(3);

    // A third of the stream; the first child is killed while the groups still work through it.
    await ingestAll(pipeline);
    await waitFor("the first replica to write", async () => first.calls() > 50, 60_000);
    first.process.kill("SIGKILL");
    await new Promise<void>((resolve) => first.process.once("exit", () => resolve()));
    expect(first.process.signalCode).toBe("SIGKILL");

    pipeline.chain.advance(90);
    await ingestAll(pipeline);
    // A fourth process joins mid-stream.
    const added = startChild(pipeline);
    children.push(added);
    await startedIn(added, PROCESSOR_NAMES, "the added replica process to start every processor");
    pipeline.chain.advance(90);
    await ingestAll(pipeline);
    await drainGroups(pipeline);

    // The killed process's hold went with its connection; the three live ones hold theirs.
    expect(await holdersRecomputeHolds(pipeline)).toBe(3);
    for (const c of children.slice(1)) expect(c.calls()).toBeGreaterThan(0);

    await expectStateOfCleanPass(pipeline);
  }, 400_000);
});
