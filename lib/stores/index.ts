/** Builds the store clients the config names: server when a URL is given, embedded otherwise, none when off. */
import { join } from "node:path";
import { type Config, clickhouseDatabase } from "../config.ts";
import type { Logger } from "../logger.ts";
import { migrateClickHouse, migratePostgres } from "../migrate.ts";
import { seedRegistryIfEmpty } from "../registry/seed.ts";
import { type Ch, createClickHouse } from "./clickhouse.ts";
import { createPostgres, type Pg } from "./postgres.ts";

export interface Stores {
  pg: Pg | null;
  ch: Ch | null;
  close(): Promise<void>;
}

export function stageDir(config: Config, store: "pglite" | "chdb"): string {
  return join(config.DATA_DIR, config.STAGE, store);
}

export async function openStores(
  config: Config,
  log: Logger,
  options: { migrate: boolean },
): Promise<Stores> {
  if (config.DATABASES === "off") {
    log.warn("Databases are switched off (DATABASES=off): store-backed routes answer 503.");
    return { pg: null, ch: null, close: async () => undefined };
  }
  const pg = await createPostgres({
    url: config.POSTGRES_URL,
    dataDir: stageDir(config, "pglite"),
    poolSize: config.POSTGRES_POOL_SIZE,
    log,
  });
  const ch = await createClickHouse({
    url: config.CLICKHOUSE_URL,
    dataDir: stageDir(config, "chdb"),
    database: clickhouseDatabase(config),
    user: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    log,
  }).catch(async (error) => {
    await pg.close();
    throw error;
  });
  const stores: Stores = {
    pg,
    ch,
    async close() {
      await Promise.allSettled([pg.close(), ch.close()]);
    },
  };
  if (options.migrate) {
    try {
      await migratePostgres(pg, log);
      await migrateClickHouse(ch, log);
      // First start: an empty token registry is filled from @alephium/token-list (`registry seed` re-runs it).
      await seedRegistryIfEmpty({ pg, log });
    } catch (error) {
      await stores.close();
      throw error;
    }
  }
  log.info({ postgres: pg.kind, clickhouse: ch.kind, database: ch.database }, "Stores opened.");
  return stores;
}
