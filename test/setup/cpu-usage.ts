/**
 * Records the CPU time of each test file's worker process (every thread: JavaScript, chDB's, PGlite's) and of
 * the child processes it waited for (the quick start's demo, replica processes), for scripts/times-reporter.ts.
 * A worker process runs several files one after the other (vitest.config.ts: `isolate: false`), so a file's share
 * is what the process used from the end of the worker's previous file (or the worker's start, for its first file:
 * the worker's start and the imports the later files find cached are charged to it) to the end of this file's
 * last hook. Wall times follow the machine's load; CPU times much less, so these say what an idle machine would
 * take (the sum over 2 workers halved is its floor).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect } from "vitest";

interface Mark {
  user: number;
  system: number;
  children: number;
}

/** The process's usage at the end of the previous file it ran (kept across files: setup files run per file). */
const marks = globalThis as typeof globalThis & { __cpuUsageMark?: Mark };

const dir = process.env.TEST_CPU_DIR;
afterAll(() => {
  const file = expect.getState().testPath ?? "";
  if (!dir || !file) return;
  const self = process.cpuUsage();
  const now: Mark = { user: self.user / 1e6, system: self.system / 1e6, children: childrenCpuSeconds() };
  const before: Mark = marks.__cpuUsageMark ?? { user: 0, system: 0, children: 0 };
  marks.__cpuUsageMark = now;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${encodeURIComponent(file)}.json`),
    JSON.stringify({
      file,
      userSeconds: now.user - before.user,
      systemSeconds: now.system - before.system,
      childrenSeconds: now.children - before.children,
    }),
  );
});

/** User and system time of the children this process waited for (Linux's /proc; 0 elsewhere). */
function childrenCpuSeconds(): number {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    // Fields after the command's closing parenthesis: cutime and cstime are the 16th and 17th of /proc's list.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[13]) + Number(fields[14]);
    return Number.isFinite(ticks) ? ticks / 100 : 0;
  } catch {
    return 0;
  }
}
