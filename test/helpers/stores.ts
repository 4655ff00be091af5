/**
 * Real stores for tests, isolated per test file: PGlite in memory by default, or a fresh database on
 * the PostgreSQL server named by TEST_POSTGRES_URL (CI sets it); chDB in a temporary directory with a
 * random database, or the ClickHouse server named by TEST_CLICKHOUSE_URL.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createLogger, type Logger } from "../../lib/logger.ts";
import { migrateClickHouse, migratePostgres } from "../../lib/migrate.ts";
import { type Ch, createClickHouse } from "../../lib/stores/clickhouse.ts";
import { createPostgres, type Pg } from "../../lib/stores/postgres.ts";

export const quietLog: Logger = createLogger({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

export function suffix(): string {
  return randomBytes(5).toString("hex");
}

export interface TestPg {
  pg: Pg;
  url: string;
  close(): Promise<void>;
}

/** A migrated Postgres: a new database on the server when TEST_POSTGRES_URL is set, else in-memory PGlite. */
export async function openTestPg(options: { migrate?: boolean } = {}): Promise<TestPg> {
  const serverUrl = process.env.TEST_POSTGRES_URL;
  let url = "";
  let drop: () => Promise<void> = async () => {};
  if (serverUrl) {
    const name = `test_${suffix()}`;
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(serverUrl);
    u.pathname = `/${name}`;
    url = u.toString();
    drop = async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  const db = await createPostgres({ url, dataDir: "", poolSize: 5, log: quietLog });
  if (options.migrate !== false) await migratePostgres(db, quietLog);
  return {
    pg: db,
    url,
    async close() {
      await db.close();
      await drop();
    },
  };
}

export interface TestCh {
  ch: Ch;
  dataDir: string;
  close(): Promise<void>;
}

/** A migrated ClickHouse database with a random name (chDB in a temp dir unless TEST_CLICKHOUSE_URL is set). */
export async function openTestCh(options: { migrate?: boolean; dataDir?: string } = {}): Promise<TestCh> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "chdb-test-"));
  const url = process.env.TEST_CLICKHOUSE_URL ?? "";
  const ch = await createClickHouse({
    url,
    dataDir,
    database: `test_${suffix()}`,
    user: "default",
    password: "",
    log: quietLog,
  });
  if (options.migrate !== false) await migrateClickHouse(ch, quietLog);
  return {
    ch,
    dataDir,
    async close() {
      await ch.command("drop_test_db", `DROP DATABASE IF EXISTS ${ch.database}`).catch(() => undefined);
      await ch.close();
      if (!options.dataDir && !url) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
