/**
 * Delivery as Kafka may make it, and deaths as a killed process dies, for the replay tests
 * (test/integration/replay-rebatch.test.ts):
 * - `rebatchingBus` hands each consumer group its records in other batches than they were published in: it may hold
 *   a delivery back to hand it over with later ones (a fetch returns whatever has arrived), or split one (a fetch
 *   returns part of it). A handler that throws `InjectedCrash` is dead: it is not called again until its processor
 *   subscribes anew (`crashed` names the groups to restart), and the records it did not finish wait for that, to
 *   be handed over together with whatever arrived meanwhile, as Kafka hands a new member everything uncommitted.
 * - `crashingClickHouse` makes a store's writes throw `InjectedCrash` before or after the write reaches the store.
 * The in-process bus underneath keeps every other rule (publish order per group; a publish resolves once handled).
 */
import type { BatchHandler, Bus, BusRecord } from "../../lib/stores/bus.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";

export class InjectedCrash extends Error {}

export type Random = () => number;

/** A seeded linear congruential generator. */
function seeded(seed: number): Random {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

/**
 * One generator per name (a consumer group, a write's label), all from one seed: groups and processors run
 * concurrently, so one shared generator would hand out its numbers in whatever order their awaits resolve, and the
 * same seed would not make the same run.
 */
export function seededStreams(seed: number): (name: string) => Random {
  const streams = new Map<string, Random>();
  return (name) => {
    let r = streams.get(name);
    if (!r) {
      let h = seed >>> 0;
      for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
      r = seeded(h % 2 ** 31);
      streams.set(name, r);
    }
    return r;
  };
}

/** Kafka's partitions of a topic keyed by chain index (lib/stores/bus.ts): order holds within one only. */
const PARTITIONS = 4;
const partitionOf = (key: string) => {
  let h = 0;
  for (const c of key) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h % PARTITIONS;
};

interface GroupState {
  group: string;
  random: Random;
  /** Handed to this process's bus but not yet handled by the group, per partition, in publish order. */
  held: BusRecord[][];
  handle: BatchHandler | null;
  dead: boolean;
  /** Serializes the group's handling: the bus's deliveries and `flush` never overlap. */
  tail: Promise<void>;
}

export interface RebatchingBus extends Bus {
  /** Groups whose handler died: their processors must be started again. */
  crashed(): string[];
  /** Records held back across all groups. */
  held(): number;
  /** Hands every living group what it holds, in batches as above, until each has handled it or died. */
  flush(): Promise<void>;
  /** How often a delivery was held back, a batch cut short, or a handler died. */
  readonly counts: { held: number; split: number; crashes: number; batches: number };
}

/**
 * `inner`'s records, handed over as Kafka's fetches may make them: the topic's records fall into partitions by key,
 * and a batch is a prefix of each partition's held records (the partitions in random order, as a coalesced fetch
 * of several partitions comes), with chance `split` of a partition's prefix being cut short (possibly to nothing,
 * so one chain runs ahead of another); with chance `hold` a delivery is only held, to go with later ones.
 */
export function rebatchingBus(
  inner: Bus,
  randomOf: (name: string) => Random,
  chances: { hold: number; split: number } = { hold: 0.3, split: 0.3 },
): RebatchingBus {
  const groups = new Map<string, GroupState>();
  const counts = { held: 0, split: 0, crashes: 0, batches: 0 };
  const heldIn = (s: GroupState) => s.held.reduce((n, q) => n + q.length, 0);
  const stateOf = (topic: string, group: string) => {
    const key = `${topic}\u0000${group}`;
    let s = groups.get(key);
    if (!s) {
      s = {
        group,
        random: randomOf(`bus ${topic} ${group}`),
        held: Array.from({ length: PARTITIONS }, () => []),
        handle: null,
        dead: false,
        tail: Promise.resolve(),
      };
      groups.set(key, s);
    }
    return s;
  };
  const serially = (s: GroupState, work: () => Promise<void>) => {
    const run = s.tail.then(work);
    s.tail = run.catch(() => undefined);
    return run;
  };
  /** One fetch's batch: a prefix of each partition, partitions in random order; and how much of each it took. */
  const nextBatch = (s: GroupState) => {
    const order = s.held.map((_, i) => i).sort(() => s.random() - 0.5);
    const taken = new Array<number>(PARTITIONS).fill(0);
    const batch: BusRecord[] = [];
    for (const p of order) {
      const q = s.held[p] as BusRecord[];
      let n = q.length;
      if (n > 0 && s.random() < chances.split) {
        n = Math.floor(s.random() * n);
        counts.split++;
      }
      taken[p] = n;
      batch.push(...q.slice(0, n));
    }
    if (batch.length === 0) {
      // Every partition was cut to nothing: the first one with records gives one.
      const p = s.held.findIndex((q) => q.length > 0);
      taken[p] = 1;
      batch.push(s.held[p]?.[0] as BusRecord);
    }
    return { batch, taken };
  };
  const drain = async (s: GroupState) => {
    while (heldIn(s) > 0 && !s.dead && s.handle) {
      const { batch, taken } = nextBatch(s);
      counts.batches++;
      try {
        await s.handle(batch);
      } catch (error) {
        if (!(error instanceof InjectedCrash)) throw error;
        // The process died in this batch: nothing of it counts as handled, and its handler is gone.
        s.dead = true;
        counts.crashes++;
        return;
      }
      for (const [p, n] of taken.entries()) s.held[p]?.splice(0, n);
    }
  };
  return {
    kind: inner.kind,
    counts,
    publish: (topic, messages) => inner.publish(topic, messages),
    async subscribe(options) {
      const s = stateOf(options.topic, options.group);
      const sub = await inner.subscribe({
        ...options,
        handle: (records) =>
          serially(s, async () => {
            for (const r of records) s.held[partitionOf(r.key)]?.push(r);
            if (s.dead || !s.handle) return;
            if (s.random() < chances.hold) {
              counts.held++;
              return;
            }
            await drain(s);
          }),
      });
      await serially(s, async () => {
        s.handle = options.handle;
        s.dead = false;
      });
      return {
        async stop() {
          await serially(s, async () => {
            s.handle = null;
          });
          await sub.stop();
        },
      };
    },
    async lag(named) {
      return (await inner.lag(named)) + [...groups.values()].reduce((n, s) => n + heldIn(s), 0);
    },
    async lags(named) {
      // What a group holds in its batch counts as its lag: it is not committed yet.
      return (await inner.lags(named)).map((l) => {
        const s = groups.get(`${l.topic}\u0000${l.group}`);
        return { ...l, lag: l.lag + (s ? heldIn(s) : 0) };
      });
    },
    close: () => inner.close(),
    crashed: () => [...groups.values()].filter((s) => s.dead).map((s) => s.group),
    held: () => [...groups.values()].reduce((n, s) => n + heldIn(s), 0),
    async flush() {
      await Promise.all([...groups.values()].map((s) => serially(s, () => drain(s))));
    },
  };
}

export interface CrashingClickHouse {
  /** Crashes so far. */
  readonly crashes: number;
  /** No more crashes from now on. */
  disarm(): void;
}

/**
 * Makes `ch`'s writes (inserts and statements) throw `InjectedCrash` with the given chance each, half of them
 * before the write reaches the store and half after it, `limit` times at most (each label draws from its own
 * stream). Patches the object in place, as every processor holds the same one.
 */
export function crashingClickHouse(
  ch: Ch,
  randomOf: (name: string) => Random,
  chance: number,
  limit: number,
): CrashingClickHouse {
  let crashes = 0;
  let armed = true;
  const insert = ch.insert.bind(ch);
  const command = ch.command.bind(ch);
  const crashing =
    <A extends unknown[]>(write: (...args: A) => Promise<void>) =>
    async (...args: A) => {
      const random = randomOf(`write ${String(args[0])}`);
      if (!armed || crashes >= limit || random() >= chance) return write(...args);
      crashes++;
      const after = random() < 0.5;
      if (after) await write(...args);
      throw new InjectedCrash(`injected crash ${after ? "after" : "before"} ${String(args[0])}`);
    };
  ch.insert = crashing(insert);
  ch.command = crashing(command);
  return {
    get crashes() {
      return crashes;
    },
    disarm() {
      armed = false;
    },
  };
}
