// Test passes: embedded and server (the singleton processors' lock runs on PostgreSQL only; PGlite's unfenced writes in the embedded pass).
/** The processor contract (retries, failures, message order) and the shared retry helper. */
import { getEventListeners } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/config.ts";
import { AppError } from "../../lib/errors.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { sleep, withRetry } from "../../lib/retry.ts";
import { createMemoryBus } from "../../lib/stores/bus.ts";
import { tryLock } from "../../lib/stores/pg-lock.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { type BlockMessage, createCodecs, TOPICS } from "../../pipeline/messages.ts";
import { defineProcessor, processorLockName } from "../../pipeline/processor.ts";
import { rawSinkProcessor } from "../../pipeline/processors/raw-sink.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const block = (height: number, seq: number): BlockMessage => ({
  kind: "block",
  chain_index: 3,
  hash: height.toString(16).padStart(64, "a"),
  height,
  timestamp: 1_700_000_000_000 + height * 8_000,
  seq,
  block_json: "{}",
  events_json: "[]",
});

async function memoryDeps(): Promise<PipelineDeps> {
  const config = loadConfig({ LOG_LEVEL: "silent" });
  return {
    config,
    log: quietLog,
    metrics: createMetrics(),
    bus: createMemoryBus(),
    codecs: await createCodecs(config),
    // These processors touch no store: the contract is what is under test.
    pg: null as never,
    ch: null as never,
  };
}

describe("defineProcessor", () => {
  it("retries a retryable failure in place: the publisher never sees it, the batch is handled again whole", async () => {
    const deps = await memoryDeps();
    const seen: number[][] = [];
    const processor = defineProcessor<BlockMessage>({
      name: "flaky",
      topic: "blocks",
      group: "test-flaky",
      codec: (c) => c.blocks,
      async handle(messages) {
        seen.push(messages.map((m) => m.height));
        if (seen.length === 1) throw new AppError("store_busy", "busy", { retryable: true });
      },
    })(deps);
    await processor.start();
    const batch = [block(1, 1), block(2, 2)];
    await deps.bus.publish(
      TOPICS.blocks,
      batch.map((m) => ({ key: "3", value: deps.codecs.blocks.encode(m) })),
    );
    expect(seen).toEqual([
      [1, 2],
      [1, 2],
    ]);
    const failures = await deps.metrics.processorFailures.get();
    expect(failures.values).toEqual([
      expect.objectContaining({ labels: { processor: "flaky", retryable: "true" }, value: 1 }),
    ]);
    await processor.stop();
  });

  it("hands a final failure back to the bus (the in-process publisher fails; Kafka would redeliver)", async () => {
    const deps = await memoryDeps();
    let calls = 0;
    const processor = defineProcessor<BlockMessage>({
      name: "broken",
      topic: "blocks",
      group: "test-broken",
      codec: (c) => c.blocks,
      async handle() {
        calls++;
        throw new Error("a bug");
      },
    })(deps);
    await processor.start();
    await expect(
      deps.bus.publish(TOPICS.blocks, [{ key: "3", value: deps.codecs.blocks.encode(block(1, 1)) }]),
    ).rejects.toThrow("a bug");
    expect(calls).toBe(1);
    await processor.stop();
  });

  it("on the in-process bus, decodes a message once for every consumer group of its topic", async () => {
    const deps = await memoryDeps();
    const blocks = deps.codecs.blocks;
    let decoded = 0;
    const counting = {
      ...blocks,
      decode: (buffer: Buffer) => {
        decoded++;
        return blocks.decode(buffer);
      },
    };
    const got = new Map<string, BlockMessage[]>();
    const processors = ["a", "b", "c"].map((g) =>
      defineProcessor<BlockMessage>({
        name: `reader-${g}`,
        topic: "blocks",
        group: `test-reader-${g}`,
        codec: () => counting,
        async handle(messages) {
          got.set(g, [...(got.get(g) ?? []), ...messages]);
        },
      })(deps),
    );
    for (const p of processors) await p.start();
    const batch = [block(1, 1), block(2, 2)];
    await deps.bus.publish(
      TOPICS.blocks,
      batch.map((m) => ({ key: "3", value: blocks.encode(m) })),
    );
    expect(decoded).toBe(2);
    for (const g of ["a", "b", "c"]) expect(got.get(g)).toEqual(batch);
    // Each message is decoded once, whichever publish brings it (three groups, one decode).
    await deps.bus.publish(TOPICS.blocks, [{ key: "3", value: blocks.encode(block(3, 3)) }]);
    expect(decoded).toBe(3);
    for (const p of processors) await p.stop();
  });

  it("decodes both branches of the union with their kind", async () => {
    const deps = await memoryDeps();
    const retraction: BlockMessage = { kind: "retraction", ...position(block(5, 8)), seq: 9 };
    for (const m of [block(5, 8), retraction]) {
      expect(deps.codecs.blocks.decode(deps.codecs.blocks.encode(m))).toEqual(m);
    }
  });
});

describe("a processor declared by its runs", () => {
  it("gets begin, then each run of blocks and each retraction in message order, then end, with one batch scratch", async () => {
    const deps = await memoryDeps();
    const calls: string[] = [];
    const processor = defineProcessor<BlockMessage, undefined, { n: number }>({
      name: "runs",
      topic: "blocks",
      group: "test-runs",
      codec: (c) => c.blocks,
      runs: {
        begin: (messages) => {
          calls.push(`begin ${messages.length}`);
          return { n: 0 };
        },
        async blocks(run, _ctx, batch) {
          batch.n++;
          calls.push(`blocks ${run.map((m) => m.height).join(",")}`);
        },
        async retraction(m, _ctx, batch) {
          batch.n++;
          calls.push(`retraction ${m.height}`);
        },
        async end(batch) {
          calls.push(`end ${batch.n}`);
        },
      },
    })(deps);
    await processor.start();
    const b = block(2, 2);
    const batch: BlockMessage[] = [
      block(1, 1),
      b,
      { kind: "retraction", ...position(b), seq: 3 },
      block(3, 4),
      { kind: "retraction", ...position(block(3, 4)), seq: 5 },
      { kind: "retraction", ...position(block(1, 1)), seq: 6 },
      block(4, 7),
    ];
    await deps.bus.publish(
      TOPICS.blocks,
      batch.map((m) => ({ key: "3", value: deps.codecs.blocks.encode(m) })),
    );
    await processor.stop();
    expect(calls).toEqual([
      "begin 7",
      "blocks 1,2",
      "retraction 2",
      "blocks 3",
      "retraction 3",
      "retraction 1",
      "blocks 4",
      "end 6",
    ]);
  });
});

describe("raw sink", () => {
  let ch: TestCh;
  beforeAll(async () => {
    ch = await openTestCh();
  });
  afterAll(async () => ch?.close());

  it("applies a block and its retraction in message order when both arrive in one batch", async () => {
    const deps = { ...(await memoryDeps()), ch: ch.ch };
    const sink = rawSinkProcessor(deps);
    await sink.start();
    const b = block(7, 100);
    const batch: BlockMessage[] = [b, { kind: "retraction", ...position(b), seq: 101 }, block(8, 102)];
    // One publish: the processor gets the three messages as one batch.
    await deps.bus.publish(
      TOPICS.blocks,
      batch.map((m) => ({ key: "3", value: deps.codecs.blocks.encode(m) })),
    );
    await sink.stop();
    const rows = await ch.ch.query<{ height: number; main_chain: boolean | number }>(
      "t",
      "SELECT height, main_chain FROM raw_blocks FINAL ORDER BY height",
    );
    expect(rows.map((r) => [r.height, Boolean(r.main_chain)])).toEqual([
      [7, false],
      [8, true],
    ]);
  });
});

function position(m: BlockMessage) {
  return { chain_index: m.chain_index, hash: m.hash, height: m.height, timestamp: m.timestamp };
}

describe("retry helper", () => {
  it("leaves no abort listener behind, however many sleeps run on one long-lived signal", async () => {
    const controller = new AbortController();
    for (let i = 0; i < 500; i++) await sleep(0, controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    const pending = sleep(60_000, controller.signal);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    await pending; // resolves at once on abort
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("retries only what the error declares retryable", async () => {
    let calls = 0;
    await expect(
      withRetry(
        async () => {
          calls++;
          throw new Error("final");
        },
        { retries: 5, baseMs: 0, maxMs: 0 },
      ),
    ).rejects.toThrow("final");
    expect(calls).toBe(1);
    calls = 0;
    const value = await withRetry(
      async () => {
        calls++;
        if (calls < 3) throw new AppError("busy", "busy", { retryable: true });
        return "done";
      },
      { retries: 5, baseMs: 0, maxMs: 0 },
    );
    expect([value, calls]).toEqual(["done", 3]);
  });
});

// A singleton processor (series, holders) takes a PostgreSQL advisory lock named after its group: a second
// process stands by until the first stops. PGlite has no second process to exclude.
const serverPg = Boolean(process.env.TEST_POSTGRES_URL);
if (!serverPg)
  console.warn(
    "[skip notice] singleton processors' lock: needs PostgreSQL (TEST_POSTGRES_URL; CI's third pass)",
  );

describe("singleton processors", () => {
  let t: TestPg;
  beforeAll(async () => {
    // Migrated: taking a lock increments its fencing token in processor_fences.
    t = await openTestPg();
  });
  afterAll(async () => t?.close());

  const singleton = (deps: PipelineDeps, seen: number[]) =>
    defineProcessor<BlockMessage>({
      name: "only-one",
      topic: "blocks",
      group: "test-only-one",
      codec: (c) => c.blocks,
      singleton: true,
      async handle(messages) {
        seen.push(...messages.map((m) => m.height));
      },
    })(deps);

  it.skipIf(!serverPg)(
    "a second process stands by until the first stops; commands see the lock taken",
    async () => {
      const [d1, d2, d3] = [await memoryDeps(), await memoryDeps(), await memoryDeps()];
      for (const d of [d1, d2, d3]) d.pg = t.pg;
      const [seen1, seen2] = [[] as number[], [] as number[]];
      const first = singleton(d1, seen1);
      await first.start();
      expect(await tryLock(t.pg, processorLockName("test-only-one"))).toBeNull();

      const second = singleton(d2, seen2);
      let started = false;
      const starting = second.start().then(() => {
        started = true;
      });
      await sleep(300);
      // It cannot have the lock while the first holds it (a pending start, not a timing claim).
      expect(started).toBe(false);
      // A standby stopped before it got the lock just ends.
      const third = singleton(d3, []);
      const standby = third.start();
      await third.stop();
      await standby;

      await first.stop();
      await starting;
      expect(started).toBe(true);
      await d2.bus.publish(TOPICS.blocks, [{ key: "3", value: d2.codecs.blocks.encode(block(7, 1)) }]);
      expect(seen2).toEqual([7]);
      await second.stop();
      // Released on stop: a command can take it now.
      const lock = await tryLock(t.pg, processorLockName("test-only-one"));
      expect(lock).not.toBeNull();
      await lock?.release();
    },
    60_000,
  );

  it.skipIf(!serverPg)(
    "shared-lock replicas all run at once; a command's exclusive lock is refused beside them, and they wait for it",
    async () => {
      const shared = (deps: PipelineDeps, seen: number[]) =>
        defineProcessor<BlockMessage>({
          name: "many",
          topic: "blocks",
          group: "test-many",
          codec: (c) => c.blocks,
          sharedLock: true,
          async handle(messages) {
            seen.push(...messages.map((m) => m.height));
          },
        })(deps);
      const name = processorLockName("test-many");
      const [d1, d2] = [await memoryDeps(), await memoryDeps()];
      for (const d of [d1, d2]) d.pg = t.pg;
      const [seen1, seen2] = [[] as number[], [] as number[]];
      const [a, b] = [shared(d1, seen1), shared(d2, seen2)];
      // Both start (neither stands by for the other) and both handle what their buses carry.
      await a.start();
      await b.start();
      await d1.bus.publish(TOPICS.blocks, [{ key: "1", value: d1.codecs.blocks.encode(block(5, 1)) }]);
      await d2.bus.publish(TOPICS.blocks, [{ key: "2", value: d2.codecs.blocks.encode(block(6, 1)) }]);
      expect([seen1, seen2]).toEqual([[5], [6]]);
      // A command (series backfill of token-holders) cannot take the lock while one replica runs.
      expect(await tryLock(t.pg, name)).toBeNull();
      await a.stop();
      expect(await tryLock(t.pg, name)).toBeNull();
      await b.stop();
      const command = await tryLock(t.pg, name);
      expect(command).not.toBeNull();

      // While the command holds it, a replica stands by; it starts once the command releases the lock.
      const c = shared(d1, []);
      let started = false;
      const starting = c.start().then(() => {
        started = true;
      });
      await sleep(300);
      expect(started).toBe(false);
      await command?.release();
      await starting;
      expect(started).toBe(true);
      await c.stop();
    },
    60_000,
  );

  it.skipIf(serverPg)(
    "on PGlite the lock excludes nothing (one process owns the embedded stores)",
    async () => {
      const [d1, d2] = [await memoryDeps(), await memoryDeps()];
      for (const d of [d1, d2]) d.pg = t.pg;
      const [a, b] = [singleton(d1, []), singleton(d2, [])];
      await a.start();
      await b.start();
      expect(await tryLock(t.pg, processorLockName("test-only-one"))).not.toBeNull();
      await a.stop();
      await b.stop();
    },
  );
});

// Fencing: a lock can be lost without its holder knowing (its connection cut); another process then takes it.
// The first process's next write must fail (its fencing token is no longer the newest) rather than overwrite.
describe("fenced singleton processors", () => {
  let t: TestPg;
  let c: TestCh;
  beforeAll(async () => {
    t = await openTestPg();
    c = await openTestCh({ migrate: false });
    await c.ch.command(
      "fence_probe",
      "CREATE TABLE fence_probe (who String, height UInt32) ENGINE = MergeTree ORDER BY (who, height)",
    );
  });
  afterAll(async () => {
    await c?.close();
    await t?.close();
  });

  const writer = (deps: PipelineDeps, who: string) =>
    defineProcessor<BlockMessage>({
      name: "fenced",
      topic: "blocks",
      group: "test-fenced",
      codec: (codecs) => codecs.blocks,
      singleton: true,
      async handle(messages, ctx) {
        await ctx.deps.ch.insert(
          "fence_probe_insert",
          "fence_probe",
          messages.map((m) => ({ who, height: m.height })),
        );
      },
    })(deps);
  const rows = async () =>
    (
      await c.ch.query<{ who: string; height: number }>(
        "fence_probe_rows",
        "SELECT who, height FROM fence_probe ORDER BY height, who",
      )
    ).map((r) => `${r.who}:${r.height}`);
  const send = (d: PipelineDeps, height: number) =>
    d.bus.publish(TOPICS.blocks, [{ key: "3", value: d.codecs.blocks.encode(block(height, height)) }]);

  it.skipIf(!serverPg)(
    "a process whose lock was taken over fails its write instead of overwriting, then stands by again",
    async () => {
      const [d1, d2] = [await memoryDeps(), await memoryDeps()];
      for (const d of [d1, d2]) Object.assign(d, { pg: t.pg, ch: c.ch });
      const first = writer(d1, "first");
      await first.start();
      await send(d1, 1);
      expect(await rows()).toEqual(["first:1"]);

      // The first process loses its lock without knowing: the server ends its lock session.
      const [killed] = await t.pg.query<{ ok: boolean }>(
        "kill_lock_session",
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_locks
         WHERE locktype = 'advisory' AND classid = 8738 AND objid = hashtext($1)::oid AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [processorLockName("test-fenced")],
      );
      expect(killed?.ok).toBe(true);
      // A second process takes the lock (and a newer fencing token) while the first still runs.
      const second = writer(d2, "second");
      await second.start();
      expect(await tryLock(t.pg, processorLockName("test-fenced"))).toBeNull();

      // The first one's write is refused (the batch fails, nothing committed); the holder's goes through.
      await expect(send(d1, 2)).rejects.toMatchObject({ code: "fenced" });
      await send(d2, 3);
      expect(await rows()).toEqual(["first:1", "second:3"]);

      // The fenced process stands by again, and takes over (with a newer token) when the holder stops.
      await second.stop();
      await waitUntil(
        async () =>
          (
            await t.pg.query(
              "fence_row",
              "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND classid = 8738 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            )
          ).length > 0,
      );
      await send(d1, 4);
      expect(await rows()).toEqual(["first:1", "second:3", "first:4"]);
      const [fence] = await t.pg.query<{ token: string }>(
        "fence_token",
        "SELECT token FROM processor_fences WHERE name = $1",
        [processorLockName("test-fenced")],
      );
      expect(Number(fence?.token)).toBe(3);
      await first.stop();
    },
    60_000,
  );

  it.skipIf(!serverPg)(
    "the token alone fences: a holder that has not seen its session end fails its write once a newer token exists",
    async () => {
      const d = await memoryDeps();
      Object.assign(d, { pg: t.pg, ch: c.ch });
      const p = writer(d, "unaware");
      await p.start();
      await send(d, 10);
      // Another holder's token, as after a takeover this process has not noticed (its lock session still open).
      await t.pg.query("bump_fence", "UPDATE processor_fences SET token = token + 1 WHERE name = $1", [
        processorLockName("test-fenced"),
      ]);
      await expect(send(d, 11)).rejects.toMatchObject({ code: "fenced" });
      expect((await rows()).filter((r) => r.startsWith("unaware"))).toEqual(["unaware:10"]);
      await p.stop();
    },
    60_000,
  );

  it.skipIf(serverPg)("on PGlite there is no lock to lose: writes go through unfenced", async () => {
    const d = await memoryDeps();
    Object.assign(d, { pg: t.pg, ch: c.ch });
    const p = writer(d, "only");
    await p.start();
    await send(d, 9);
    expect(await rows()).toContain("only:9");
    await p.stop();
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await sleep(25);
  }
}
