/** Builds the real app on real stores for HTTP tests (`app.inject()`), with an admin and a user key. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyRequest } from "fastify";
import { type BuildOptions, buildApp } from "../../api/app.ts";
import { createApiDeps } from "../../api/deps.ts";
import type { ApiDeps, App } from "../../api/types.ts";
import { type Config, loadConfig } from "../../lib/config.ts";
import { seedRegistryIfEmpty } from "../../lib/tokens/seed.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "./stores.ts";

export interface TestApp {
  app: App;
  deps: ApiDeps;
  adminKey: string;
  userKey: string;
  /** Headers carrying a key the way the API requires (both headers). */
  auth(key: string): Record<string, string>;
  close(): Promise<void>;
}

export interface TestAppOptions extends BuildOptions {
  /** false runs the app in no-database mode (DATABASES=off). */
  databases?: boolean;
  /** Reuse stores opened by the test (for example to share ClickHouse with a pipeline). */
  stores?: { pg: TestPg; ch: TestCh };
  env?: Record<string, string>;
  /** Tolerate statuses the OpenAPI document does not list (a test of the check itself). */
  allowUndocumentedStatuses?: boolean;
  /** Explorer backend of the decorated routes (a devnet server's `explorerUrl`); default a closed local port. */
  explorerUrl?: string;
}

const NO_DB_ADMIN_KEY = "alk_no_database_admin_key_________________________";
const NO_DB_USER_KEY = "alk_no_database_user_key__________________________";

/** A no-database app checks keys against API_KEYS_FILE: this one lists the helper's two keys. */
function noDatabaseKeyFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "api-keys-"));
  const path = join(dir, "keys");
  writeFileSync(path, `# test keys\n${NO_DB_ADMIN_KEY} admin\n${NO_DB_USER_KEY}\n`);
  return path;
}

/**
 * Statuses an app answered that its OpenAPI document does not list for the operation (`METHOD /path status`),
 * recorded by every test app (fuzz and route tests included); `close()` fails the test on any (issue 46).
 */
export function undocumentedStatus(request: FastifyRequest, status: number): string | null {
  const route = request.routeOptions;
  const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
  // Unknown paths, documentation assets and the portal's hidden session routes are not operations.
  if (!route.url || !route.config?.access || schema?.hide || route.config.access === "session") return null;
  const response = schema?.response ?? {};
  if (String(status) in response || `${String(status).charAt(0)}XX` in response || "default" in response)
    return null;
  return `${request.method === "HEAD" ? "GET" : request.method} ${route.url} ${status}`;
}

const recordStatuses =
  (undocumented: Set<string>) =>
  async (app: App): Promise<void> => {
    app.addHook("onResponse", async (request, reply) => {
      const miss = undocumentedStatus(request, reply.statusCode);
      if (miss) undocumented.add(miss);
    });
  };

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const withDb = options.databases !== false;
  // Without a database, keys come from a key file unless the test sets API_KEYS_FILE itself ("" = none).
  const keyFile =
    withDb || options.env?.API_KEYS_FILE !== undefined ? {} : { API_KEYS_FILE: noDatabaseKeyFile() };
  const config: Config = loadConfig({
    LOG_LEVEL: "silent",
    // Tests never reach the public explorer: without a devnet the decorated routes answer 502 at once.
    EXPLORER_URL: options.explorerUrl ?? "http://127.0.0.1:9",
    // Nor the public node (AlphBanX positions): a closed local port answers at once.
    NODE_URL: "http://127.0.0.1:9",
    // Page caching is off unless a test turns it on: most tests read right after they write.
    EVENTS_PAGE_CACHE_MS: "0",
    EVENTS_WATERMARK_CACHE_MS: "0",
    OHLCV_CACHE_MS: "0",
    ...keyFile,
    ...options.env,
    DATABASES: withDb ? "on" : "off",
  });
  const pgStore = withDb ? (options.stores?.pg ?? (await openTestPg())) : null;
  const chStore = withDb ? (options.stores?.ch ?? (await openTestCh())) : null;
  // As at a real first start (prepareStores): the registry is seeded from the official token list.
  if (pgStore) await seedRegistryIfEmpty({ pg: pgStore.pg, log: quietLog });
  const deps = createApiDeps(config, { pg: pgStore?.pg ?? null, ch: chStore?.ch ?? null }, quietLog);
  const keys = deps.keys;
  const undocumented = new Set<string>();
  const app = await buildApp(deps, {
    ...options,
    extraGroups: [recordStatuses(undocumented), ...(options.extraGroups ?? [])],
  });
  const admin = keys
    ? await keys.createKey({ userId: "admin-user", planId: "enterprise", level: "admin" })
    : null;
  const user = keys
    ? await keys.createKey({ userId: "plain-user", planId: "enterprise", level: "user" })
    : null;
  return {
    app,
    deps,
    adminKey: admin?.key ?? NO_DB_ADMIN_KEY,
    userKey: user?.key ?? NO_DB_USER_KEY,
    auth: (key) => ({ "x-api-key": key, authorization: `Bearer ${key}` }),
    async close() {
      await app.close();
      if (!options.stores) {
        await pgStore?.close();
        await chStore?.close();
      }
      // After the stores are closed: the next app of the file can still open its own.
      if (undocumented.size > 0 && !options.allowUndocumentedStatuses) {
        throw new Error(
          `Statuses answered but not in the OpenAPI document (add them to the route's response schema): ${[...undocumented].sort().join(", ")}`,
        );
      }
    },
  };
}
