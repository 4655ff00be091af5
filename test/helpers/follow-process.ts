/**
 * A process running the embedded pipeline (ingest and the series processors on the in-process bus), for the held
 * rounds' crash test (test/integration/recompute-coalesce.test.ts): PostgreSQL is the test's database
 * (FOLLOW_PG_URL) or a PGlite data directory (FOLLOW_PG_DIR) this process opens alone, and chDB is the test's,
 * reached through the parent (`chOverIpc`). Started with `fork`, settings in FOLLOW_* variables.
 *
 * FOLLOW_MODE=follow: runs ingest rounds for ever (a pause when caught up) and tells the parent after each
 * `{ t: "round", held, caughtUp }` (held: rounds in `processor_held_batches`); the test kills it with SIGKILL.
 * FOLLOW_MODE=finish: tells `{ t: "held", held }` before the processors start (what their start will recompute),
 * catches up, stops the processors (which handle what they hold), tells `{ t: "done", held }` and exits.
 */
import { loadConfig } from "../../lib/config.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { migratePostgres } from "../../lib/migrate.ts";
import { createBus } from "../../lib/stores/bus.ts";
import { createPostgres } from "../../lib/stores/postgres.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { countHeldBatches } from "../../pipeline/held-batches.ts";
import { createIngestor } from "../../pipeline/ingest/ingest.ts";
import { createNodeClient } from "../../pipeline/ingest/node-client.ts";
import { createCodecs } from "../../pipeline/messages.ts";
import { ingestOptions, PROCESSORS, type ProcessorName } from "../../pipeline/runtime.ts";
import { chOverIpc } from "./ch-over-ipc.ts";
import { quietLog } from "./stores.ts";

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`follow process: ${name} is not set`);
  return v;
};

const config = loadConfig(JSON.parse(env("FOLLOW_ENV")) as Record<string, string>);
const names = JSON.parse(env("FOLLOW_PROCESSORS")) as ProcessorName[];
const pg = await createPostgres({
  url: process.env.FOLLOW_PG_URL ?? "",
  dataDir: process.env.FOLLOW_PG_DIR ?? "",
  poolSize: 5,
  log: quietLog,
});
await migratePostgres(pg, quietLog);
const bus = createBus({ brokers: [], clientId: "follow-process", topicPrefix: "", log: quietLog });
const deps: PipelineDeps = {
  config,
  log: quietLog,
  metrics: createMetrics(),
  pg,
  ch: chOverIpc(env("FOLLOW_CH_DATABASE")),
  bus,
  codecs: await createCodecs(config),
};
const send = (m: Record<string, unknown>) =>
  new Promise<void>((resolve) => process.send?.(m, () => resolve()) ?? resolve());

const finish = env("FOLLOW_MODE") === "finish";
if (finish) await send({ t: "held", held: await countHeldBatches(pg) });
const processors = names.map((name) => PROCESSORS[name](deps));
for (const p of processors) await p.start();
const ingestor = createIngestor(
  deps,
  createNodeClient({ url: config.NODE_URL, apiKey: "", log: quietLog }),
  ingestOptions(config),
);

if (finish) {
  for (let i = 0; i < 500 && !(await ingestor.runOnce()).caughtUp; i++);
  for (const p of processors) await p.stop();
  await send({ t: "done", held: await countHeldBatches(pg) });
  await pg.close();
  process.exit(0);
}
for (;;) {
  const r = await ingestor.runOnce();
  await send({ t: "round", held: await countHeldBatches(pg), caughtUp: r.caughtUp });
  if (r.caughtUp) await new Promise((resolve) => setTimeout(resolve, 50));
}
