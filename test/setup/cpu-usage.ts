/**
 * Records the CPU time of each test file's worker process (every thread: JavaScript, chDB's, PGlite's) and of
 * the child processes it waited for (the quick start's demo, replica processes), for scripts/times-reporter.ts.
 * Every file runs in its own forked process (vitest.config.ts), so the process's usage at the end of its last hook
 * is the file's. Wall times follow the machine's load; CPU times much less, so these say what an idle machine
 * would take (the sum over 2 workers halved is its floor).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect } from "vitest";

const dir = process.env.TEST_CPU_DIR;
afterAll(() => {
  // The file whose hooks these are (the worker runs one file).
  const file = expect.getState().testPath ?? "";
  if (!dir || !file) return;
  const self = process.cpuUsage();
  const children = childrenCpuSeconds();
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${encodeURIComponent(file)}.json`),
    JSON.stringify({
      file,
      userSeconds: self.user / 1e6,
      systemSeconds: self.system / 1e6,
      childrenSeconds: children,
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
