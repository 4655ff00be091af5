/**
 * CPU time of this process by thread group, from /proc/self/task/<tid>/stat (utime + stime, in clock ticks of
 * 10 ms) and the threads' names in /proc/self/task/<tid>/comm (Linux only). Node names all of its own threads
 * "node"; chDB names its threads by pool (ThreadPool, MergeMutate, BgSchPool …). chDB's async calls run on
 * libuv's thread pool (Node's, unnamed): {@link findLibuvThreads} finds those threads by giving the pool work
 * (pbkdf2, which runs there) and seeing which threads ran it.
 */
import { pbkdf2 } from "node:crypto";
import { openSync, readdirSync, readFileSync, readSync } from "node:fs";

/** USER_HZ: the unit of utime and stime. */
const TICK_MS = 10;

export type ThreadGroup = "main" | "chdb-queries" | "chdb-merges" | "node-runtime";

/** chDB's threads that run statements (the rest of its named threads merge, move, fetch and schedule). */
const CHDB_QUERY_THREADS =
  /^(ThreadPool|QueryPipelineEx|QueryPullPipeEx|QueryPushPipeEx|ParallelParser|ParallelFormat|PushingToViews|IOThreadPool|ParalInputsProc)/;

/** CPU ms of each live thread of this process, with its name. */
export function threadCpu(): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      // Fields after the name (which may hold spaces): state is field 3, utime 14, stime 15.
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      out.set(Number(tid), { name, ms: (Number(f[11]) + Number(f[12])) * TICK_MS });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** CPU ms of the whole process, ended threads included (/proc/self/stat). */
export function processCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

/** CPU ms of another process (the simulated network's), or NaN when it is gone. */
export function pidCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return Number.NaN;
  }
}

/** The threads of libuv's pool: the ones that run pbkdf2 work queued there (each job about 100 ms of CPU). */
export async function findLibuvThreads(): Promise<Set<number>> {
  const size = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const before = threadCpu();
  await Promise.all(
    Array.from(
      { length: size * 2 },
      () =>
        new Promise((resolve, reject) =>
          pbkdf2("x", "y", 200_000, 32, "sha256", (e, k) => (e ? reject(e) : resolve(k))),
        ),
    ),
  );
  const after = threadCpu();
  const pool = new Set<number>();
  for (const [tid, t] of after)
    if (tid !== process.pid && t.name === "node" && t.ms - (before.get(tid)?.ms ?? 0) >= 5 * TICK_MS)
      pool.add(tid);
  return pool;
}

/** The group of a thread: the main thread, chDB's statements (its pools and libuv's, where its calls run), chDB's merges and background, Node's own (GC, the loader). */
export function groupOf(tid: number, name: string, libuv: Set<number>): ThreadGroup {
  if (tid === process.pid) return "main";
  if (libuv.has(tid) || CHDB_QUERY_THREADS.test(name)) return "chdb-queries";
  if (name === "node") return "node-runtime";
  return "chdb-merges";
}

/** A snapshot of the process's CPU: per thread, and in all (ended threads included). */
export interface CpuSnapshot {
  threads: Map<number, { name: string; ms: number }>;
  totalMs: number;
}

export const cpuSnapshot = (): CpuSnapshot => ({ threads: threadCpu(), totalMs: processCpuMs() });

/**
 * CPU ms per group between two snapshots; `ended` is what threads that ended meanwhile used (the process's total
 * less the live threads'), `names` the thread names of each group with their ms (the busiest first).
 */
export function cpuByGroup(a: CpuSnapshot, b: CpuSnapshot, libuv: Set<number>) {
  const groups = new Map<ThreadGroup | "ended", number>();
  const names = new Map<ThreadGroup, Map<string, number>>();
  let live = 0;
  for (const [tid, t] of b.threads) {
    const ms = t.ms - (a.threads.get(tid)?.ms ?? 0);
    live += ms;
    const g = groupOf(tid, t.name, libuv);
    groups.set(g, (groups.get(g) ?? 0) + ms);
    const byName = names.get(g) ?? new Map<string, number>();
    const label = g === "chdb-queries" && libuv.has(tid) ? "libuv pool" : t.name;
    byName.set(label, (byName.get(label) ?? 0) + ms);
    names.set(g, byName);
  }
  groups.set("ended", Math.max(0, b.totalMs - a.totalMs - live));
  return { groups, names, totalMs: b.totalMs - a.totalMs };
}

/**
 * The calling thread's CPU time in ms, from /proc/thread-self/schedstat (nanoseconds on the CPU; the file is
 * opened once, by the thread that calls this first, and read again at offset 0: about 2 µs a read).
 */
export function threadCpuClock(): () => number {
  const fd = openSync("/proc/thread-self/schedstat", "r");
  const buf = Buffer.alloc(96);
  return () => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    return Number(buf.toString("latin1", 0, n).split(" ")[0]) / 1e6;
  };
}
