/**
 * One migration runner for both stores: numbered, append-only `NNNN_<verb>_<object>.sql` files in
 * `postgres/` and `clickhouse/`. Applied versions are recorded with a checksum; an applied file that
 * changed, a gap, or a failing statement stops the process with the file's name. `prepareStores` is the step the
 * commands take after `openStores` (opening only opens): the pending migrations of both stores, then an empty
 * token registry filled from @alephium/token-list (`registry seed` re-runs it).
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { AppError } from "./errors.ts";
import type { Logger } from "./logger.ts";
import type { Ch } from "./stores/clickhouse.ts";
import type { Stores } from "./stores/index.ts";
import type { Pg } from "./stores/postgres.ts";
import { seedRegistryIfEmpty } from "./tokens/seed.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Reads the migrations of a store folder (`postgres` or `clickhouse`) in version order. */
export function readMigrations(store: "postgres" | "clickhouse", dir = `${ROOT}${store}`): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort();
  return files.map((file, i) => {
    const match = /^(\d{4})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match)
      throw new AppError("bad_migration", `Migration file ${store}/${file} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (version !== i + 1) {
      throw new AppError(
        "bad_migration",
        `Migration ${store}/${file} breaks the sequence: expected ${i + 1}`,
      );
    }
    const sql = readFileSync(`${dir}/${file}`, "utf8");
    return { version, name: match[2] ?? file, sql, checksum: createHash("sha256").update(sql).digest("hex") };
  });
}

interface Applied {
  version: number;
  checksum: string;
}

function pending(store: string, all: Migration[], applied: Applied[]): Migration[] {
  const byVersion = new Map(applied.map((a) => [Number(a.version), a.checksum]));
  for (const m of all) {
    const checksum = byVersion.get(m.version);
    if (checksum !== undefined && checksum !== m.checksum) {
      throw new AppError(
        "migration_changed",
        `${store} migration ${m.version} (${m.name}) was changed after it was applied; add a new migration instead`,
      );
    }
  }
  return all.filter((m) => !byVersion.has(m.version));
}

/** Runs each pending migration's statements, then records it; a failing statement names its file. */
async function apply(
  store: "postgres" | "clickhouse",
  todo: Migration[],
  log: Logger,
  io: { run(label: string, statement: string): Promise<unknown>; record(m: Migration): Promise<unknown> },
): Promise<number> {
  for (const m of todo) {
    for (const statement of splitStatements(m.sql)) {
      try {
        await io.run(`migration_${m.version}`, statement);
      } catch (error) {
        throw new AppError("migration_failed", `${store} migration ${m.version}_${m.name} failed`, {
          cause: error,
        });
      }
    }
    await io.record(m);
    log.info({ store, version: m.version, name: m.name }, "Migration applied.");
  }
  return todo.length;
}

export async function migratePostgres(
  pg: Pg,
  log: Logger,
  migrations = readMigrations("postgres"),
): Promise<number> {
  await pg.exec(
    "migrations_table",
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now())`,
  );
  return pg.transaction(async (tx) => {
    // Two processes starting together must not apply the same migration twice.
    await tx.query("migrations_lock", "SELECT pg_advisory_xact_lock(8738)");
    const applied = await tx.query<Applied>(
      "migrations_applied",
      "SELECT version, checksum FROM schema_migrations",
    );
    return apply("postgres", pending("postgres", migrations, applied), log, {
      run: (label, statement) => tx.query(label, statement),
      record: (m) =>
        tx.query(
          "migration_record",
          "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
          [m.version, m.name, m.checksum],
        ),
    });
  });
}

export async function migrateClickHouse(
  ch: Ch,
  log: Logger,
  migrations = readMigrations("clickhouse"),
): Promise<number> {
  await ch.command(
    "migrations_table",
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version UInt32, name String, checksum String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)
     ) ENGINE = ReplacingMergeTree ORDER BY version`,
  );
  const applied = await ch.query<Applied>(
    "migrations_applied",
    "SELECT version, checksum FROM schema_migrations FINAL",
  );
  // ClickHouse DDL is not transactional: every statement is written to be re-runnable (IF NOT EXISTS).
  return apply("clickhouse", pending("clickhouse", migrations, applied), log, {
    run: (label, statement) => ch.command(label, statement),
    record: (m) =>
      ch.insert("migration_record", "schema_migrations", [
        { version: m.version, name: m.name, checksum: m.checksum },
      ]),
  });
}

/** Splits a file on semicolons that end a line; comments-only chunks are dropped. */
export function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.replace(/--.*$/gm, "").trim().length > 0);
}

/** Migrates both stores and seeds an empty registry; on failure the stores are closed (and their lock released). */
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
