/**
 * Bench (foundation): a public route and a user-key route of the real app (embedded stores, auth,
 * rate limits, validation, serialization) beside a bare Fastify route serving the same bytes.
 * Run: npm run bench:api   (BENCH_SECONDS=5 by default)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../lib/config.ts";
import { createLogger } from "../lib/logger.ts";
import { prepareStores } from "../lib/migrate.ts";
import { openStores } from "../lib/stores/index.ts";
import { bareServer, load, printTable, startBenchApp } from "./lib.ts";

const dir = mkdtempSync(join(tmpdir(), "bench-api-"));
const config = loadConfig({
  DATA_DIR: dir,
  LOG_LEVEL: "silent",
  PUBLIC_RPM: "1000000",
  POSTGRES_URL: process.env.POSTGRES_URL ?? "",
});
const log = createLogger({ level: "silent" });
const stores = await openStores(config, log, { command: "bench" });
await prepareStores(stores, log);
const pg = stores.pg!;
const { app, base, headers } = await startBenchApp({ config, log, pg, ch: stores.ch! });

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
