/**
 * A process running one replica of every processor, for the multi-process replica test
 * (test/integration/replicas-processes.test.ts): its own Kafka clients (its own member of each consumer group), its
 * own PostgreSQL pool (its own lock sessions) on the test's database, and the test's chDB through the parent
 * (`chOverIpc`). Started with `fork` and the settings in REPLICA_* variables; it tells the parent `{ t: "started",
 * name }` when a processor has started (a singleton once it holds its lock), and stops on SIGTERM or when the parent
 * is gone. The test kills it with SIGKILL.
 */
import { loadConfig } from "../../lib/config.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { createBus } from "../../lib/stores/bus.ts";
import { createPostgres } from "../../lib/stores/postgres.ts";
import type { PipelineDeps } from "../../pipeline/deps.ts";
import { createCodecs } from "../../pipeline/messages.ts";
import type { Processor } from "../../pipeline/processor.ts";
import { PROCESSORS, type ProcessorName } from "../../pipeline/runtime.ts";
import { chOverIpc } from "./ch-over-ipc.ts";
import { quietLog } from "./stores.ts";

const env = (name: string) => {
  const v = process.env[name];
  if (!v) throw new Error(`replica process: ${name} is not set`);
  return v;
};

const config = loadConfig(JSON.parse(env("REPLICA_ENV")) as Record<string, string>);
const pg = await createPostgres({ url: env("REPLICA_PG_URL"), dataDir: "", poolSize: 5, log: quietLog });
const bus = createBus({
  brokers: config.KAFKA_BROKERS,
  clientId: `replica-process-${process.pid}`,
  topicPrefix: config.KAFKA_TOPIC_PREFIX,
  log: quietLog,
});
const deps: PipelineDeps = {
  config,
  log: quietLog,
  metrics: createMetrics(),
  pg,
  ch: chOverIpc(env("REPLICA_CH_DATABASE")),
  bus,
  codecs: await createCodecs(config),
};

const processors: Processor[] = [];
for (const name of Object.keys(PROCESSORS) as ProcessorName[]) {
  const p = PROCESSORS[name](deps);
  processors.push(p);
  // A singleton's start resolves once it holds its lock: it stands by until then.
  p.start().then(
    () => process.send?.({ t: "started", name }),
    (error: unknown) => process.send?.({ t: "failed", name, message: String(error) }),
  );
}

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  for (const p of processors) await p.stop().catch(() => undefined);
  await bus.close().catch(() => undefined);
  await pg.close().catch(() => undefined);
  process.exit(0);
}
process.on("SIGTERM", () => void stop());
process.on("disconnect", () => void stop());
