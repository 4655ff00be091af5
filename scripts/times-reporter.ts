/**
 * A vitest reporter that writes each test file's time in its worker (environment, import, hooks and tests) and
 * the CPU time its worker process used (test/setup/cpu-usage.ts) to a JSON file, for `npm run test:times`.
 * Vitest's own JSON report times a file from its first test's start, which leaves out imports and the `beforeAll`
 * hooks where most integration files build their pipeline.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/** What the reporter writes. */
export interface TimesReport {
  /** From the run's start to its end, seconds. */
  wallSeconds: number;
  /** Load average (1 minute) at the run's start and end: how much else the machine ran. */
  load?: [number, number];
  files: {
    path: string;
    seconds: number;
    importSeconds: number;
    /** CPU time of the file's worker process (all threads) and the children it waited for; absent if not recorded. */
    cpuSeconds?: number;
    tests: number;
    skipped: number;
    state: string;
  }[];
  /** Each failed test (or file, when it failed outside a test) with its first error's message. */
  failures?: { path: string; test: string; message: string }[];
}

interface CpuRecord {
  file: string;
  userSeconds: number;
  systemSeconds: number;
  childrenSeconds: number;
}

export class TimesReporter implements Reporter {
  private start = Date.now();
  private startLoad = 0;
  constructor(
    private readonly file: string,
    private readonly cpuDir?: string,
  ) {}

  onTestRunStart(): void {
    this.start = Date.now();
    this.startLoad = loadAverage();
    if (this.cpuDir) rmSync(this.cpuDir, { recursive: true, force: true });
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const cpu = this.readCpu();
    const failures: NonNullable<TimesReport["failures"]> = [];
    for (const m of modules) {
      for (const error of m.errors())
        failures.push({ path: m.relativeModuleId, test: "(the file)", message: firstLines(error.message) });
      // A suite's hook that failed (its `beforeAll` timed out, say): its tests are reported skipped, not failed.
      for (const suite of m.children.allSuites())
        for (const error of suite.errors())
          failures.push({
            path: m.relativeModuleId,
            test: `${suite.fullName} (a hook of the suite)`,
            message: firstLines(error.message),
          });
      for (const t of m.children.allTests()) {
        const result = t.result();
        if (result.state === "failed")
          failures.push({
            path: m.relativeModuleId,
            test: t.fullName,
            message: firstLines(result.errors[0]?.message ?? "no error message"),
          });
      }
    }
    const report: TimesReport = {
      failures,
      wallSeconds: (Date.now() - this.start) / 1000,
      load: [this.startLoad, loadAverage()],
      files: modules.map((m) => {
        const d = m.diagnostic();
        const load = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration;
        const tests = [...m.children.allTests()];
        const used = cpu.get(m.moduleId);
        return {
          path: m.relativeModuleId,
          seconds: (load + d.duration) / 1000,
          importSeconds: load / 1000,
          ...(used ? { cpuSeconds: used.userSeconds + used.systemSeconds + used.childrenSeconds } : {}),
          tests: tests.length,
          skipped: tests.filter((t) => t.result().state === "skipped").length,
          state: m.state(),
        };
      }),
    };
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, `${JSON.stringify(report, null, 1)}\n`);
  }

  private readCpu(): Map<string, CpuRecord> {
    const out = new Map<string, CpuRecord>();
    if (!this.cpuDir || !existsSync(this.cpuDir)) return out;
    for (const name of readdirSync(this.cpuDir)) {
      const record = JSON.parse(readFileSync(join(this.cpuDir, name), "utf8")) as CpuRecord;
      out.set(record.file, record);
    }
    return out;
  }
}

/** An error message's first lines, enough to name what failed without its whole stack. */
function firstLines(message: string): string {
  return message.split("\n").slice(0, 6).join("\n").slice(0, 600);
}

function loadAverage(): number {
  try {
    return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  } catch {
    return 0;
  }
}
