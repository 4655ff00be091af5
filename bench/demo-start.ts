/**
 * Bench (the demo's first start): runs `npm run demo` as a new user does, on an empty data directory, and
 * measures from the command's start: when the API answers, when the first event is served, when the index is
 * live (every chain within a minute of the simulated tip), and the process's peak resident memory (VmHWM),
 * beside the history it had to ingest; and, while it backfills (from the first event to live), how long `/status`
 * and a page of 50 events take to answer one at a time, as a dashboard polling the demo sees them. Target
 * (issue 22): first event ≤ 20 s.
 * PGlite's data directory starts as a copy of the initdb template cached in node_modules/.cache (made by the first
 * start on a machine, lib/stores/pglite-template.ts); the bench says which case it measured, and BENCH_DEMO_COLD=1
 * removes the template first, to measure a fresh install's first start.
 * Run: npm run bench:demo   (BENCH_DEMO_TIMEOUT_S=600; the demo's own flags after --, e.g. -- --devnet-blocks 4000)
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { templateDir } from "../lib/stores/pglite-template.ts";

const TIMEOUT_MS = Number(process.env.BENCH_DEMO_TIMEOUT_S ?? 600) * 1000;
const template = templateDir();
if (process.env.BENCH_DEMO_COLD === "1") rmSync(template, { recursive: true, force: true });
const templateCached = existsSync(template);
const dir = mkdtempSync(join(tmpdir(), "bench-demo-"));
const port = 3900 + Math.floor(Math.random() * 90);
const base = `http://127.0.0.1:${port}`;
const started = performance.now();
const child = spawn(
  process.execPath,
  ["--import", "tsx", "bin/cli.ts", "start", "--devnet", ...process.argv.slice(2)],
  {
    env: { ...process.env, DATA_DIR: dir, PORT: String(port), LOG_LEVEL: "warn" },
    stdio: ["ignore", "ignore", "inherit"],
  },
);
const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
let peakKb = 0;
const sampleMemory = () => {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"));
    if (m) peakKb = Math.max(peakKb, Number(m[1]));
  } catch {
    // The process has exited or /proc is not there (not Linux): the peak stays as last read.
  }
};
const get = async (path: string) => {
  try {
    const r = await fetch(base + path);
    return r.ok ? ((await r.json()) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};
const marks: Record<string, string> = {};
/** Answer times (ms) of requests made while the demo backfills, by route. */
const during: Record<string, number[]> = { "/status": [], "/events/all?limit=50": [] };
const timed = async (path: string) => {
  const t0 = performance.now();
  const body = await get(path);
  during[path]?.push(performance.now() - t0);
  return body;
};
const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const answerLine = (path: string) => {
  const v = during[path] ?? [];
  if (v.length === 0) return `  ${path.padEnd(22)}  no requests (the demo never served a first event)`;
  return `  ${path.padEnd(22)}  ${String(v.length).padStart(4)} requests, p50 ${quantile(v, 0.5).toFixed(0)} ms, p99 ${quantile(v, 0.99).toFixed(0)} ms, max ${Math.max(...v).toFixed(0)} ms`;
};
try {
  while (performance.now() - started < TIMEOUT_MS) {
    sampleMemory();
    if (child.exitCode !== null) throw new Error(`the demo exited with code ${child.exitCode}`);
    if (!marks.api && (await get("/healthz"))) marks.api = seconds();
    if (marks.api && !marks.first) {
      const page = await get("/events/all?limit=1");
      if ((page?.events as unknown[] | undefined)?.length) marks.first = seconds();
    }
    if (marks.first) {
      await timed("/events/all?limit=50");
      const status = await timed("/status");
      const chains = (status?.chains ?? []) as { lag_ms: number }[];
      if (chains.length === 16 && chains.every((c) => c.lag_ms < 60_000)) {
        marks.live = seconds();
        break;
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  sampleMemory();
  process.stdout.write(
    [
      `demo first start (empty ${dir}, port ${port}):`,
      `  PGlite's initdb template: ${templateCached ? "cached (as for a second data directory on this machine)" : "not cached (this start ran initdb, as a fresh install's first start does)"}`,
      `  API answering:          ${marks.api ?? "—"} s`,
      `  first event served:     ${marks.first ?? "—"} s   (target ≤ 20 s)`,
      `  live (every chain < 1 min behind the simulated tip): ${marks.live ?? `not within ${TIMEOUT_MS / 1000} s`} s`,
      `  peak resident memory:   ${(peakKb / 1024).toFixed(0)} MiB`,
      "  answer times while it backfilled (one request at a time, every 200 ms, from the first event to live):",
      answerLine("/events/all?limit=50"),
      answerLine("/status"),
      "",
    ].join("\n"),
  );
} finally {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
}
