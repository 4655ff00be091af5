/**
 * Bench (foundation): a public route and a user-key route of the real app (embedded stores, auth,
 * rate limits, validation, serialization) beside a bare Fastify route serving the same bytes.
 * Run: npm run bench:api   (BENCH_SECONDS=5 by default)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../api/app.ts";
import { createEventsRepo } from "../api/routes/events/repo.ts";
import { loadConfig } from "../lib/config.ts";
import { createExplorerClient } from "../lib/explorer-client.ts";
import { createLogger } from "../lib/logger.ts";
import { createMetrics } from "../lib/metrics.ts";
import { createKeysRepo } from "../lib/repos/keys.ts";
import { openStores } from "../lib/stores/index.ts";
import { bareServer, load, printTable } from "./lib.ts";

const dir = mkdtempSync(join(tmpdir(), "bench-api-"));
const config = loadConfig({
  DATA_DIR: dir,
  LOG_LEVEL: "silent",
  PUBLIC_RPM: "1000000",
  POSTGRES_URL: process.env.POSTGRES_URL ?? "",
});
const log = createLogger({ level: "silent" });
const stores = await openStores(config, log, { migrate: true });
const pg = stores.pg!;
const keys = createKeysRepo(pg);
await keys.upsertPlan({
  plan_id: "bench",
  name: "Bench",
  rpm: 100_000_000,
  rpd: 100_000_000,
  price: "0",
  price_alph: "0",
  validity_days: 1,
});
const created = await keys.createKey({ userId: "bench", planId: "free", level: "user" });
await keys.setPlan(created.keyId, "bench");
const app = await buildApp({
  config,
  log,
  metrics: createMetrics(),
  pg,
  ch: stores.ch,
  keys,
  events: createEventsRepo({ ch: stores.ch!, pg, hydration: true }),
  explorer: createExplorerClient({ baseUrl: "", timeoutMs: 1000, log }),
});
const base = await app.listen({ host: "127.0.0.1", port: 0 });
const headers = { "x-api-key": created.key, authorization: `Bearer ${created.key}` };

const plansBody = (await app.inject({ url: "/system/plans" })).body;
const keysBody = (await app.inject({ url: "/system/keys", headers })).body;
const barePlans = await bareServer(plansBody);
const bareKeys = await bareServer(keysBody);

const pub = await load("GET /system/plans (public)", `${base}/system/plans`);
const user = await load("GET /system/keys (user key)", `${base}/system/keys`, { headers });
const bound1 = await load("bare route, same bytes as /system/plans", barePlans.url);
const bound2 = await load("bare route, same bytes as /system/keys", bareKeys.url);
printTable(
  `API foundation bench (${stores.pg?.kind}, ${process.env.BENCH_SECONDS ?? 5} s per run, 10 connections)`,
  [pub],
  bound1,
);
printTable("", [user], bound2);

await app.close();
await barePlans.close();
await bareKeys.close();
await stores.close();
rmSync(dir, { recursive: true, force: true });
