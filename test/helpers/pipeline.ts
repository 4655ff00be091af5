/**
 * A whole pipeline for tests: the simulated network (test double of the node and explorer), real
 * stores, the bus (in-process, or Kafka when KAFKA_BROKERS is set: the kcat mock cluster in CI),
 * processors and ingest, plus the API on the same stores.
 */

import { createDevnetChain, type DevnetChain, type DevnetOptions } from "../../devnet/chain.ts";
import { registerDevnetDapps } from "../../devnet/register.ts";
import { type DevnetServer, startDevnetServer } from "../../devnet/server.ts";
import { type Config, loadConfig } from "../../lib/config.ts";
import { NOTICE_CHAIN_INDEX } from "../../lib/events/notices.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { type Bus, createBus } from "../../lib/stores/bus.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { createIngestor, type Ingestor } from "../../pipeline/ingest/ingest.ts";
import { createNodeClient } from "../../pipeline/ingest/node-client.ts";
import { createCodecs } from "../../pipeline/messages.ts";
import type { Processor } from "../../pipeline/processor.ts";
import { ingestOptions, PROCESSORS, type ProcessorName } from "../../pipeline/runtime.ts";
import { createTestApp, type TestApp } from "./app.ts";
import {
  openTestCh,
  openTestPg,
  quietLog,
  recentLogLines,
  suffix,
  type TestCh,
  type TestPg,
} from "./stores.ts";

export const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? "";

export interface TestPipeline {
  chain: DevnetChain;
  server: DevnetServer;
  pg: TestPg;
  ch: TestCh;
  config: Config;
  deps: PipelineDeps;
  processors: Map<ProcessorName, Processor>;
  ingestor: Ingestor;
  api: TestApp;
  /**
   * Runs ingest rounds until nothing is left to publish, then waits for every consumer group to finish and for
   * the rounds the recomputes hold (RECOMPUTE_COALESCE_MS) to be handled.
   */
  catchUp(maxRounds?: number): Promise<void>;
  restartProcessor(name: ProcessorName): Promise<void>;
  close(): Promise<void>;
}

export interface TestPipelineOptions {
  devnet?: DevnetOptions;
  blocks?: number;
  confirmations?: number;
  kafka?: boolean;
  env?: Record<string, string>;
  /** Reuse stores (for example a second pass into a fresh database is made with new ones). */
  stores?: { pg: TestPg; ch: TestCh };
  chain?: DevnetChain;
  server?: DevnetServer;
  /** Wraps the bus the pipeline uses (for example test/helpers/rebatch.ts's, which re-batches deliveries). */
  wrapBus?: (bus: Bus) => Bus;
  /**
   * The processors to start (default every one). A test of one part (ingest, the pollers) starts only the consumer
   * groups its assertions read: every other group would handle each block for nothing (and over Kafka join a group).
   */
  processors?: readonly ProcessorName[];
}

export async function startTestPipeline(options: TestPipelineOptions = {}): Promise<TestPipeline> {
  const chain = options.chain ?? createDevnetChain({ seed: 7, ...options.devnet });
  if (!options.chain) chain.advance(options.blocks ?? 300);
  const server = options.server ?? (await startDevnetServer(chain, { port: 0 }));
  const pg = options.stores?.pg ?? (await openTestPg());
  const ch = options.stores?.ch ?? (await openTestCh());
  // The second CI pass sets KAFKA_BROKERS: the same suite then runs over Kafka (kcat mock cluster).
  const useKafka = options.kafka ?? Boolean(KAFKA_BROKERS);
  const config = loadConfig({
    LOG_LEVEL: "silent",
    NODE_URL: server.nodeUrl,
    EXPLORER_URL: server.explorerUrl,
    CONFIRMATIONS: String(options.confirmations ?? 2),
    INGEST_START_TS: String(chain.options.startTimestamp - 1),
    INGEST_CONCURRENCY: "2",
    INGEST_POLL_MS: "50",
    INGEST_WINDOW_MS: "600000",
    // Whole windows from the first round, as these tests were written for (the slow start is the demo's default).
    INGEST_FIRST_WINDOW_MS: "600000",
    KAFKA_BROKERS: useKafka ? KAFKA_BROKERS : "",
    KAFKA_TOPIC_PREFIX: useKafka ? `t${suffix()}.` : "",
    // Every round recomputed at once, as these tests were written for, unless a run sets a window for all of them.
    RECOMPUTE_COALESCE_MS: process.env.TEST_RECOMPUTE_COALESCE_MS ?? "0",
    ...options.env,
  });
  const created = createBus({
    brokers: config.KAFKA_BROKERS,
    clientId: "test",
    topicPrefix: config.KAFKA_TOPIC_PREFIX,
    log: quietLog,
  });
  const bus = options.wrapBus ? options.wrapBus(created) : created;
  const deps: PipelineDeps = {
    config,
    log: quietLog,
    metrics: createMetrics(),
    pg: pg.pg,
    ch: ch.ch,
    bus,
    codecs: await createCodecs(config),
  };
  await registerDevnetDapps(pg.pg, chain);
  const processors = new Map<ProcessorName, Processor>();
  // Consumer groups join in parallel (each Kafka group join waits for the broker's rebalance delay).
  await Promise.all(
    (options.processors ?? (Object.keys(PROCESSORS) as ProcessorName[])).map(async (name) => {
      const p = PROCESSORS[name](deps);
      await p.start();
      processors.set(name, p);
    }),
  );
  const client = createNodeClient({ url: config.NODE_URL, apiKey: "", log: quietLog });
  const ingestor = createIngestor(deps, client, ingestOptions(config));
  const api = await createTestApp({
    stores: { pg, ch },
    env: {
      PUBLIC_RPM: "1000000",
      ...options.env,
      EXPLORER_URL: server.explorerUrl,
      NODE_URL: server.nodeUrl,
    },
  });
  return {
    chain,
    server,
    pg,
    ch,
    config,
    deps,
    processors,
    ingestor,
    api,
    async catchUp(maxRounds = 500) {
      for (let i = 0; i < maxRounds; i++) {
        const r = await ingestor.runOnce();
        if (r.caughtUp) {
          // Normalize publishes to the events topic while it consumes: zero lag twice in a row means done.
          let zeros = 0;
          await waitFor(
            "consumer groups to drain",
            async () => {
              zeros = (await bus.lag()) === 0 ? zeros + 1 : 0;
              return zeros >= 2;
            },
            120_000,
            () => behindGroups(bus),
          );
          for (const p of processors.values()) await p.flush();
          return;
        }
      }
      throw new Error(`ingest did not catch up within ${maxRounds} rounds`);
    },
    async restartProcessor(name) {
      await processors.get(name)?.stop();
      const p = PROCESSORS[name](deps);
      await p.start();
      processors.set(name, p);
    },
    async close() {
      await ingestor.stop();
      for (const p of processors.values()) await p.stop();
      await bus.close();
      await api.close();
      if (!options.server) await server.close();
      if (!options.stores) {
        await pg.close();
        await ch.close();
      }
    },
  };
}

/**
 * Polls `check` until it returns true, failing after `timeoutMs` with `what` in the message. The pause between
 * checks grows from 10 ms to 200 ms: a condition met soon is seen soon, and a long wait does not spend the
 * machine's CPU on checks (many are ClickHouse queries) that the files beside it need.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
  /** What the state was when the wait gave up (printed in the error, with the last warnings logged). */
  detail?: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let pause = 10; Date.now() < deadline; pause = Math.min(200, pause * 1.5)) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, pause));
  }
  const state = detail
    ? await detail().catch((error: Error) => `(its state could not be read: ${error.message})`)
    : "";
  const logged = recentLogLines();
  throw new Error(
    `timed out waiting for ${what} (${timeoutMs} ms)${state ? `: ${state}` : ""}${
      logged.length > 0 ? `\nthe last warnings and errors logged in this worker:\n${logged.join("\n")}` : ""
    }`,
  );
}

/** Which consumer groups are behind, and by how many messages (a drain that timed out says so). */
export async function behindGroups(
  bus: Bus,
  groups?: readonly { topic: string; group: string }[],
): Promise<string> {
  const behind = (await bus.lags(groups)).filter((l) => l.lag > 0);
  return behind.length === 0
    ? "no group behind at the end"
    : behind.map((l) => `${l.group} on ${l.topic} is ${l.lag} behind`).join(", ");
}

/**
 * Hash of the whole state of the events table (every column but the version), and its row count. Rows
 * are hashed as text: `cityHash64(*)` is NULL for a row with a NULL column, which sum() would skip.
 * Reorg notices (chain index 17) are left out: they record what a run went through (a reorg reaching
 * served rows), which a clean pass over the winning chain never sees; `noticesStateHash` covers them.
 */
export async function eventsStateHash(ch: TestCh): Promise<{
  rows: number;
  hash: string;
  lookup_rows: number;
  lookup_hash: string;
  tx_rows: number;
  tx_hash: string;
}> {
  const [r] = await ch.ch.query<{ rows: string; hash: string }>(
    "events_state_hash",
    "SELECT count() AS rows, toString(sum(cityHash64(toString(tuple(*))))) AS hash FROM (SELECT * EXCEPT (version) FROM events FINAL WHERE main_chain AND chain_index != {n:UInt8})",
    { n: NOTICE_CHAIN_INDEX },
  );
  // The copies keyed by address and token must match the events they copy.
  const [l] = await ch.ch.query<{ rows: string; hash: string }>(
    "lookup_state_hash",
    "SELECT count() AS rows, toString(sum(cityHash64(toString(tuple(*))))) AS hash FROM (SELECT * EXCEPT (version) FROM events_by_key FINAL WHERE main_chain)",
  );
  // The main-chain events a transaction read finds (`event_ids_by_tx` also keeps ids of orphaned blocks,
  // which the read drops: they are not state).
  const [t] = await ch.ch.query<{ rows: string; hash: string }>(
    "tx_ids_state_hash",
    `SELECT count() AS rows, toString(sum(cityHash64(tx_id, id, block_hash))) AS hash FROM events FINAL
     WHERE main_chain AND tx_id != '' AND (cityHash64(tx_id), id) IN (SELECT tx, id FROM event_ids_by_tx)`,
  );
  return {
    rows: Number(r?.rows ?? 0),
    hash: r?.hash ?? "",
    lookup_rows: Number(l?.rows ?? 0),
    lookup_hash: l?.hash ?? "",
    tx_rows: Number(t?.rows ?? 0),
    tx_hash: t?.hash ?? "",
  };
}

/**
 * Hash of the reorg notices: their rows in `events` (but the version), offloaded payloads and records.
 * Rows are hashed as text: `cityHash64(*)` is NULL for a row with a NULL column (every notice's
 * contract_event_index), and sum() skips it.
 */
export async function noticesStateHash(
  ch: TestCh,
): Promise<{ rows: number; hash: string; payloads: string; records: string }> {
  const [r] = await ch.ch.query<{ rows: string; hash: string }>(
    "notices_state_hash",
    `SELECT count() AS rows, toString(sum(cityHash64(toString(tuple(*))))) AS hash
     FROM (SELECT * EXCEPT (version) FROM events FINAL WHERE chain_index = {n:UInt8})`,
    { n: NOTICE_CHAIN_INDEX },
  );
  const [p] = await ch.ch.query<{ hash: string }>(
    "notice_payloads_hash",
    `SELECT toString(sum(cityHash64(ref, payload))) AS hash FROM event_payloads FINAL
     WHERE ref IN (SELECT id FROM events WHERE chain_index = {n:UInt8})`,
    { n: NOTICE_CHAIN_INDEX },
  );
  const [rec] = await ch.ch.query<{ hash: string }>(
    "notice_records_hash",
    "SELECT toString(sum(cityHash64(toString(tuple(*))))) AS hash FROM (SELECT * FROM reorg_notices FINAL)",
  );
  return {
    rows: Number(r?.rows ?? 0),
    hash: r?.hash ?? "",
    payloads: p?.hash ?? "",
    records: rec?.hash ?? "",
  };
}
