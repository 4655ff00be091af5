/**
 * Statement time by label, for the benches' profile mode (BENCH_PROFILE=1): wraps a stores' ClickHouse and
 * PostgreSQL handles so every query, command and insert adds its time to its label. ClickHouse calls go one at a
 * time through a queue (so that chDB's CPU counters read around a statement are its own), so a ClickHouse label's
 * time is its run time alone, without the wait for the queue, which is counted apart. The queue takes the place of
 * the chDB connection pool: profile mode's throughput is one connection's.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname } from "node:path";
import type { Ch } from "../lib/stores/clickhouse.ts";
import type { Stores } from "../lib/stores/index.ts";

/**
 * A CPU profile of the main thread over one timed section (not the set-up around it): starts the inspector's
 * profiler and returns a function that stops it and writes a `.cpuprofile` (open it in Chrome's DevTools), and
 * beside it a `.heapprofile` of what the section allocated (sampled every 32 KiB, collected objects included:
 * where the garbage collector's work comes from; DevTools' Memory tab opens it).
 */
export async function startCpuProfile(path: string): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 500 });
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 32_768,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // The directory is made here, so that a run does not fail at its end for want of it.
  mkdirSync(dirname(path), { recursive: true });
  await session.post("Profiler.start");
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    const { profile: heap } = await session.post("HeapProfiler.stopSampling");
    writeFileSync(path, JSON.stringify(profile));
    const heapPath = `${path.replace(/\.cpuprofile$/, "")}.heapprofile`;
    writeFileSync(heapPath, JSON.stringify(heap));
    session.disconnect();
    process.stdout.write(`  CPU profile of the timed section: ${path}; allocations: ${heapPath}\n`);
  };
}

/** chDB's own counters (`system.events`: queries, inserted rows, merges, CPU microseconds ...) by name. */
export async function chdbEvents(ch: Pick<Ch, "query">): Promise<Map<string, number>> {
  const rows = await ch.query<{ event: string; value: string }>(
    "bench_ch_events",
    "SELECT event, toString(value) AS value FROM system.events",
  );
  return new Map(rows.map((r) => [r.event, Number(r.value)]));
}

interface Tally {
  calls: number;
  ms: number;
  rows: number;
  /** chDB's own CPU (user + system) in the statement, from its `system.events` counters read around it. */
  cpuMs: number;
}

export function profileStores(stores: Stores) {
  const tallies = new Map<string, Tally>();
  const add = (key: string, ms: number, rows = 0, cpuMs = 0) => {
    const t = tallies.get(key) ?? { calls: 0, ms: 0, rows: 0, cpuMs: 0 };
    t.calls += 1;
    t.ms += ms;
    t.rows += rows;
    t.cpuMs += cpuMs;
    tallies.set(key, t);
  };
  // chDB's CPU counters (the session's threads and its background merges), read before and after each statement:
  // the statements run one at a time here, so the difference is the statement's CPU (plus any merge meanwhile).
  // The store's own query, taken before it is wrapped below (the counter reads are not statements of the run).
  const rawQuery = stores.ch?.kind === "chdb" ? stores.ch.query.bind(stores.ch) : undefined;
  const chCpuMs = async (): Promise<number> => {
    if (!rawQuery) return 0;
    const events = await chdbEvents({ query: rawQuery });
    return ((events.get("UserTimeMicroseconds") ?? 0) + (events.get("SystemTimeMicroseconds") ?? 0)) / 1000;
  };
  let chTail: Promise<unknown> = Promise.resolve();
  let waitMs = 0;
  const timed =
    <A extends unknown[], R>(
      store: string,
      verb: string,
      fn: (label: string, ...rest: A) => Promise<R>,
      rowsOf: (rest: A) => number = () => 0,
    ) =>
    async (label: string, ...rest: A): Promise<R> => {
      const queued = performance.now();
      const run = async () => {
        const cpu0 = store === "ch" ? await chCpuMs() : 0;
        const t0 = performance.now();
        waitMs += t0 - queued;
        try {
          return await fn(label, ...rest);
        } finally {
          const ms = performance.now() - t0;
          const cpu = store === "ch" ? (await chCpuMs()) - cpu0 : 0;
          add(`${store} ${verb} ${label}`, ms, rowsOf(rest), cpu);
        }
      };
      if (store !== "ch") return run();
      const result = chTail.then(run);
      chTail = result.catch(() => undefined);
      return result;
    };
  const ch = stores.ch;
  if (ch) {
    ch.query = timed("ch", "query", ch.query.bind(ch)) as typeof ch.query;
    ch.command = timed("ch", "command", ch.command.bind(ch));
    ch.insert = timed("ch", "insert", ch.insert.bind(ch), (rest) => (rest[1] as readonly object[]).length);
  }
  const pg = stores.pg;
  if (pg) pg.query = timed("pg", "query", pg.query.bind(pg)) as typeof pg.query;
  return {
    /** Forgets what was measured so far (the next table covers what runs from here). */
    reset(): void {
      tallies.clear();
      waitMs = 0;
    },
    /** The labels taking the most time, with calls, ms per call and rows inserted. */
    table(seconds: number, top = 25): string {
      const rows = [...tallies.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, top);
      const total = [...tallies.values()].reduce((s, t) => s + t.ms, 0);
      const lines = [
        `  statement time by label (${(total / 1000).toFixed(2)} s summed over ${seconds.toFixed(2)} s of run; ${(waitMs / 1000).toFixed(2)} s summed waiting for the chDB session):`,
        `  ${"label".padEnd(52)} ${"calls".padStart(6)} ${"total s".padStart(8)} ${"ms/call".padStart(8)} ${"rows".padStart(8)} ${"chDB CPU s".padStart(10)}`,
      ];
      for (const [label, t] of rows)
        lines.push(
          `  ${label.slice(0, 52).padEnd(52)} ${String(t.calls).padStart(6)} ${(t.ms / 1000).toFixed(2).padStart(8)} ${(t.ms / t.calls).toFixed(2).padStart(8)} ${String(t.rows || "").padStart(8)} ${label.startsWith("ch ") ? (t.cpuMs / 1000).toFixed(2).padStart(10) : ""}`,
        );
      return lines.join("\n");
    },
  };
}
