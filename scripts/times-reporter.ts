/**
 * A vitest reporter that writes each test file's time in its worker (environment, import, hooks and tests) to a
 * JSON file, for `npm run test:times`. Vitest's own JSON report times a file from its first test's start, which
 * leaves out imports and the `beforeAll` hooks where most integration files build their pipeline.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/** What the reporter writes. */
export interface TimesReport {
  /** From the run's start to its end, seconds. */
  wallSeconds: number;
  files: {
    path: string;
    seconds: number;
    importSeconds: number;
    tests: number;
    skipped: number;
    state: string;
  }[];
}

export class TimesReporter implements Reporter {
  private start = Date.now();
  constructor(private readonly file: string) {}

  onTestRunStart(): void {
    this.start = Date.now();
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const report: TimesReport = {
      wallSeconds: (Date.now() - this.start) / 1000,
      files: modules.map((m) => {
        const d = m.diagnostic();
        const load = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration;
        const tests = [...m.children.allTests()];
        return {
          path: m.relativeModuleId,
          seconds: (load + d.duration) / 1000,
          importSeconds: load / 1000,
          tests: tests.length,
          skipped: tests.filter((t) => t.result().state === "skipped").length,
          state: m.state(),
        };
      }),
    };
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(this.file, `${JSON.stringify(report, null, 1)}\n`);
  }
}
