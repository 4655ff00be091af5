/** Read-only SQL over the versioned api_v1_* views, for admin keys and the plans SQL_PLANS names. */
import { Type } from "@sinclair/typebox";
import { AppError } from "../../../lib/errors.ts";
import { API_V1_VIEWS } from "../../../lib/sql/guard.ts";
import type { SqlFormat } from "../../../lib/sql/service.ts";
import { acceptWeight } from "../../csv.ts";
import { requireDb } from "../../require-db.ts";
import { StringEnum } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const FORMATS = ["json", "csv", "parquet"] as const;

const SqlBody = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      maxLength: 100_000,
      description:
        "One SELECT over the api_v1_* views (WITH, JOIN, UNION, subqueries and ClickHouse functions allowed). No trailing `;` needed; no FORMAT or SETTINGS clause.",
      examples: [
        "SELECT category, count() AS events FROM api_v1_events GROUP BY category ORDER BY events DESC",
      ],
    }),
    format: Type.Optional(
      StringEnum(FORMATS, {
        description:
          "`json` (default), `csv` or `parquet`; when given it wins over `Accept`. Without it, `Accept` decides: the most weighted of `application/json`, `text/csv` and `application/vnd.apache.parquet` (a tie or no `Accept` gives JSON).",
      }),
    ),
  },
  { additionalProperties: false },
);

const JsonResult = Type.Object(
  {
    meta: Type.Array(Type.Object({ name: Type.String(), type: Type.String() }), {
      description: "The result's columns with their ClickHouse types, in order.",
    }),
    data: Type.Array(Type.Object({}, { additionalProperties: true }), {
      description:
        "One object per row, keyed by column. 64-bit and wider integers and decimals are strings (exact); other numbers are JSON numbers.",
    }),
    rows: Type.Integer({ description: "Number of rows in `data`." }),
    statistics: Type.Optional(
      Type.Object(
        { elapsed: Type.Number(), rows_read: Type.Integer(), bytes_read: Type.Integer() },
        { description: "What the query cost: seconds, rows and bytes read." },
      ),
    ),
  },
  { additionalProperties: true, description: "ClickHouse's JSON output format." },
);

const DESCRIPTION = [
  "Runs one read-only SELECT over the documented, versioned views (" +
    API_V1_VIEWS.join(", ") +
    "): the stable contract for data engineers, described column by column in docs/data-model.md.",
  "The query is checked on ClickHouse's own parse (`EXPLAIN AST`, then the analyzer's `EXPLAIN QUERY TREE`) and",
  "refused with 400 and a code naming the construct: `sql_not_select` (INSERT, ALTER, DROP, CREATE, SET ...),",
  "`sql_multiple_statements` (a second statement, also one hidden behind a comment), `sql_settings` (a SETTINGS",
  "clause), `sql_format_clause` (FORMAT, INTO OUTFILE), `sql_table_function` (url, file, s3, remote, numbers ...),",
  "`sql_system_table` (system.*, information_schema), `sql_other_database`, `sql_table_not_allowed` (a table",
  "that is not a view above), `sql_function_refused` (file, dictGet*, joinGet ...), `sql_syntax`. It then runs",
  "with `readonly = 1` and limits (SQL_MAX_EXECUTION_MS, SQL_MAX_ROWS_TO_READ, SQL_MAX_RESULT_ROWS,",
  "SQL_MAX_RESULT_BYTES, SQL_MAX_MEMORY_BYTES): a query beyond one answers 400 `sql_limit_exceeded` with `details.limit` naming it.",
  "Other engine errors (unknown column, bad types) are 400 `sql_error` with the engine's message.",
  "Allowed to admin keys and to keys whose plan SQL_PLANS lists (`enterprise` by default); other keys get 403",
  "`sql_not_in_plan`. Output: JSON (ClickHouse's JSON format), CSV (`text/csv`, a header row then the rows,",
  "ClickHouse's CSVWithNames: no spreadsheet-formula escaping) or Parquet (`application/vnd.apache.parquet`),",
  "by `format` or `Accept`. The views show everything written, also the newest events the JSON routes hold",
  "back until every chain reaches them (the poll watermark).",
].join(" ");

/** The answer format: `format` when given, else the type `Accept` weighs most (JSON on a tie). */
function chooseFormat(format: SqlFormat | undefined, accept: string | undefined): SqlFormat {
  if (format) return format;
  const weights: [SqlFormat, number][] = [
    ["json", acceptWeight(accept, "application", "json")],
    ["csv", acceptWeight(accept, "text", "csv")],
    ["parquet", acceptWeight(accept, "application", "vnd.apache.parquet")],
  ];
  let best: [SqlFormat, number] = ["json", weights[0]![1]];
  for (const w of weights) if (w[1] > best[1]) best = w;
  return best[0];
}

export async function sqlRoutes(app: App, deps: ApiDeps): Promise<void> {
  const plans = new Set(deps.config.SQL_PLANS);
  const need = requireDb(deps);

  app.post(
    "/sql",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Events"],
        summary: "Read-only SQL over the api_v1_* views (JSON, CSV or Parquet)",
        description: DESCRIPTION,
        body: SqlBody,
        response: {
          200: {
            description: "The rows, as JSON, CSV or Parquet.",
            content: {
              "application/json": { schema: JsonResult },
              "text/csv": {
                schema: Type.String({ description: "CSV with a header row (ClickHouse CSVWithNames)." }),
              },
              "application/vnd.apache.parquet": {
                schema: Type.String({ format: "binary", description: "One Parquet file." }),
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const key = request.apiKey;
      if (key && key.level !== "admin" && !plans.has(key.plan_id)) {
        throw new AppError(
          "sql_not_in_plan",
          `SQL is not part of plan ${key.plan_id}; it is part of: ${[...plans].join(", ") || "no plan (admins only)"}`,
          { status: 403 },
        );
      }
      const format = chooseFormat(request.body.format, request.headers.accept);
      const result = await need("sql").run(request.body.query, format);
      reply.header("vary", "Accept").type(result.mediaType);
      if (format !== "json") reply.header("content-disposition", `attachment; filename="query.${format}"`);
      // Sent as bytes: the engine already wrote the JSON, CSV or Parquet.
      return reply.send(result.body as never);
    },
  );
}
