/**
 * Prints each test file's time in its worker, slowest first, and the run's total, from the report the last
 * `npm test` wrote (scripts/times-reporter.ts, configured in vitest.config.ts).
 * Usage: `npm run test:times -- [report] [count] [--save-weights <pass>]`; defaults: test-output/times-embedded.json
 * (the PostgreSQL + Kafka pass writes test-output/times-server.json), 20. `--save-weights embedded|server` also
 * writes the report's wall seconds per file into test/weights.json under that pass: the order in which the pass
 * hands its files to the workers (test/sequencer.ts), longest first. `--failures` prints only the failed tests with
 * their first error lines (CI prints them last, so the tail of its log names what failed).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { readWeights, WEIGHTS_FILE } from "../test/sequencer.ts";
import type { TimesReport } from "./times-reporter.ts";

// Piped into `head`: a closed pipe ends the listing quietly.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const args = process.argv.slice(2);
const saveAt = args.indexOf("--save-weights");
const savePass = saveAt >= 0 ? args.splice(saveAt, 2)[1] : undefined;
if (saveAt >= 0 && savePass !== "embedded" && savePass !== "server") {
  console.error(
    `--save-weights takes the pass the report is of (embedded or server), got ${savePass ?? "nothing"}`,
  );
  process.exit(2);
}
const failuresAt = args.indexOf("--failures");
const failuresOnly = failuresAt >= 0;
if (failuresOnly) args.splice(failuresAt, 1);
const file = args[0] ?? "test-output/times-embedded.json";
const count = Number(args[1] ?? 20);
if (!existsSync(file)) {
  console.error(`no test times at ${file}: run the tests first`);
  process.exit(1);
}
const report = JSON.parse(readFileSync(file, "utf8")) as TimesReport;
const printFailures = () => {
  for (const f of report.failures ?? [])
    console.log(`FAILED ${f.path} > ${f.test}\n  ${f.message.replace(/\n/g, "\n  ")}`);
};
if (failuresOnly) {
  printFailures();
  process.exit(0);
}
const files = [...report.files].sort((a, b) => b.seconds - a.seconds);
const sum = files.reduce((s, f) => s + f.seconds, 0);

const cpu = (f: (typeof files)[number]) => (f.cpuSeconds === undefined ? "" : f.cpuSeconds.toFixed(1));
console.log("| file | s | of which import | CPU s | tests (skipped) |\n|---|---:|---:|---:|---:|");
for (const f of files.slice(0, count)) {
  const skipped = f.skipped ? ` (${f.skipped})` : "";
  const state = f.state === "passed" || f.state === "skipped" ? "" : ` ${f.state}`;
  console.log(
    `| ${f.path}${state} | ${f.seconds.toFixed(1)} | ${f.importSeconds.toFixed(1)} | ${cpu(f)} | ${f.tests}${skipped} |`,
  );
}
const tests = files.reduce((s, f) => s + f.tests, 0);
const load = report.load
  ? `, load average ${report.load[0].toFixed(1)} at the start and ${report.load[1].toFixed(1)} at the end`
  : "";
console.log(
  `\n${files.length} files, ${tests} tests: wall ${report.wallSeconds.toFixed(0)} s, sum of file times ${sum.toFixed(0)} s${load}`,
);
// CPU time moves much less with the machine's load than wall time: its sum over two cores is about what the pass
// takes on an idle 2-core machine (a floor: waits on timers and the network add to it).
const measured = files.filter((f) => f.cpuSeconds !== undefined);
if (measured.length > 0) {
  const cpuSum = measured.reduce((s, f) => s + (f.cpuSeconds ?? 0), 0);
  const heaviest = [...measured].sort((a, b) => (b.cpuSeconds ?? 0) - (a.cpuSeconds ?? 0)).slice(0, 5);
  console.log(
    `CPU: ${cpuSum.toFixed(0)} s over ${measured.length} files, ${(cpuSum / 2).toFixed(0)} s over 2 cores; most: ${heaviest
      .map((f) => `${f.path.replace(/^test\//, "")} ${(f.cpuSeconds ?? 0).toFixed(0)} s`)
      .join(", ")}`,
  );
}
// Last, so that the tail of a CI log names what failed.
printFailures();
if (savePass) {
  const weights = readWeights();
  // Only files that ran to the end: a failed or cut-short file's time says little about its length.
  const measuredFiles = files.filter((f) => f.state === "passed" || f.state === "skipped");
  weights[savePass] = Object.fromEntries(measuredFiles.map((f) => [f.path, Math.round(f.seconds)]));
  writeFileSync(WEIGHTS_FILE, `${JSON.stringify(weights, null, 2)}\n`);
  console.log(`wrote the ${savePass} pass's order (${measuredFiles.length} files) to ${WEIGHTS_FILE}`);
}
