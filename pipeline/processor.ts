/**
 * The one processor contract: a processor is a declaration (name, topic, consumer group, codec,
 * handle) and this module owns the rest: subscribing, decoding, retrying transient failures,
 * metrics, logging and stopping.
 *
 *   topic → decode → handle(messages, ctx) → (writes resolved) → offset committed by the bus
 *
 * A processor declares what it writes per run (`runs`: one run of consecutive blocks as one write, one
 * retraction, then what the batch's runs touched), and the contract applies each batch by the batch rule
 * (`applyInRuns`, lib/batch.ts: runs and retractions in message order, each retraction after the run before it);
 * a processor whose messages are not applied in runs (normalize, registry) declares `handle` instead. Either
 * resolves only after its writes are durable: the bus
 * commits the batch's offset after that, so a crash replays the batch, and every processor must
 * therefore be idempotent (same messages, same state). A retryable failure (`AppError.retryable`)
 * is retried in place with backoff; any other failure goes back to the bus (Kafka redelivers the
 * batch, the in-process bus fails the publisher, which starts its round again).
 */
import { applyInRuns, type Block, type Retraction } from "../lib/batch.ts";
import { AppError } from "../lib/errors.ts";
import type { Logger } from "../lib/logger.ts";
import { createProcessorProgressRecorder, type ProcessorProgressRecorder } from "../lib/pipeline-progress.ts";
import { backoffMs, isRetryable, sleep } from "../lib/retry.ts";
import type { Codec } from "../lib/stores/avro.ts";
import type { BusRecord, Subscription } from "../lib/stores/bus.ts";
import {
  fencedClickHouse,
  isFenced,
  type SessionLock,
  waitForLock,
  waitForSharedLock,
} from "../lib/stores/pg-lock.ts";
import { mapWithTurns } from "../lib/turns.ts";
import type { PipelineDeps } from "./deps.ts";
import {
  type BlockSpan,
  createHoldPolicy,
  deleteHeldBatches,
  loadHeldBatches,
  saveHeldBatch,
} from "./held-batches.ts";
import { type Codecs, TOPICS, type TopicName } from "./messages.ts";

/** What `handle` receives besides the batch: the deps, a child logger and the state `setup` built. */
export interface ProcessorContext<S> {
  deps: PipelineDeps;
  log: Logger;
  state: S;
}

/**
 * What a processor writes per run of a batch, applied by the batch rule. `B` is the batch's scratch (what the runs
 * touched, counts), made by `begin` and handed to every run, retraction and `end`.
 */
export interface RunsDefinition<M extends BatchMessage, S, B> {
  /** Before the first run (default: no scratch). */
  begin?: (messages: M[], ctx: ProcessorContext<S>) => B | Promise<B>;
  /** Writes one run of consecutive block messages (never empty) as one write. */
  blocks: (run: Block<M>[], ctx: ProcessorContext<S>, batch: B) => Promise<void>;
  /** Applies one retraction, after the run before it is written. */
  retraction: (message: Retraction<M>, ctx: ProcessorContext<S>, batch: B) => Promise<void>;
  /** After the last run: what follows from what the runs touched (recomputes, metrics). */
  end?: (batch: B, ctx: ProcessorContext<S>) => Promise<void>;
}

type BatchMessage = { kind: "block" } | { kind: "retraction" };

/** A processor's batch handler: its own `handle`, or its `runs` applied by the batch rule. */
function batchHandler<M, S, B>(
  definition: ProcessorDefinition<M, S, B>,
): (messages: M[], ctx: ProcessorContext<S>) => Promise<void> {
  if (definition.handle) return definition.handle;
  const runs = definition.runs as RunsDefinition<M & BatchMessage, S, B> | undefined;
  if (!runs)
    throw new AppError(
      "processor_definition",
      `Processor ${definition.name} declares neither handle nor runs`,
    );
  return async (messages, ctx) => {
    const list = messages as (M & BatchMessage)[];
    const batch = (await runs.begin?.(list, ctx)) as B;
    await applyInRuns(list, {
      blocks: (run) => runs.blocks(run, ctx, batch),
      retraction: (m) => runs.retraction(m, ctx, batch),
    });
    await runs.end?.(batch, ctx);
  };
}

export interface ProcessorDefinition<M, S, B = undefined> {
  /** Name on the command line (`process <name>`), in logs and metrics. */
  name: string;
  /** Key of the topic in `TOPICS`. */
  topic: TopicName;
  /** Consumer group: one per processor, so each keeps its own offsets. */
  group: string;
  codec: (codecs: Codecs) => Codec<M>;
  /** Builds the processor's state once per start (repositories, registries loaded from the stores). */
  setup?: (deps: PipelineDeps) => S | Promise<S>;
  /** What the processor writes per run of a batch (block and retraction messages); or `handle`. */
  runs?: [M] extends [BatchMessage] ? RunsDefinition<M & BatchMessage, S, B> : never;
  /** Handles one batch whole, in message order (a processor that does not write per run); or `runs`. */
  handle?: (messages: M[], ctx: ProcessorContext<S>) => Promise<void>;
  /**
   * Batches handled at once over Kafka (default 1; each holds the partitions that arrived together, see
   * `coalesceBatches` in lib/stores/bus.ts). A processor that sets it keeps `handle` safe to run concurrently (the
   * series processor merges concurrent recomputes).
   */
  concurrentPartitions?: number;
  /**
   * One process at a time for this group (a processor that reads what its previous batch wrote and recomputes
   * from it): `start` first takes a PostgreSQL advisory lock named after the group, and a second process
   * stands by until the first stops. The lock is fenced: `setup` and `handle` get a `ch` whose writes check
   * the lock's fencing token first (and `deps.fence` for other writes), so a process whose lock was taken
   * over fails its write, drops its subscription without committing and stands by again. No effect on PGlite
   * (the embedded stores belong to one process).
   */
  singleton?: boolean;
  /**
   * Every replica holds the group's lock shared while it runs (PostgreSQL `pg_advisory_lock_shared`), so a command
   * that must not run beside the group takes it exclusively and is refused while a replica runs (and replicas stand
   * by while the command holds it). Writes go through the hold's fence: a replica whose hold was lost with its
   * connection fails its next write and takes it again. No effect on PGlite.
   */
  sharedLock?: boolean;
  /**
   * Over Kafka, how long a batch waits for other partitions' batches to join it before the handler runs (default 0;
   * `lingerMs` in lib/stores/bus.ts): for a processor whose batch costs the same whatever its size.
   */
  lingerMs?: number;
  /**
   * Called when this replica's partitions may have changed (it joined or rejoined its Kafka group), before it
   * handles a batch of its new assignment; not on the in-process bus.
   */
  onAssigned?: (ctx: ProcessorContext<S>) => void;
  /**
   * On the in-process bus, rounds may be held and handled together (RECOMPUTE_COALESCE_MS, ./held-batches.ts): for a
   * processor whose `handle` merges its messages into one pass that costs about the same whatever it holds, and that
   * writes the same state from several rounds' messages at once as from each in turn. `spanOf` gives the block times
   * a round covers.
   */
  hold?: { spanOf: (messages: M[]) => BlockSpan };
}

/**
 * The advisory lock of a singleton (or shared-lock) processor's group (also taken by commands that must not run
 * beside it).
 */
export const processorLockName = (group: string) => `processor:${group}`;

export interface Processor {
  readonly name: string;
  start(): Promise<void>;
  /** Stops taking batches; held rounds are handled first (or, when that fails, at the next start). */
  stop(): Promise<void>;
  /** Handles the held rounds now (a processor that holds none resolves at once). */
  flush(): Promise<void>;
}

export type ProcessorFactory = ((deps: PipelineDeps) => Processor) & {
  readonly definition: { name: string; topic: TopicName; group: string };
};

/** Block time of a message of either topic (a block or events message, or a retraction). */
function blockTsOf(m: unknown): number {
  const x = m as { timestamp?: unknown; block_timestamp?: unknown };
  const ts = typeof x.block_timestamp === "number" ? x.block_timestamp : x.timestamp;
  return typeof ts === "number" ? ts : Number(ts ?? 0);
}

/** Retries of one batch before the failure goes back to the bus. */
const RETRIES = 5;

/**
 * Messages decoded on the in-process bus, by their bytes: it hands every consumer group of a topic the same
 * Buffer, so a message is decoded once for all of them (the blocks topic has 3 groups, the events topic 6).
 * Handlers read messages and never change them.
 */
const decodedByBytes = new WeakMap<Buffer, unknown>();

export function defineProcessor<M, S = undefined, B = undefined>(
  definition: ProcessorDefinition<M, S, B>,
): ProcessorFactory {
  const handle = batchHandler(definition);
  const factory = (deps: PipelineDeps): Processor => {
    const log = deps.log.child({ component: definition.name });
    const topic = TOPICS[definition.topic];
    const codec = definition.codec(deps.codecs);
    const decode =
      deps.bus.kind === "memory"
        ? (r: BusRecord): M => {
            let m = decodedByBytes.get(r.value) as M | undefined;
            if (m === undefined) {
              m = codec.decode(r.value);
              decodedByBytes.set(r.value, m);
            }
            return m;
          }
        : (r: BusRecord): M => codec.decode(r.value);
    let stopping = new AbortController();
    let sub: Subscription | null = null;
    let lock: SessionLock | null = null;
    let progress: ProcessorProgressRecorder | null = null;

    const handleWithRetry = async (messages: M[], ctx: ProcessorContext<S>) => {
      for (let attempt = 1; ; attempt++) {
        const started = performance.now();
        try {
          await handle(messages, ctx);
          deps.metrics.processorBatchSeconds.observe(
            { processor: definition.name },
            (performance.now() - started) / 1000,
          );
          return;
        } catch (error) {
          deps.metrics.processorFailures.inc({
            processor: definition.name,
            retryable: String(isRetryable(error)),
          });
          if (isFenced(error)) {
            log.error(
              { err: error },
              "Lock lost (taken over by another process, or its session ended); standing by again.",
            );
            // Not awaited: the subscription's stop waits for this handler, which must fail first.
            void standBy();
            throw error;
          }
          if (attempt > RETRIES || !isRetryable(error) || stopping.signal.aborted) throw error;
          const delay = backoffMs(attempt, 200, 10_000);
          log.warn(
            { err: error, attempt, delay_ms: Math.round(delay), messages: messages.length },
            "Batch failed; retrying.",
          );
          await sleep(delay, stopping.signal);
        }
      }
    };

    // Held rounds (./held-batches.ts): on the in-process bus only. Over Kafka a replica's partitions can move to
    // another replica, which would then recompute the held rounds' instances beside this one's release.
    const holding = definition.hold && deps.bus.kind === "memory" ? definition.hold : null;
    const windowMs = holding ? deps.config.RECOMPUTE_COALESCE_MS : 0;
    const policy = createHoldPolicy(windowMs);
    let held: { id: number; messages: M[] }[] = [];
    let heldTimer: NodeJS.Timeout | null = null;
    let current: { ctx: ProcessorContext<S>; recorder: ProcessorProgressRecorder } | null = null;
    // Deliveries, releases on the timer and flushes, one at a time.
    let queue: Promise<unknown> = Promise.resolve();
    const serially = <T>(fn: () => Promise<T>): Promise<T> => {
      const run = queue.then(fn);
      queue = run.catch(() => undefined);
      return run;
    };
    const newestOf = (messages: M[]) => {
      let newest = 0;
      for (const m of messages) newest = Math.max(newest, blockTsOf(m));
      return newest;
    };
    const clearHeldTimer = () => {
      if (heldTimer) clearTimeout(heldTimer);
      heldTimer = null;
    };

    /** Handles the held rounds (with `extra`, the round that releases them) as one batch, then forgets them. */
    const release = async (
      ctx: ProcessorContext<S>,
      recorder: ProcessorProgressRecorder,
      extra: M[] = [],
    ) => {
      const rounds = held;
      const messages = [...rounds.flatMap((h) => h.messages), ...extra];
      if (messages.length === 0) return;
      await handleWithRetry(messages, ctx);
      const last = rounds.at(-1);
      if (last) await deleteHeldBatches(ctx.deps.pg, definition.group, last.id);
      held = [];
      policy.clear();
      clearHeldTimer();
      recorder.record(newestOf(messages));
      if (rounds.length > 0)
        log.debug({ rounds: rounds.length, messages: messages.length }, "Held rounds handled.");
    };

    /**
     * Rounds wait: they are released after the window in wall time (at least a second: rounds an earlier run left
     * whose recompute failed at start wait for it with any window).
     */
    const armHeldTimer = (ctx: ProcessorContext<S>, recorder: ProcessorProgressRecorder) => {
      if (heldTimer || held.length === 0) return;
      heldTimer = setTimeout(
        () => {
          heldTimer = null;
          serially(() => release(ctx, recorder)).catch((error) => {
            log.warn({ err: error }, "Handling the held rounds failed; trying again later.");
            if (!stopping.signal.aborted) armHeldTimer(ctx, recorder);
          });
        },
        Math.max(windowMs, 1_000),
      );
      heldTimer.unref();
    };

    /** Holds a round: stored before the delivery resolves, so the bus may move past it. */
    const hold = async (
      records: BusRecord[],
      messages: M[],
      span: BlockSpan,
      ctx: ProcessorContext<S>,
      recorder: ProcessorProgressRecorder,
    ) => {
      const id = await saveHeldBatch(
        ctx.deps.pg,
        definition.group,
        span,
        records.map((r) => r.value),
      );
      held.push({ id, messages });
      policy.add(span);
      armHeldTimer(ctx, recorder);
    };

    /**
     * What an earlier run held and did not handle (it stopped, or was killed): handled before any new batch. When
     * that fails they stay held (and stored): the next delivery, flush or the timer handles them.
     */
    const recoverHeld = async (ctx: ProcessorContext<S>, recorder: ProcessorProgressRecorder) => {
      held = [];
      policy.clear();
      clearHeldTimer();
      const rows = await loadHeldBatches(ctx.deps.pg, definition.group);
      if (rows.length === 0) return;
      for (const r of rows) {
        const messages = r.values.map((v) => codec.decode(v));
        held.push({ id: r.id, messages });
        policy.add(holding?.spanOf(messages) ?? { lo: 0, hi: 0 });
      }
      try {
        await release(ctx, recorder);
        log.info({ rounds: rows.length }, "Held rounds of an earlier run handled.");
      } catch (error) {
        log.warn(
          { err: error, rounds: rows.length },
          "Held rounds of an earlier run failed; they stay held.",
        );
        armHeldTimer(ctx, recorder);
      }
    };

    const { onAssigned } = definition;
    const subscribe = async () => {
      const owned = lock;
      // A lock holder writes through its fence: a write after a takeover fails instead of overwriting.
      const own: PipelineDeps = owned
        ? { ...deps, ch: fencedClickHouse(deps.ch, owned), fence: () => owned.check() }
        : deps;
      const state = (await definition.setup?.(own)) as S;
      const ctx: ProcessorContext<S> = { deps: own, log, state };
      const recorder = createProcessorProgressRecorder(deps, definition.name);
      progress = recorder;
      if (holding) {
        current = { ctx, recorder };
        await serially(() => recoverHeld(ctx, recorder));
      }
      sub = await deps.bus.subscribe({
        topic,
        group: definition.group,
        concurrency: definition.concurrentPartitions,
        onAssigned: onAssigned && (() => onAssigned(ctx)),
        lingerMs: definition.lingerMs,
        handle: async (records) => {
          const messages = await mapWithTurns(records, decode);
          if (holding && (windowMs > 0 || held.length > 0)) {
            await serially(async () => {
              const span = holding.spanOf(messages);
              let decision = policy.decide(span);
              if (decision === "run" && held.length > 0) decision = "release";
              if (decision === "hold") await hold(records, messages, span, ctx, recorder);
              else if (decision === "release") await release(ctx, recorder, messages);
              else {
                await handleWithRetry(messages, ctx);
                recorder.record(newestOf(messages));
              }
            });
          } else {
            await handleWithRetry(messages, ctx);
            recorder.record(newestOf(messages));
          }
          deps.metrics.pipelineMessages.inc({ stage: definition.name, topic }, records.length);
          log.debug({ messages: records.length }, "Batch handled.");
        },
      });
    };

    /** Takes the lock (a singleton, or a shared hold; standing by while another process holds it), then subscribes. */
    const run = async () => {
      if (definition.singleton || definition.sharedLock) {
        lock = await (definition.singleton ? waitForLock : waitForSharedLock)(
          deps.pg,
          processorLockName(definition.group),
          { log, signal: stopping.signal },
        );
        // Stopped while standing by.
        if (!lock) return;
      }
      try {
        await subscribe();
      } catch (error) {
        // A failed start leaves the lock to a standby.
        await progress?.stop();
        progress = null;
        await lock?.release();
        lock = null;
        throw error;
      }
    };

    /** After a fenced write: drop the subscription (nothing committed) and the lock, then stand by again. */
    let standingBy: Promise<void> | null = null;
    const standBy = () => {
      standingBy ??= (async () => {
        const s = sub;
        sub = null;
        await s
          ?.stop()
          .catch((error) => log.warn({ err: error }, "Stopping the fenced subscription failed."));
        await progress?.stop();
        progress = null;
        await lock?.release();
        lock = null;
        if (stopping.signal.aborted) return;
        await run().catch((error) => log.error({ err: error }, "Restart after losing the lock failed."));
      })().finally(() => {
        standingBy = null;
      });
      return standingBy;
    };

    return {
      name: definition.name,
      async start() {
        if (sub) throw new AppError("processor_running", `Processor ${definition.name} is already running`);
        stopping = new AbortController();
        await run();
      },
      async stop() {
        stopping.abort();
        await standingBy;
        await sub?.stop();
        sub = null;
        clearHeldTimer();
        const last = current;
        if (last && held.length > 0)
          await serially(() => release(last.ctx, last.recorder)).catch((error) =>
            log.warn({ err: error }, "Handling the held rounds at stop failed; the next start handles them."),
          );
        current = null;
        await progress?.stop();
        progress = null;
        await lock?.release();
        lock = null;
      },
      async flush() {
        const last = current;
        if (last) await serially(() => release(last.ctx, last.recorder));
      },
    };
  };
  return Object.assign(factory, {
    definition: { name: definition.name, topic: definition.topic, group: definition.group },
  });
}
