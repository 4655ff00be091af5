/**
 * The log between pipeline stages. The only module that imports kafkajs.
 * - Kafka (KAFKA_BROKERS set): topics keyed by chain index, one consumer group per processor,
 *   offsets committed only after the handler resolved (its writes are durable). A subscription consumes until
 *   stopped: a commit refused by a rebalance makes its member rejoin, a consumer kafkajs gives up on is started
 *   again, and a stopped one stays stopped.
 * - In-process (default): the same contract without a broker. `publish` resolves only after every
 *   consumer group of the topic has handled the messages, so a publisher that advances its cursor
 *   after `publish` never skips anything; a group that is stopped keeps its queue until it resubscribes.
 */
import { CompressionTypes, type Consumer, Kafka, logLevel, Partitioners, type Producer } from "kafkajs";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";

export interface OutgoingMessage {
  key: string;
  value: Buffer;
}

export interface BusRecord extends OutgoingMessage {
  partition: number;
  offset: string;
}

export type BatchHandler = (records: BusRecord[]) => Promise<void>;

export interface SubscribeOptions {
  topic: string;
  /** Consumer group: every group gets every message once its handler resolves. */
  group: string;
  handle: BatchHandler;
  /**
   * Over Kafka, this many calls of `handle` may run at once (default 1: one at a time); the handler must then be
   * safe to run concurrently. Each call holds the batches of every partition that arrived meanwhile (as the
   * in-process bus hands over a publish of every chain). The in-process bus has one queue per group.
   */
  concurrency?: number;
  /**
   * Over Kafka, how long a batch that arrives while no call runs waits for other partitions' batches to join it
   * (default 0: those of the same turn of the event loop). A topic whose one publish reaches the consumer in several
   * fetch responses (the recomputes' topics, keyed by instance and token) gives fewer, larger calls.
   */
  lingerMs?: number;
  /**
   * Called each time this member (re)joins its group over Kafka, before it fetches for its new assignment: the
   * partitions it owns may have changed. The in-process bus has no rebalances and never calls it.
   */
  onAssigned?: () => void;
}

export interface Subscription {
  stop(): Promise<void>;
}

export interface Bus {
  readonly kind: "kafka" | "memory";
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /**
   * Messages published but not yet handled and committed by the groups subscribed in this process, or (Kafka) by
   * the named groups, wherever their members run (`topic` and `group` as given to `subscribe`).
   */
  lag(groups?: readonly { topic: string; group: string }[]): Promise<number>;
  /** The same, per topic and group (what a wait that timed out names: which group is behind, and by how much). */
  lags(groups?: readonly { topic: string; group: string }[]): Promise<GroupLag[]>;
  close(): Promise<void>;
}

export interface GroupLag {
  topic: string;
  group: string;
  lag: number;
}

export interface BusOptions {
  /** Kafka brokers (`KAFKA_BROKERS`); none: the in-process bus. */
  brokers: readonly string[];
  clientId: string;
  topicPrefix: string;
  log: Logger;
  /** Kafka: the most bytes one produce request carries before compression (`KAFKA_PRODUCE_MAX_BYTES`). */
  produceMaxBytes?: number;
}

/**
 * `KAFKA_PRODUCE_MAX_BYTES`'s default: an ingest round of thousands of blocks in one request (block JSON compresses
 * about tenfold, and the brokers' `socket.request.max.bytes` is 100 MiB by default).
 */
export const DEFAULT_PRODUCE_MAX_BYTES = 50_000_000;

/** What a record costs in a record batch besides its key and value (its length, offset and time varints), rounded up. */
const RECORD_OVERHEAD_BYTES = 32;

const recordBytes = (m: OutgoingMessage) => Buffer.byteLength(m.key) + m.value.length + RECORD_OVERHEAD_BYTES;
const sendBytes = (messages: readonly OutgoingMessage[]) => messages.reduce((n, m) => n + recordBytes(m), 0);

/**
 * Messages cut into sends of at most `maxBytes` (keys, values and each record's overhead), in publish order; a
 * message larger than `maxBytes` goes alone. Every partition's record batch in a send is at most the send's bytes.
 */
export function produceChunks(messages: readonly OutgoingMessage[], maxBytes: number): OutgoingMessage[][] {
  const chunks: OutgoingMessage[][] = [];
  let chunk: OutgoingMessage[] = [];
  let bytes = 0;
  for (const m of messages) {
    const size = recordBytes(m);
    if (chunk.length > 0 && bytes + size > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(m);
    bytes += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** Two parts of about half the bytes each, in order (both non-empty: `messages` has two or more). */
function splitInHalves(messages: OutgoingMessage[]): [OutgoingMessage[], OutgoingMessage[]] {
  const half = sendBytes(messages) / 2;
  let at = 1;
  for (let bytes = recordBytes(messages[0] as OutgoingMessage); at < messages.length - 1; at++) {
    const next = bytes + recordBytes(messages[at] as OutgoingMessage);
    if (next > half) break;
    bytes = next;
  }
  return [messages.slice(0, at), messages.slice(at)];
}

/** The broker's error type of a kafkajs error, looked for through the errors that wrap it. */
function kafkaErrorType(error: unknown): string | undefined {
  for (let e = error as { type?: unknown; cause?: unknown; originalError?: unknown } | undefined; e; ) {
    if (typeof e.type === "string") return e.type;
    e = (e.originalError ?? e.cause) as typeof e | undefined;
  }
  return undefined;
}

const totalLag = (lags: readonly GroupLag[]) => lags.reduce((n, g) => n + g.lag, 0);

export function createBus(options: BusOptions): Bus {
  return options.brokers.length > 0 ? createKafkaBus(options) : createMemoryBus();
}

interface MemoryGroup {
  handle: BatchHandler | null;
  /** Serializes deliveries so a group sees messages in publish order. */
  tail: Promise<void>;
  /** Deliveries waiting for a stopped group to come back. */
  waiting: (() => void)[];
  offset: number;
}

export function createMemoryBus(): Bus {
  const topics = new Map<string, Map<string, MemoryGroup>>();
  const groupsOf = (topic: string) => {
    let groups = topics.get(topic);
    if (!groups) {
      groups = new Map();
      topics.set(topic, groups);
    }
    return groups;
  };
  // Delivery is synchronous: only deliveries waiting for a stopped group are outstanding.
  const lags = () =>
    [...topics].flatMap(([topic, groups]) =>
      [...groups].map(([group, g]): GroupLag => ({ topic, group, lag: g.waiting.length })),
    );
  const deliver = async (group: MemoryGroup, messages: OutgoingMessage[]) => {
    while (!group.handle) await new Promise<void>((resolve) => group.waiting.push(resolve));
    // Fields named, not `{ ...m, partition, offset }`: on Node 20 a spread followed by more properties gives every
    // record a hidden class of its own, and each processor's reads of them go megamorphic (lib/events/stream.ts).
    const records = messages.map((m) => ({
      key: m.key,
      value: m.value,
      partition: 0,
      offset: String(group.offset++),
    }));
    await group.handle(records);
  };
  return {
    kind: "memory",
    async publish(topic, messages) {
      if (messages.length === 0) return;
      const deliveries = [...groupsOf(topic).values()].map((group) => {
        const run = group.tail.then(() => deliver(group, messages));
        // Keep the chain alive after a failure; the failure itself reaches this publisher.
        group.tail = run.catch(() => undefined);
        return run;
      });
      await Promise.all(deliveries);
    },
    async subscribe({ topic, group: name, handle }) {
      const groups = groupsOf(topic);
      let group = groups.get(name);
      if (group?.handle)
        throw new AppError("group_busy", `Group ${name} already consumes ${topic} in this process`);
      if (!group) {
        group = { handle: null, tail: Promise.resolve(), waiting: [], offset: 0 };
        groups.set(name, group);
      }
      group.handle = handle;
      for (const wake of group.waiting.splice(0)) wake();
      const g = group;
      return {
        async stop() {
          g.handle = null;
          // Let an in-flight delivery finish before the caller considers the consumer gone.
          await g.tail;
        },
      };
    },
    async lag() {
      return totalLag(lags());
    },
    async lags() {
      return lags();
    },
    async close() {
      topics.clear();
    },
  };
}

function kafkaLogCreator(log: Logger) {
  const child = log.child({ component: "kafka" });
  return () =>
    ({ level, log: entry }: { level: number; log: { message: string } & Record<string, unknown> }) => {
      const { message, ...rest } = entry;
      const fields = { kafka_message: message, ...rest };
      if (level === logLevel.ERROR) child.error(fields, "Kafka client error.");
      else if (level === logLevel.WARN) child.warn(fields, "Kafka client warning.");
      else child.debug(fields, "Kafka client event.");
    };
}

/**
 * Partition batches kafkajs hands a consumer at once (`partitionsConsumedConcurrently`): every partition of a
 * topic keyed by chain index, so one fetch's batches reach `coalesceBatches` together.
 */
const PARTITION_WORKERS = 16;

/**
 * One call of `handle` for the partition batches that arrive together, with at most `limit` calls in flight: the
 * batches kafkajs hands over at once (one per partition of a fetch), and those that arrive while a call runs, go
 * to the next call as one batch, each partition's records in their order. Each batch's promise settles with the
 * call that held it, so each partition commits only after its records were handled. A processor's statements per
 * batch do not grow with the partitions: over the kcat mock cluster (4 partitions), the holders processor handled
 * 800 blocks in 12 batches of 6–203 blocks, one partition's each, at 200–700 ms each whatever its size. With
 * `lingerMs`, a batch that arrives while no call runs waits that long for others (one publish's partitions reach
 * the consumer in several fetch responses, from different brokers).
 */
export function coalesceBatches(handle: BatchHandler, limit = 1, lingerMs = 0): BatchHandler {
  type Waiting = { records: BusRecord[]; resolve: () => void; reject: (error: unknown) => void };
  let pending: Waiting[] = [];
  let running = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    while (running < limit && pending.length > 0) {
      const held = pending;
      pending = [];
      const records: BusRecord[] = [];
      for (const w of held) for (const r of w.records) records.push(r);
      running += 1;
      // Through a promise: a handler that throws before its first await fails its batches, not this immediate.
      Promise.resolve(records)
        .then(handle)
        .then(
          () => {
            running -= 1;
            for (const w of held) w.resolve();
            if (pending.length > 0) schedule();
          },
          (error: unknown) => {
            running -= 1;
            for (const w of held) w.reject(error);
            if (pending.length > 0) schedule();
          },
        );
    }
  };
  // After the batches handed over in this turn of the event loop (kafkajs starts them one after another), or after
  // the linger.
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    if (lingerMs > 0) setTimeout(flush, lingerMs);
    else setImmediate(flush);
  };
  return (records) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ records, resolve, reject });
      schedule();
    });
}

function createKafkaBus(options: BusOptions): Bus {
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    logLevel: logLevel.WARN,
    logCreator: kafkaLogCreator(options.log),
    retry: { initialRetryTime: 100, retries: 8 },
  });
  const name = (topic: string) => `${options.topicPrefix}${topic}`;
  /** `KAFKA_PRODUCE_MAX_BYTES`, or less once the brokers refused a send as too large (kept for the process). */
  let sendLimit = options.produceMaxBytes ?? DEFAULT_PRODUCE_MAX_BYTES;
  /**
   * One send. A broker refuses a partition's record batch larger than its `message.max.bytes` (after compression;
   * 1 MiB by default) and the publisher would repeat the same publish forever, so a refused send goes again in
   * halves until each is taken, and later publishes are cut at the size taken. The whole publish is not cut small
   * beforehand: a consumer would then fetch a round in pieces, and every processor's batch costs statements that
   * do not grow with its size (cut at 1 MB, `bench:pipeline` over Kafka ran 2.5 times slower). The partitions that
   * took their batch of a refused send get it again (at least once: consumers are idempotent, as when ingest
   * repeats a round).
   */
  const sendSplitting = async (p: Producer, topic: string, chunk: OutgoingMessage[]): Promise<void> => {
    try {
      // Block JSON compresses about tenfold: smaller batches on the wire and on the brokers' disks.
      await p.send({
        topic,
        acks: -1,
        compression: CompressionTypes.GZIP,
        messages: chunk.map((m) => ({ key: m.key, value: m.value })),
      });
    } catch (error) {
      const type = kafkaErrorType(error);
      if (type !== "MESSAGE_TOO_LARGE" && type !== "RECORD_LIST_TOO_LARGE") {
        throw new AppError("kafka_publish_failed", `Publishing to ${topic} failed`, {
          retryable: Boolean((error as { retriable?: boolean }).retriable),
          cause: error,
        });
      }
      const bytes = sendBytes(chunk);
      if (chunk.length === 1) {
        throw new AppError(
          "kafka_publish_failed",
          `Publishing to ${topic} failed: the brokers refused a message as too large (${type}): key ` +
            `${JSON.stringify(chunk[0]?.key)}, ${chunk[0]?.value.length} bytes. Raise the brokers' message.max.bytes ` +
            "and the topic's max.message.bytes above it.",
          { retryable: false, cause: error },
        );
      }
      const halves = splitInHalves(chunk);
      const larger = Math.max(...halves.map(sendBytes));
      if (larger < sendLimit) {
        sendLimit = larger;
        options.log.warn(
          { topic, refused_bytes: bytes, messages: chunk.length, produce_max_bytes: sendLimit },
          "The Kafka brokers refused a record batch as too large; sending in parts of at most produce_max_bytes from now on (raise the brokers' message.max.bytes, or set KAFKA_PRODUCE_MAX_BYTES lower).",
        );
      }
      for (const half of halves) await sendSplitting(p, topic, half);
    }
  };
  let producer: Producer | null = null;
  let connecting: Promise<Producer> | null = null;
  const subscriptions = new Map<Consumer, { topic: string; groupId: string; stop(): Promise<void> }>();
  const getProducer = () => {
    connecting ??= (async () => {
      const p = kafka.producer({
        allowAutoTopicCreation: true,
        idempotent: false,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      await p.connect();
      producer = p;
      return p;
    })();
    return connecting;
  };
  return {
    kind: "kafka",
    async publish(topic, messages) {
      if (messages.length === 0) return;
      const p = await getProducer();
      // One send after another, so a key's messages stay in publish order.
      for (const chunk of produceChunks(messages, sendLimit)) await sendSplitting(p, name(topic), chunk);
    },
    async subscribe({ topic, group, handle, concurrency, onAssigned, lingerMs }) {
      const topicName = name(topic);
      const groupId = `${options.topicPrefix}${group}`;
      const log = options.log.child({ component: "kafka", group: groupId, topic: topicName });
      // Set by `stop` (or `close`): from then on nothing restarts this consumer.
      let stopped = false;
      let restartTimer: NodeJS.Timeout | null = null;
      let restarts = 0;
      const consumer = kafka.consumer({
        groupId,
        sessionTimeout: 6_000,
        rebalanceTimeout: 3_000,
        heartbeatInterval: 500,
        maxWaitTimeInMs: 200,
        allowAutoTopicCreation: true,
        // kafkajs restarts a consumer after a retriable crash on a timer of its own; a crash during `disconnect`
        // (its requests in flight fail as the connections close) sets that timer after the disconnect, and the
        // stopped subscription's consumer would come back and rejoin its group. Asked first, a stopped one says no.
        retry: { retries: 5, restartOnFailure: async () => !stopped },
      });
      const handleCoalesced = coalesceBatches(handle, Math.max(1, concurrency ?? 1), lingerMs ?? 0);
      const run = () =>
        consumer.run({
          partitionsConsumedConcurrently: Math.max(PARTITION_WORKERS, concurrency ?? 1),
          autoCommit: false,
          eachBatchAutoResolve: false,
          eachBatch: async ({
            batch,
            heartbeat,
            isRunning,
            isStale,
            resolveOffset,
            commitOffsetsIfNecessary,
          }) => {
            if (!isRunning() || isStale() || batch.messages.length === 0) return;
            const records = batch.messages.map((m) => ({
              key: m.key?.toString() ?? "",
              value: m.value ?? Buffer.alloc(0),
              partition: batch.partition,
              offset: m.offset,
            }));
            // A long batch (a processor's first archive pages, a big recompute) keeps its group membership:
            // kafkajs heartbeats only when asked, and the session expires after sessionTimeout without one.
            const beating = setInterval(() => void heartbeat().catch(() => undefined), 1_000);
            try {
              await handleCoalesced(records);
            } finally {
              clearInterval(beating);
            }
            // Commit only after the handler's writes resolved: a crash before this line replays the batch.
            // Through the batch's commit, not `consumer.commitOffsets`: that one goes through a kafkajs retrier
            // which wraps a commit refused because the group rebalances (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION,
            // UNKNOWN_MEMBER_ID: not retriable) in an error without the broker's error type; the runner then takes
            // it for a crash, not a rebalance to rejoin, and kafkajs does not restart after such a crash (the member
            // is gone for good). Here the broker's error reaches the runner as it is: the member rejoins, and
            // whoever owns the partition next replays the batch (handlers are idempotent).
            const next = (BigInt(batch.lastOffset()) + 1n).toString();
            await commitOffsetsIfNecessary({
              topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
            });
            // Resolved once committed: after a failed commit the next fetch starts at this batch again.
            resolveOffset(batch.lastOffset());
            await heartbeat();
          },
        });
      // kafkajs restarts a consumer only after a retriable crash; after any other (a group request the broker
      // refused, such as the kcat mock cluster's INVALID_REQUEST to a SyncGroup sent late; a handler's TypeError)
      // the consumer has left its group for good while this process runs on (and a singleton keeps its lock). The
      // subscription starts it again, after a delay that grows until it rejoins, until stopped.
      const restart = () => {
        restartTimer = null;
        if (stopped) return;
        run().catch((error) => {
          log.error({ err: error }, "Restarting the Kafka consumer failed; trying again.");
          scheduleRestart();
        });
      };
      const scheduleRestart = () => {
        if (stopped || restartTimer) return;
        const delay = Math.min(1_000 * 2 ** restarts++, 30_000);
        restartTimer = setTimeout(restart, delay);
      };
      consumer.on(consumer.events.GROUP_JOIN, () => {
        restarts = 0;
        onAssigned?.();
      });
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (payload.restart || stopped) return;
        log.error(
          { err: payload.error },
          "Kafka consumer crashed and kafkajs does not restart it; restarting it.",
        );
        scheduleRestart();
      });
      const stop = async () => {
        stopped = true;
        if (restartTimer) clearTimeout(restartTimer);
        restartTimer = null;
        subscriptions.delete(consumer);
        await consumer.disconnect();
      };
      subscriptions.set(consumer, { topic: topicName, groupId, stop });
      try {
        await consumer.connect();
        await consumer.subscribe({ topic: topicName, fromBeginning: true });
        await run();
      } catch (error) {
        await stop().catch(() => undefined);
        throw error;
      }
      return { stop };
    },
    async lag(groups) {
      return totalLag(await lags(groups));
    },
    lags,
    async close() {
      await Promise.allSettled([...subscriptions.values()].map((s) => s.stop()));
      if (producer) await producer.disconnect();
    },
  };

  async function lags(groups?: readonly { topic: string; group: string }[]): Promise<GroupLag[]> {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const out: GroupLag[] = [];
      const of = groups
        ? groups.map((g) => ({ topic: name(g.topic), groupId: `${options.topicPrefix}${g.group}` }))
        : [...subscriptions.values()];
      for (const { topic, groupId } of of) {
        const ends = await admin.fetchTopicOffsets(topic);
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        let lag = 0;
        for (const end of ends) {
          const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? "-1";
          const from = at === "-1" ? BigInt(end.low) : BigInt(at);
          lag += Number(BigInt(end.high) - from);
        }
        out.push({ topic, group: groupId, lag });
      }
      return out;
    } finally {
      await admin.disconnect();
    }
  }
}
