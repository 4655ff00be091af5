/**
 * Prints each test file's time in its worker, slowest first, and the run's total, from the report the last
 * `npm test` wrote (scripts/times-reporter.ts, configured in vitest.config.ts).
 * Usage: `npm run test:times -- [report] [count]`; defaults: test-output/times-embedded.json (the PostgreSQL + Kafka
 * pass writes test-output/times-server.json), 20.
 */
import { existsSync, readFileSync } from "node:fs";
import type { TimesReport } from "./times-reporter.ts";

const file = process.argv[2] ?? "test-output/times-embedded.json";
const count = Number(process.argv[3] ?? 20);
if (!existsSync(file)) {
  console.error(`no test times at ${file}: run the tests first`);
  process.exit(1);
}
const report = JSON.parse(readFileSync(file, "utf8")) as TimesReport;
const files = [...report.files].sort((a, b) => b.seconds - a.seconds);
const sum = files.reduce((s, f) => s + f.seconds, 0);

console.log("| file | s | of which import | tests (skipped) |\n|---|---:|---:|---:|");
for (const f of files.slice(0, count)) {
  const skipped = f.skipped ? ` (${f.skipped})` : "";
  const state = f.state === "passed" || f.state === "skipped" ? "" : ` ${f.state}`;
  console.log(
    `| ${f.path}${state} | ${f.seconds.toFixed(1)} | ${f.importSeconds.toFixed(1)} | ${f.tests}${skipped} |`,
  );
}
const tests = files.reduce((s, f) => s + f.tests, 0);
console.log(
  `\n${files.length} files, ${tests} tests: wall ${report.wallSeconds.toFixed(0)} s, sum of file times ${sum.toFixed(0)} s`,
);
