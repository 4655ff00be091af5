/**
 * The only module that imports a ClickHouse client: `@clickhouse/client` for a server, chDB (the
 * same engine, in-process) when embedded. One SQL dialect; `{name:Type}` parameters in both modes.
 * Every call carries a `label` that lands in `system.query_log.log_comment` on a server.
 */
import { mkdirSync } from "node:fs";
import { createClient } from "@clickhouse/client";
import { Session } from "chdb";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { turn } from "../turns.ts";

export type ChParams = Record<string, unknown>;

export interface Ch {
  readonly kind: "server" | "chdb";
  readonly database: string;
  /** SELECT returning rows parsed from JSONEachRow (64-bit and wider integers arrive as strings). */
  query<T = Record<string, unknown>>(label: string, sql: string, params?: ChParams): Promise<T[]>;
  /**
   * One query answered in a ClickHouse output `format` (JSON, CSVWithNames, Parquet ...), as bytes.
   * `settings` become the query's own SETTINGS clause, so they hold for this query only: the chDB
   * session is shared with ingest, where a session `SET` would leak into every later query.
   */
  queryRaw(label: string, sql: string, options: RawQueryOptions): Promise<Buffer>;
  /** DDL or any statement without a result. */
  command(label: string, sql: string, params?: ChParams): Promise<void>;
  /** Inserts rows (objects keyed by column) into a table of this database. */
  insert(label: string, table: string, rows: readonly object[]): Promise<void>;
  close(): Promise<void>;
}

export interface RawQueryOptions {
  format: string;
  settings?: Record<string, string | number>;
  params?: ChParams;
}

/** Bytes of JSON per JSON.stringify call of an insert payload (about a millisecond of work): turns come between. */
const SLICE_BYTES = 256 * 1024;
const [OPEN, COMMA, CLOSE] = ["[", ",", "]"].map((c) => Buffer.from(c)) as [Buffer, Buffer, Buffer];

/**
 * An insert's JSONEachRow payload: a JSON array of the rows (JSONEachRow takes one), serialised in slices so that a
 * large batch does not hold the main thread (`lib/turns.ts`). Each slice's bytes go in without their brackets (a
 * view, not a copy): as fast as one JSON.stringify of every row (75,000 series facts 169–223 ms against 225–323;
 * 800 raw blocks 40–46 against 34–48 ms, alternating), where re-wrapping each slice's text took 1.3–1.8 times as long.
 */
export async function insertPayload(rows: readonly unknown[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  // The slice grows or shrinks with the rows' size: raw blocks are kilobytes each, series facts a hundred bytes.
  let size = 64;
  for (let i = 0; i < rows.length; ) {
    const end = Math.min(rows.length, i + size);
    const text = JSON.stringify(rows.slice(i, end));
    if (i === 0 && end === rows.length) return Buffer.from(text);
    const bytes = Buffer.from(text);
    parts.push(i === 0 ? OPEN : COMMA, bytes.subarray(1, bytes.length - 1));
    size = Math.max(1, Math.round(((end - i) * SLICE_BYTES) / Math.max(1, text.length)));
    i = end;
    const t = turn();
    if (t) await t;
  }
  if (parts.length === 0) return Buffer.from("[]");
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

/** ` SETTINGS a = 1, b = 'throw'` from a settings object; names and text values are checked, never quoted through. */
export function settingsClause(settings: Record<string, string | number> | undefined): string {
  const entries = Object.entries(settings ?? {});
  if (entries.length === 0) return "";
  const parts = entries.map(([name, value]) => {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new AppError("invalid_setting", `Bad setting name ${name}`);
    if (typeof value === "number") {
      if (!Number.isFinite(value)) throw new AppError("invalid_setting", `Bad value of setting ${name}`);
      return `${name} = ${value}`;
    }
    if (!/^[A-Za-z0-9_]*$/.test(value)) throw new AppError("invalid_setting", `Bad value of setting ${name}`);
    return `${name} = '${value}'`;
  });
  return ` SETTINGS ${parts.join(", ")}`;
}

const FORMAT_NAME = /^[A-Za-z]+$/;

export interface ClickHouseOptions {
  /** http(s):// URL of a server; when empty chDB stores data in `dataDir`. */
  url: string;
  dataDir: string;
  /** chDB only: connections to the data directory (the first instance on a directory sets it). */
  connections?: number;
  database: string;
  user: string;
  password: string;
  log: Logger;
}

/**
 * The right side of `col IN …` for a parameter array, as a subquery (`{name:Array(type)}` is bound by the
 * caller). A constant set of a sorting-key column is checked against the index mark by mark, a cost that grows
 * with set size × marks: 75,000 output keys took 107 s as `IN {keys:Array(String)}` and 0.9 s as this subquery
 * (chDB, 200,000-row table); small sets cost the same either way.
 */
export const inParam = (name: string, type = "String") => `(SELECT arrayJoin({${name}:Array(${type})}))`;

/**
 * The element of the UInt64 array parameter `values` at the position of `expr` in the String array parameter
 * `keys` (the first one; 0 when absent): `{values}[indexOf({keys}, expr)]` without its cost. `indexOf` scans the
 * array for every row, rows × keys: 2.0 s for 30,000 rows against 20,000 keys on chDB (a scratch check; the
 * holders pass of a large batch has that many pairs); `transform` looks the key up in a hash table: 0.09 s.
 */
export const atKeyParam = (expr: string, keys: string, values: string) =>
  `transform(${expr}, {${keys}:Array(String)}, {${values}:Array(UInt64)}, toUInt64(0))`;

/** The 1-based position of `expr` in the String array parameter `keys` (the first; 0 when absent), as `atKeyParam`. */
export const positionParam = (expr: string, keys: string) =>
  `transform(${expr}, {${keys}:Array(String)}, arrayEnumerate({${keys}:Array(String)}), toUInt64(0))`;

/** ClickHouse error codes worth retrying (timeouts, network, memory pressure, too many parts, keeper). */
const RETRYABLE_CODES = new Set([159, 164, 209, 210, 241, 242, 252, 285, 319, 425, 999]);

function classify(label: string, error: unknown): AppError {
  const e = error as { clickhouseCode?: number; code?: string | number; type?: string };
  const numeric = Number(e?.clickhouseCode ?? e?.code);
  const network = typeof e?.code === "string" && /^E[A-Z]+/.test(e.code);
  return new AppError("clickhouse_error", `ClickHouse query ${label} failed`, {
    retryable: network || RETRYABLE_CODES.has(numeric),
    cause: error,
    details: { clickhouse_code: Number.isFinite(numeric) ? numeric : String(e?.code ?? "") },
  });
}

/** JSONEachRow text's rows; a large result gives the event loop its turns (`lib/turns.ts`). */
async function parseRows<T>(text: string): Promise<T[]> {
  const rows: T[] = [];
  for (const line of text.split("\n")) {
    if (line) rows.push(JSON.parse(line) as T);
    const t = turn();
    if (t) await t;
  }
  return rows;
}

/**
 * chDB allows one data directory per process: connections are shared by path (each instance has its database).
 * A chDB connection runs one statement at a time (it queues the others natively and starts the next as soon as
 * one ends), so the directory gets a pool of `connections` of them, all on the same engine: an insert that has
 * returned is seen by every connection. An ordinary call goes to the connection with the fewest calls in flight
 * (a raw query's connection excepted), so the pipeline's processors and the API's reads do not wait for each
 * other's statements. A raw-format query (`queryRaw`, the /sql route) runs alone on its connection: it waits for
 * the calls in flight there, holds new ones back from it, and after a failure a throwaway query takes any
 * leftover output before anyone else runs on it: a query that fails after its output format wrote a first part
 * (the JSON or CSV header, the Parquet magic) leaves that part in the connection, and chDB hands it to the next
 * query there as the start of its result. Running every call through one JavaScript queue instead cost the
 * pipeline the event loop's latency per statement (the connection idled between statements while the loop was
 * busy): the poller-tombstones test over Kafka no longer reached the simulated tip in time.
 */
interface ChdbConnection {
  session: Session;
  /** Ordinary calls in flight. */
  running: number;
  /** Resolved when the raw query that holds the connection ends; null when none does. */
  alone: Promise<void> | null;
  /** Waiters for `running` to reach 0. */
  idle: (() => void)[];
}
interface ChdbPool {
  connections: ChdbConnection[];
  users: number;
  /** Resolved once every connection has its settings. */
  ready: Promise<void>;
}
const chdbPools = new Map<string, ChdbPool>();

/**
 * Closes every chDB directory still open in this process and returns their paths (none when every store was
 * closed). For test runners that run several files in one process: chDB allows one open directory per process, so
 * a file that leaves its store open would fail every later file's; the runner closes it and names the leak.
 */
export function closeOpenChdbDirectories(): string[] {
  const open = [...chdbPools.keys()];
  for (const [dir, pool] of chdbPools) {
    for (const c of pool.connections) c.session.close();
    chdbPools.delete(dir);
  }
  return open;
}

/**
 * Server configuration of the embedded engine (chDB's `clickhouse local` arguments; a ClickHouse server keeps its own
 * configuration). Both cut background work that runs whether or not anything was written (issue 45):
 * - a MergeTree table's background task (merge selection, old parts' cleanup) looks for work again after 0.1 s when it
 *   found none, then backs off 1.1 times a round: with an insert every few seconds (each insert wakes the task at
 *   once), each table written while following asked several times a second. From 5 s instead, merges still start on
 *   the insert that makes them due, and outdated parts go a few seconds later;
 * - the memory worker reads the process's memory every 50 ms (for the server's memory limit, which an embedded store
 *   does not set); once a second instead.
 * Measured with 30 tables written every 4 s (a scratch chDB, alternated): the background pools' CPU 270–380 ms over
 * 34 s against 60–80 ms.
 */
const CHDB_ENGINE_ARGS = [
  "--background_processing_pool_thread_sleep_seconds_if_nothing_to_do=5",
  "--memory_worker_period_ms=1000",
];

/** Default size of a chDB directory's connection pool (`CHDB_CONNECTIONS`). */
export const CHDB_CONNECTIONS = 3;

export async function createClickHouse(options: ClickHouseOptions): Promise<Ch> {
  const { database } = options;
  if (!/^[A-Za-z0-9_]+$/.test(database))
    throw new AppError("invalid_database", `Bad database name ${database}`);

  if (options.url) {
    const bootstrap = createClient({ url: options.url, username: options.user, password: options.password });
    await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    await bootstrap.close();
    const client = createClient({
      url: options.url,
      username: options.user,
      password: options.password,
      database,
      clickhouse_settings: { date_time_input_format: "best_effort" },
    });
    return {
      kind: "server",
      database,
      async query(label, sql, params) {
        try {
          const rs = await client.query({
            query: sql,
            query_params: params,
            format: "JSONEachRow",
            clickhouse_settings: { log_comment: label },
          });
          return (await rs.json()) as never;
        } catch (error) {
          throw classify(label, error);
        }
      },
      async queryRaw(label, sql, options) {
        if (!FORMAT_NAME.test(options.format)) throw new AppError("invalid_format", "Bad output format");
        try {
          const result = await client.exec({
            query: `${sql}${settingsClause(options.settings)} FORMAT ${options.format}`,
            query_params: options.params,
            // The server answers once the query ended, so an error past the first rows (a limit) is the
            // HTTP status, not a message appended to a 200 body.
            clickhouse_settings: { log_comment: label, wait_end_of_query: 1 },
          });
          const chunks: Buffer[] = [];
          for await (const chunk of result.stream) chunks.push(Buffer.from(chunk as Uint8Array));
          return Buffer.concat(chunks);
        } catch (error) {
          throw classify(label, error);
        }
      },
      async command(label, sql, params) {
        try {
          await client.command({
            query: sql,
            query_params: params,
            clickhouse_settings: { log_comment: label },
          });
        } catch (error) {
          throw classify(label, error);
        }
      },
      async insert(label, table, rows) {
        if (rows.length === 0) return;
        try {
          await client.insert({
            table,
            values: rows as object[],
            format: "JSONEachRow",
            clickhouse_settings: { log_comment: label },
          });
        } catch (error) {
          throw classify(label, error);
        }
      },
      close: () => client.close(),
    };
  }

  mkdirSync(options.dataDir, { recursive: true });
  let pool = chdbPools.get(options.dataDir);
  if (!pool) {
    const size = Math.max(1, Math.floor(options.connections ?? CHDB_CONNECTIONS));
    const connections: ChdbConnection[] = Array.from({ length: size }, () => ({
      session: new Session(options.dataDir, { connectionArgs: CHDB_ENGINE_ARGS }),
      running: 0,
      alone: null,
      idle: [],
    }));
    // A setting is its connection's own: each connection gets it before anyone uses the pool.
    const ready = (async () => {
      for (const c of connections) await c.session.queryAsync("SET date_time_input_format = 'best_effort'");
    })();
    pool = { connections, users: 0, ready };
    chdbPools.set(options.dataDir, pool);
  }
  pool.users += 1;
  const shared = pool;
  /** The connection with the fewest calls in flight, one a raw query holds only when all are held. */
  const pick = (): ChdbConnection => {
    let best: ChdbConnection | undefined;
    for (const c of shared.connections)
      if (!best || (best.alone && !c.alone) || (!!best.alone === !!c.alone && c.running < best.running))
        best = c;
    return best!;
  };
  /** An ordinary call: on the least busy connection, once no raw query holds it. */
  const ordinary = async <T>(work: (session: Session) => Promise<T>): Promise<T> => {
    let c = pick();
    while (c.alone) {
      await c.alone;
      c = pick();
    }
    c.running += 1;
    try {
      return await work(c.session);
    } finally {
      c.running -= 1;
      if (c.running === 0) for (const wake of c.idle.splice(0)) wake();
    }
  };
  /** Runs `work` alone on a connection; after a failure, a throwaway query takes any leftover output. */
  const exclusive = async <T>(work: (session: Session) => Promise<T>): Promise<T> => {
    let c = pick();
    while (c.alone) {
      await c.alone;
      c = pick();
    }
    let release = () => {};
    c.alone = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      if (c.running > 0) await new Promise<void>((resolve) => c.idle.push(resolve));
      try {
        return await work(c.session);
      } catch (error) {
        await c.session.queryAsync("SELECT 1", { format: "TabSeparatedRaw" }).catch(() => undefined);
        throw error;
      }
    } finally {
      c.alone = null;
      release();
    }
  };
  try {
    await shared.ready;
    await ordinary((session) => session.queryAsync(`CREATE DATABASE IF NOT EXISTS ${database}`));
  } catch (error) {
    throw classify("open", error);
  }
  // The connections are shared by every instance on this directory: each call names its database itself.
  const use = `USE ${database}; `;
  let closed = false;
  return {
    kind: "chdb",
    database,
    async query(label, sql, params) {
      try {
        const result = params
          ? await ordinary((session) => session.queryBindAsync(use + sql, params, { format: "JSONEachRow" }))
          : await ordinary((session) => session.queryAsync(use + sql, { format: "JSONEachRow" }));
        return await parseRows(result.text());
      } catch (error) {
        throw classify(label, error);
      }
    },
    async queryRaw(label, sql, options) {
      if (!FORMAT_NAME.test(options.format)) throw new AppError("invalid_format", "Bad output format");
      const text = use + sql + settingsClause(options.settings);
      const { format, params } = options;
      try {
        const result = params
          ? await exclusive((session) => session.queryBindAsync(text, params, { format }))
          : await exclusive((session) => session.queryAsync(text, { format }));
        return Buffer.from(result.bytes());
      } catch (error) {
        throw classify(label, error);
      }
    },
    async command(label, sql, params) {
      try {
        if (params) await ordinary((session) => session.queryBindAsync(use + sql, params));
        else await ordinary((session) => session.queryAsync(use + sql));
      } catch (error) {
        throw classify(label, error);
      }
    },
    async insert(label, table, rows) {
      if (rows.length === 0) return;
      const payload = await insertPayload(rows);
      try {
        await ordinary((session) =>
          session.insert({ table: `${database}.${table}`, values: payload, format: "JSONEachRow" }),
        );
      } catch (error) {
        throw classify(label, error);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      shared.users -= 1;
      if (shared.users === 0) {
        // Calls in flight finish first (closing under them would fail them).
        for (const c of shared.connections)
          while (c.alone || c.running > 0) {
            if (c.alone) await c.alone;
            else await new Promise<void>((resolve) => c.idle.push(resolve));
          }
        // Someone may have opened this directory again meanwhile: the connections are theirs then.
        if (shared.users > 0) return;
        for (const c of shared.connections) c.session.close();
        chdbPools.delete(options.dataDir);
      }
    },
  };
}
