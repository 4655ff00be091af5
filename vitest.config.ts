import { accessSync, constants, mkdtempSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { defineConfig } from "vitest/config";
import { TimesReporter } from "./scripts/times-reporter.ts";
import { serverPassFiles } from "./test/passes.ts";
import { weightedSequencer } from "./test/sequencer.ts";

// `npm run test:server` (TEST_PASS=server): only the files declared for the PostgreSQL + Kafka pass (test/passes.ts).
const pass = process.env.TEST_PASS ?? "embedded";
if (pass !== "embedded" && pass !== "server")
  throw new Error(`TEST_PASS is ${pass}: allowed are embedded, server`);

// Temporary directories (every test file's chDB and PGlite data, archive directories, the quick start's copy of the
// project) go to memory when the machine has /dev/shm and TMPDIR is not set: on disk, the stores' writes and syncs
// cost series-guarantees 85 s wall and 17 s of system time on an idle machine, in memory 59 s and 7 s
// (docs/development.md#test-times). One directory per run, removed when the run ends (with what files left in it).
// With less than 4 GiB free there (a container's default /dev/shm is 64 MiB) the system's temporary directory stays.
if (!process.env.TMPDIR && roomIn("/dev/shm", 4 * 2 ** 30)) {
  const dir = mkdtempSync("/dev/shm/vitest-");
  process.env.TMPDIR = dir;
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
}

// Where each file's worker writes its CPU time (read by the reporter at the run's end; emptied at its start).
// TEST_CPU_DIR and TEST_TIMES_FILE, when set, send both elsewhere (a run beside another keeps its figures apart).
const cpuDir = process.env.TEST_CPU_DIR || join(import.meta.dirname, "test-output", `cpu-${pass}`);
process.env.TEST_CPU_DIR = cpuDir;
const timesFile = process.env.TEST_TIMES_FILE || `test-output/times-${pass}.json`;

export default defineConfig({
  test: {
    include: pass === "server" ? serverPassFiles(import.meta.dirname) : ["test/**/*.test.ts"],
    // Forked processes (chDB: one data directory open per process at a time; each file closes its stores in its
    // last hooks). A worker runs files one after the other without a fresh module graph per file (`isolate: false`):
    // the worker's start and the imports (about 3 s of CPU) and Fastify's compiled schemas are paid once per worker,
    // not once per file (14 route files: 160 s of CPU isolated, 77 s not; docs/development.md#test-times). Files
    // must leave the process as they found it: stores closed, timers stopped, environment restored.
    pool: "forks",
    isolate: false,
    fileParallelism: true,
    // The embedded pass runs 3 files at once, the PostgreSQL + Kafka pass 4: both wait as well as compute (pg-boss's
    // expiry, the quick start's demo, Kafka's group joins, child processes). Measured on an idle machine
    // (docs/development.md#test-times): embedded 385 and 377 s with 3, 348 and 378 s with 4 at 4-13 % more CPU;
    // the server pass 396 s with 2 (172 s of CPU over 2 cores), 321-324 s with 4. TEST_WORKERS overrides both.
    maxWorkers: workers(),
    // The longest files first (measured wall times in test/weights.json): a long file started last is the pass's tail.
    sequence: { sequencer: weightedSequencer(pass) },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // A file that left chDB open fails by name (test/setup/leaks.ts); each file's share of its worker process's CPU
    // time is recorded (test/setup/cpu-usage.ts, into TEST_CPU_DIR)...
    setupFiles: ["test/setup/leaks.ts", "test/setup/cpu-usage.ts"],
    // ...and each file's wall and CPU time go to test-output/times-<pass>.json: `npm run test:times` prints the slowest.
    reporters: ["default", new TimesReporter(timesFile, cpuDir)],
  },
});

function workers(): number {
  const set = process.env.TEST_WORKERS;
  if (set === undefined || set === "") return pass === "server" ? 4 : 3;
  const n = Number(set);
  if (!Number.isInteger(n) || n < 1) throw new Error(`TEST_WORKERS is ${set}: a whole number of at least 1`);
  return n;
}

function roomIn(dir: string, bytes: number): boolean {
  try {
    accessSync(dir, constants.W_OK);
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize >= bytes;
  } catch {
    return false;
  }
}
