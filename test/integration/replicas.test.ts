// Test passes: server (replicas of every consumer group over Kafka and PostgreSQL's locks; skipped with a notice elsewhere).
/**
 * Scale-out: every processor runs as 3 replicas of its consumer group over Kafka (the kcat mock cluster), one
 * replica of each dies mid-stream and one is added, and the end state equals one clean single-replica pass by
 * hash (events, raw blocks, prices and figures' facts, series and holders).
 *
 * Replicas run in this process, each with a Kafka client of its own (its own group member), because the
 * embedded ClickHouse (chDB) opens its data directory in one process only and CI has no ClickHouse server. A
 * replica "dies" as a killed process would: its store writes fail from that moment (the batch in flight is never
 * committed, so the group hands its partitions to the others, which replay it) and it leaves the group. The
 * recomputes have one writer per series instance and per token through their topics' keys (series-recompute,
 * holders-recompute), with no exclusive lock; holders-recompute replicas hold their group's lock shared (so
 * `series backfill` of token-holders never runs beside them): their sessions are ended by the server mid-stream, so
 * their next writes are refused (fencing) and each takes its hold again.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createBus } from "../../lib/stores/bus.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { type Processor, processorLockName } from "../../pipeline/processor.ts";
import { PROCESSORS, type ProcessorName } from "../../pipeline/runtime.ts";
import { KAFKA_BROKERS, startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { drainGroups, expectStateOfCleanPass, ingestAll, PROCESSOR_NAMES } from "../helpers/replicas.ts";
import { quietLog } from "../helpers/stores.ts";

const serverPg = Boolean(process.env.TEST_POSTGRES_URL);
const ready = Boolean(KAFKA_BROKERS) && serverPg;
if (!ready)
  console.warn(
    "[skip notice] processor replicas: need Kafka (KAFKA_BROKERS, the kcat mock cluster) and PostgreSQL " +
      "(TEST_POSTGRES_URL) for the holders-recompute lock",
  );

/**
 * A store handle whose writes and reads fail once `kill()` is called, as a killed process's would; it counts the
 * writes that landed by label.
 */
function killable(ch: Ch): { ch: Ch; kill(): void; writes: Map<string, number> } {
  let dead = false;
  const alive = () => {
    if (dead) throw new Error("replica killed");
  };
  const writes = new Map<string, number>();
  const wrote = (label: string) => writes.set(label, (writes.get(label) ?? 0) + 1);
  return {
    writes,
    kill: () => {
      dead = true;
    },
    ch: {
      get kind() {
        return ch.kind;
      },
      get database() {
        return ch.database;
      },
      async query(label, sql, params) {
        alive();
        return ch.query(label, sql, params);
      },
      async queryRaw(label, sql, options) {
        alive();
        return ch.queryRaw(label, sql, options);
      },
      async command(label, sql, params) {
        alive();
        await ch.command(label, sql, params);
        wrote(label);
      },
      async insert(label, table, rows) {
        alive();
        await ch.insert(label, table, rows);
        wrote(label);
      },
      close: () => ch.close(),
    },
  };
}

interface Replica {
  name: ProcessorName;
  processor: Processor;
  /** The start: a singleton's resolves once it holds the lock (it stands by until then). */
  started: Promise<void>;
  deps: PipelineDeps;
  /** Writes of this replica that landed, by statement label. */
  writes: Map<string, number>;
  kill(): Promise<void>;
}

let replicaCount = 0;
function startReplica(p: TestPipeline, name: ProcessorName): Replica {
  const n = ++replicaCount;
  const store = killable(p.deps.ch);
  const deps: PipelineDeps = {
    ...p.deps,
    ch: store.ch,
    bus: createBus({
      brokers: p.config.KAFKA_BROKERS,
      clientId: `replica-${n}`,
      topicPrefix: p.config.KAFKA_TOPIC_PREFIX,
      log: quietLog,
    }),
  };
  const processor = PROCESSORS[name](deps);
  const started = processor.start();
  started.catch(() => undefined);
  return {
    name,
    processor,
    started,
    deps,
    writes: store.writes,
    async kill() {
      store.kill();
      await processor.stop().catch(() => undefined);
      await deps.bus.close().catch(() => undefined);
    },
  };
}

const LOCK_WHERE = `locktype = 'advisory' AND classid = 8738 AND objid = hashtext($1)::oid AND granted
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/** Ends, from the server, the sessions that hold a processor's lock (holds lost with their connections). */
async function endLockSessions(p: TestPipeline, name: ProcessorName): Promise<number> {
  const rows = await p.pg.pg.query<{ ok: boolean }>(
    "end_lock_session",
    `SELECT pg_terminate_backend(pid) AS ok FROM pg_locks WHERE ${LOCK_WHERE}`,
    [processorLockName(PROCESSORS[name].definition.group)],
  );
  return rows.filter((r) => r.ok).length;
}

/** How many sessions hold a processor's lock. */
async function lockHolders(p: TestPipeline, name: ProcessorName): Promise<number> {
  const rows = await p.pg.pg.query<{ n: string }>(
    "lock_holders",
    `SELECT count(*) AS n FROM pg_locks WHERE ${LOCK_WHERE}`,
    [processorLockName(PROCESSORS[name].definition.group)],
  );
  return Number(rows[0]?.n ?? 0);
}

describe.skipIf(!ready)("every processor as 3 replicas of its consumer group", () => {
  let p: TestPipeline | undefined;
  const replicas: Replica[] = [];
  afterAll(async () => {
    for (const r of replicas) await r.processor.stop().catch(() => undefined);
    for (const r of replicas) await r.deps.bus.close().catch(() => undefined);
    await p?.close();
  });

  it("one replica of each killed mid-stream and one added: the state of one clean single-replica pass", async () => {
    // The pipeline's own processors are the first replica of each group; two more join beside them.
    p = await startTestPipeline({ blocks: 90, confirmations: 2, kafka: true });
    const pipeline = p;
    for (const name of PROCESSOR_NAMES)
      for (let i = 0; i < 2; i++) replicas.push(startReplica(pipeline, name));

    // A third of the stream, then (while the groups still work through it) one replica of each dies.
    await ingestAll(pipeline);
    for (const name of PROCESSOR_NAMES) {
      const victim = replicas.find((r) => r.name === name);
      await victim?.kill();
    }
    // The holders-recompute replicas (each holds the group's lock shared) lose their lock sessions: their next
    // writes are fenced, and each takes its hold again.
    expect(await endLockSessions(pipeline, "holders-recompute")).toBeGreaterThanOrEqual(2);

    pipeline.chain.advance(90);
    await ingestAll(pipeline);
    // One replica of each joins mid-stream.
    for (const name of PROCESSOR_NAMES) replicas.push(startReplica(pipeline, name));
    pipeline.chain.advance(90);
    await ingestAll(pipeline);
    await drainGroups(pipeline);

    // Holders-recompute replicas that wrote since their sessions ended took their holds again (one that got no batch
    // since has not noticed yet: a hold is checked at write).
    expect(await lockHolders(pipeline, "holders-recompute")).toBeGreaterThanOrEqual(1);

    // Recomputes scale out: replicas of series-recompute and holders-recompute each wrote for their own instances
    // and tokens (the pipeline's own processors are not counted).
    const wrote = (name: ProcessorName, label: string) =>
      replicas.filter((r) => r.name === name && (r.writes.get(label) ?? 0) > 0).length;
    expect(wrote("series-recompute", "series_points_recompute")).toBeGreaterThanOrEqual(2);
    expect(wrote("holders-recompute", "holder_hour_sums_recompute")).toBeGreaterThanOrEqual(2);

    await expectStateOfCleanPass(pipeline);
  }, 300_000);
});
