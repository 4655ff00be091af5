/**
 * The only module that imports a PostgreSQL client: `pg` for a server, PGlite when embedded.
 * Both speak the same SQL; callers see one `Pg` interface with labelled queries.
 */
import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { seedDataDir } from "./pglite-template.ts";

export type PgParam =
  | string
  | number
  | boolean
  | null
  | bigint
  | Date
  | string[]
  | number[]
  | Record<string, unknown>;

export interface PgQueryable {
  /** Runs one statement with `$n` parameters; `label` names the query in errors and metrics. */
  query<T = Record<string, unknown>>(label: string, sql: string, params?: PgParam[]): Promise<T[]>;
}

export interface Pg extends PgQueryable {
  readonly kind: "postgres" | "pglite";
  /** Runs several statements without parameters (migrations). */
  exec(label: string, sql: string): Promise<void>;
  /** Runs `fn` in a transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: PgQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** The `pg.Pool` in server mode (for libraries that take a pool, such as the rate limiter); null for PGlite. */
  readonly pool: pg.Pool | null;
  /**
   * Milliseconds PGlite has run so far, on the calling (main) thread: its WebAssembly runs synchronously inside
   * each call, so this is the share of the thread's CPU that is PGlite's (`bench:follow`). Absent for a server.
   */
  engineMs?(): number;
}

export interface PostgresOptions {
  /** postgres:// URL; when empty, PGlite stores data in `dataDir` (or in memory when `dataDir` is empty). */
  url: string;
  dataDir: string;
  poolSize: number;
  log: Logger;
  /** PGlite in memory only: start from this dump (`dumpDataDir`) instead of running initdb. */
  loadDataDir?: Blob;
  /**
   * The clock (ms) `engineMs` reads around each PGlite call: wall time by default, which counts the waits of a
   * busy machine's run queue too; `bench:follow` passes the main thread's own CPU time.
   */
  engineClock?: () => number;
}

/** SQLSTATE classes worth retrying: connection failures, serialization failures, deadlocks, shutdown. */
const RETRYABLE_SQLSTATE = /^(08|40001|40P01|57P0[123]|53300)/;

function classify(label: string, error: unknown): AppError {
  const code = typeof error === "object" && error && "code" in error ? String(error.code) : "";
  const status = code === "23505" ? 409 : 500;
  return new AppError(code === "23505" ? "conflict" : "postgres_error", `Postgres query ${label} failed`, {
    status,
    retryable: RETRYABLE_SQLSTATE.test(code),
    cause: error,
    details: { sqlstate: code },
  });
}

function serialize(params: PgParam[] | undefined): unknown[] | undefined {
  // Objects go to json/jsonb columns; bigint has no JSON form, so it travels as a decimal string.
  return params?.map((p) =>
    typeof p === "bigint"
      ? p.toString()
      : p !== null && typeof p === "object" && !(p instanceof Date) && !Array.isArray(p)
        ? JSON.stringify(p)
        : p,
  );
}

export async function createPostgres(options: PostgresOptions): Promise<Pg> {
  const log = options.log.child({ component: "postgres" });
  if (options.url) {
    const pool = new pg.Pool({ connectionString: options.url, max: options.poolSize });
    pool.on("error", (error) => log.error({ err: error }, "Idle Postgres client failed."));
    const run = async <T>(
      client: pg.Pool | pg.PoolClient,
      label: string,
      sql: string,
      params?: PgParam[],
    ) => {
      try {
        const result = await client.query(sql, serialize(params));
        return result.rows as T[];
      } catch (error) {
        throw classify(label, error);
      }
    };
    await run(pool, "ping", "SELECT 1");
    return {
      kind: "postgres",
      pool,
      query: (label, sql, params) => run(pool, label, sql, params),
      async exec(label, sql) {
        await run(pool, label, sql);
      },
      async transaction(fn) {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          const result = await fn({ query: (label, sql, params) => run(client, label, sql, params) });
          await client.query("COMMIT");
          return result;
        } catch (error) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw error;
        } finally {
          client.release();
        }
      },
      close: () => pool.end(),
    };
  }

  // A new data directory starts as a copy of the initdb'd template (lib/stores/pglite-template.ts), not by initdb.
  if (options.dataDir && (await seedDataDir(options.dataDir)))
    options.log.debug({ dataDir: options.dataDir }, "PGlite data directory started from the cached template");
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const db = options.dataDir
    ? new PGlite(options.dataDir)
    : new PGlite(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {});
  await db.waitReady;
  // Every statement, transaction and exec goes through this synchronous call: time it where it runs.
  let engineMs = 0;
  const clock = options.engineClock ?? (() => performance.now());
  const execSync = db.execProtocolRawSync.bind(db);
  db.execProtocolRawSync = (message) => {
    const t0 = clock();
    try {
      return execSync(message);
    } finally {
      engineMs += clock() - t0;
    }
  };
  type PgliteLike = Pick<PGlite, "query">;
  const run = async <T>(client: PgliteLike, label: string, sql: string, params?: PgParam[]) => {
    try {
      const result = await client.query<T>(sql, serialize(params));
      return result.rows;
    } catch (error) {
      throw classify(label, error);
    }
  };
  return {
    kind: "pglite",
    pool: null,
    engineMs: () => engineMs,
    query: (label, sql, params) => run(db, label, sql, params),
    async exec(label, sql) {
      try {
        await db.exec(sql);
      } catch (error) {
        throw classify(label, error);
      }
    },
    transaction: (fn) =>
      db.transaction((tx) => fn({ query: (label, sql, params) => run(tx, label, sql, params) })),
    close: () => db.close(),
  };
}
