/**
 * Migrating and seeding the stores: a step the commands take after `openStores` (opening only opens them).
 * Pending PostgreSQL and ClickHouse migrations are applied, then an empty token registry is filled from
 * @alephium/token-list (`registry seed` re-runs it). On failure the stores are closed (and their lock released).
 */
import type { Logger } from "../logger.ts";
import { migrateClickHouse, migratePostgres } from "../migrate.ts";
import { seedRegistryIfEmpty } from "../tokens/seed.ts";
import type { Stores } from "./index.ts";

export async function prepareStores(stores: Stores, log: Logger): Promise<void> {
  const { pg, ch } = stores;
  if (!pg || !ch) return; // DATABASES=off: nothing to migrate
  try {
    await migratePostgres(pg, log);
    await migrateClickHouse(ch, log);
    await seedRegistryIfEmpty({ pg, log });
  } catch (error) {
    await stores.close();
    throw error;
  }
}
