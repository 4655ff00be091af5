/** Builds the store clients the config names: server when a URL is given, embedded otherwise, none when off. */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { type Config, clickhouseDatabase } from "../config.ts";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";
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

/**
 * Embedded PGlite and chDB belong to one process: a second one on the same directory would corrupt
 * PGlite or fail on chDB's lock. The first process holds `DATA_DIR/<stage>/LOCK` (its pid); another
 * gets an error that says what to do instead. A lock left by a process that died is taken over.
 */
export function lockEmbeddedStores(config: Config, command: string): () => void {
  const dir = join(config.DATA_DIR, config.STAGE);
  const path = join(dir, "LOCK");
  mkdirSync(dir, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, command, started_at: new Date().toISOString() }));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = readHolder(path);
      if (holder && isAlive(holder.pid)) {
        throw new AppError(
          "stores_in_use",
          `The embedded stores in ${dir} are in use by process ${holder.pid} (\`${holder.command}\`, since ${holder.started_at}). ` +
            "Embedded PGlite and chDB belong to one process: stop that process first, or work through its API " +
            `(its first admin key is in ${join(dir, "admin-key")}; POST /system/keys creates more keys).`,
        );
      }
      rmSync(path, { force: true }); // left by a process that is gone
    }
  }
  throw new AppError("stores_in_use", `Could not take the lock ${path}`);
}

function readHolder(path: string): { pid: number; command: string; started_at: string } | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as { pid: number; command: string; started_at: string };
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Opens the stores the config names (taking the embedded stores' lock); it only opens them: migrating and
 * seeding is the step `prepareStores` (lib/migrate.ts) that the commands call next.
 */
export async function openStores(
  config: Config,
  log: Logger,
  options: { command: string; pgEngineClock?: () => number },
): Promise<Stores> {
  if (config.DATABASES === "off") {
    log.warn("Databases are switched off (DATABASES=off): store-backed routes answer 503.");
    return { pg: null, ch: null, close: async () => undefined };
  }
  const unlock =
    config.POSTGRES_URL && config.CLICKHOUSE_URL
      ? () => undefined
      : lockEmbeddedStores(config, options.command);
  try {
    return await openLocked(config, log, unlock, options.pgEngineClock);
  } catch (error) {
    unlock();
    throw error;
  }
}

async function openLocked(
  config: Config,
  log: Logger,
  unlock: () => void,
  pgEngineClock?: () => number,
): Promise<Stores> {
  const pg = await createPostgres({
    url: config.POSTGRES_URL,
    dataDir: stageDir(config, "pglite"),
    poolSize: config.POSTGRES_POOL_SIZE,
    log,
    engineClock: pgEngineClock,
  });
  const ch = await createClickHouse({
    url: config.CLICKHOUSE_URL,
    dataDir: stageDir(config, "chdb"),
    connections: config.CHDB_CONNECTIONS,
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
      unlock();
    },
  };
  log.info({ postgres: pg.kind, clickhouse: ch.kind, database: ch.database }, "Stores opened.");
  return stores;
}
