/**
 * Read-only SQL for data engineers (`POST /sql`): one SELECT over the api_v1_* views, checked on
 * ClickHouse's own parse (lib/sql/guard.ts) and then run with `readonly = 1` and the configured
 * limits as that query's own SETTINGS clause (the embedded chDB session is shared with ingest, so
 * nothing is set on the session).
 *
 * Order of work, each step only on what the previous one accepted:
 * 1. `formatQuery({q:String})`: the text is bound as a value, never run; ClickHouse parses it as one
 *    statement (a second statement, hidden behind a comment or not, is a syntax error here) and gives
 *    back its canonical text, without comments. Only that canonical text is used from here on.
 * 2. `EXPLAIN AST` of it: parse only; statement kind, clauses, table functions, tables, functions.
 * 3. `EXPLAIN QUERY TREE`: the analyzer's resolution of every name to a table (with the limits on).
 * 4. `SELECT * FROM (<canonical text>) SETTINGS <limits>, readonly = 1` in the chosen format.
 */
import type { Config } from "../config.ts";
import { AppError } from "../errors.ts";
import type { Metrics } from "../metrics.ts";
import type { Ch } from "../stores/clickhouse.ts";
import { checkAst, checkQueryTree } from "./guard.ts";

export type SqlFormat = "json" | "csv" | "parquet";

/** ClickHouse output format and media type per answer format. */
export const SQL_FORMATS: Record<SqlFormat, { clickhouse: string; mediaType: string }> = {
  json: { clickhouse: "JSON", mediaType: "application/json; charset=utf-8" },
  csv: { clickhouse: "CSVWithNames", mediaType: "text/csv; charset=utf-8" },
  parquet: { clickhouse: "Parquet", mediaType: "application/vnd.apache.parquet" },
};

export interface SqlResult {
  body: Buffer;
  mediaType: string;
}

export interface SqlService {
  /** Checks and runs one query; refusals and exceeded limits are 400 AppErrors naming what and why. */
  run(query: string, format: SqlFormat): Promise<SqlResult>;
}

/** ClickHouse error codes of the limits, with the config key that sets each. */
const LIMIT_CODES: Record<number, string> = {
  159: "SQL_MAX_EXECUTION_MS", // TIMEOUT_EXCEEDED
  158: "SQL_MAX_ROWS_TO_READ", // TOO_MANY_ROWS (rows to read)
  241: "SQL_MAX_MEMORY_BYTES", // MEMORY_LIMIT_EXCEEDED
};
/** TOO_MANY_ROWS_OR_BYTES: the result limits (rows or bytes; the engine uses one code for both). */
const RESULT_LIMIT_CODE = 396;
const READONLY_CODE = 164;

const clickhouseCode = (error: unknown): number | null => {
  const code = error instanceof AppError ? error.details?.clickhouse_code : undefined;
  return typeof code === "number" ? code : null;
};

/** The engine's own sentence about a query it refused (its first line, without the stack or version). */
function engineMessage(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as Error | undefined) : undefined;
  const text = String(cause?.message ?? "").split("\n")[0] ?? "";
  return text
    .replace(/^Code: \d+\. DB::Exception: /, "")
    .replace(/ \(version [^)]*\)/, "")
    .slice(0, 500);
}

function limitExceeded(key: string, limit: number | string, error: unknown): AppError {
  return new AppError("sql_limit_exceeded", `query: exceeds ${key} (${limit}): ${engineMessage(error)}`, {
    status: 400,
    details: { field: "query", limit: key, value: limit },
  });
}

/** The limits a query runs under (the SQL_* keys of the config). */
export type SqlLimits = Pick<
  Config,
  | "SQL_MAX_EXECUTION_MS"
  | "SQL_MAX_ROWS_TO_READ"
  | "SQL_MAX_RESULT_ROWS"
  | "SQL_MAX_RESULT_BYTES"
  | "SQL_MAX_MEMORY_BYTES"
>;

/** The SETTINGS every checked query runs with: the limits, then readonly (this query only). */
export function sqlSettings(config: SqlLimits): Record<string, string | number> {
  return {
    max_execution_time: config.SQL_MAX_EXECUTION_MS / 1000,
    timeout_overflow_mode: "throw",
    max_rows_to_read: config.SQL_MAX_ROWS_TO_READ,
    read_overflow_mode: "throw",
    max_result_rows: config.SQL_MAX_RESULT_ROWS,
    max_result_bytes: config.SQL_MAX_RESULT_BYTES,
    result_overflow_mode: "throw",
    max_memory_usage: config.SQL_MAX_MEMORY_BYTES,
    // Last: settings listed after it could not be changed any more.
    readonly: 1,
  };
}

export function createSqlService(deps: { ch: Ch; limits: SqlLimits; metrics: Metrics }): SqlService {
  const { ch, limits: config, metrics } = deps;

  /** Maps an engine error of a checked query to a 400 naming the limit, the refusal or the engine's reason. */
  function queryError(error: unknown): AppError {
    const code = clickhouseCode(error);
    if (code !== null && LIMIT_CODES[code]) {
      const key = LIMIT_CODES[code];
      return limitExceeded(key, config[key as keyof SqlLimits], error);
    }
    if (code === RESULT_LIMIT_CODE) {
      // The wording tells rows from bytes; both are refusals either way.
      const bytes = /max bytes/i.test(engineMessage(error));
      const key = bytes ? "SQL_MAX_RESULT_BYTES" : "SQL_MAX_RESULT_ROWS";
      return limitExceeded(key, config[key], error);
    }
    if (code === READONLY_CODE) {
      return new AppError("sql_readonly", "query: writes are refused (the query runs with readonly = 1)", {
        status: 400,
        details: { field: "query" },
      });
    }
    if (error instanceof AppError && error.retryable) return error;
    // Any other engine refusal of a checked SELECT is about the query (unknown column, bad types ...).
    return new AppError("sql_error", `query: ${engineMessage(error)}`, {
      status: 400,
      details: { field: "query", clickhouse_code: code },
      cause: error,
    });
  }

  async function canonical(query: string): Promise<string> {
    try {
      const rows = await ch.query<{ q: string }>("sql_format", "SELECT formatQuery({q:String}) AS q", {
        q: query,
      });
      return rows[0]?.q ?? "";
    } catch (error) {
      const message = engineMessage(error);
      if (/multi-statements/i.test(message)) {
        throw new AppError(
          "sql_multiple_statements",
          "query: holds more than one statement; send one SELECT",
          {
            status: 400,
            details: { field: "query", construct: "multiple_statements" },
          },
        );
      }
      if (error instanceof AppError && error.retryable) throw error;
      throw new AppError("sql_syntax", `query: does not parse: ${message}`, {
        status: 400,
        details: { field: "query" },
      });
    }
  }

  return {
    async run(query, format) {
      try {
        const result = await check(query, format);
        metrics.sqlQueries.inc({ outcome: "ok" });
        return result;
      } catch (error) {
        metrics.sqlQueries.inc({
          outcome: error instanceof AppError && error.status < 500 ? error.code : "error",
        });
        throw error;
      }
    },
  };

  async function check(query: string, format: SqlFormat): Promise<SqlResult> {
    if (query.includes("\0")) {
      throw new AppError("sql_syntax", "query: holds a NUL character", {
        status: 400,
        details: { field: "query" },
      });
    }
    // Read per query: the limits are the config's at the time of the call.
    const limits = sqlSettings(config);
    const text = await canonical(query);
    // The canonical text of a SELECT starts with SELECT, WITH or a parenthesis; anything else is refused
    // before it reaches EXPLAIN (the AST check below refuses it too, by its statement kind).
    const first = /^\s*\(*\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? "";
    if (first !== "SELECT" && first !== "WITH") {
      throw new AppError(
        "sql_not_select",
        `query: is a ${first || "non-SELECT"} statement; only SELECT is allowed`,
        {
          status: 400,
          details: { field: "query", construct: "not_select", found: first },
        },
      );
    }
    let ast: { explain: string }[];
    try {
      ast = await ch.query<{ explain: string }>("sql_explain_ast", `EXPLAIN AST ${text}`);
    } catch (error) {
      throw queryError(error);
    }
    checkAst(
      ast.map((r) => r.explain),
      ch.database,
    );
    let tree: Buffer;
    try {
      tree = await ch.queryRaw("sql_explain_tree", `EXPLAIN QUERY TREE ${text}`, {
        format: "TabSeparatedRaw",
        settings: limits,
      });
    } catch (error) {
      throw queryError(error);
    }
    checkQueryTree(tree.toString("utf8").split("\n"), ch.database);
    const out = SQL_FORMATS[format];
    try {
      const body = await ch.queryRaw("sql_query", `SELECT * FROM (${text})`, {
        format: out.clickhouse,
        settings: {
          ...(format === "json"
            ? { output_format_json_quote_decimals: 1, output_format_json_quote_64bit_integers: 1 }
            : {}),
          ...limits,
        },
      });
      return { body, mediaType: out.mediaType };
    } catch (error) {
      throw queryError(error);
    }
  }
}
