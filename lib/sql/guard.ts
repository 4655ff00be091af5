/**
 * What `POST /sql` accepts, judged on ClickHouse's own parse of the query (never on its text alone):
 * the `EXPLAIN AST` tree, then the `EXPLAIN QUERY TREE` of the analyzer, which resolves every name
 * (CTEs, `IN table`, aliases) to the table it really reads. Both checks are pure functions of the
 * EXPLAIN output; lib/sql/service.ts runs the EXPLAINs through the one ClickHouse module.
 */
import { AppError } from "../errors.ts";

/** The versioned views SQL users may read (clickhouse/0014_create_api_v1_views.sql): the stable contract. */
export const API_V1_VIEWS = [
  "api_v1_events",
  "api_v1_blocks",
  "api_v1_chain_progress",
  "api_v1_trades",
  "api_v1_candles",
  "api_v1_spot",
  "api_v1_series_instances",
  "api_v1_series_points",
  "api_v1_market_figures",
] as const;

/**
 * Scalar functions that reach past the views: files, dictionaries, Join tables, other tables'
 * metadata, the server's own settings and filesystem, introspection. Table functions are all refused
 * by their place in the tree, whatever their name.
 */
const REFUSED_FUNCTIONS = new Set(
  [
    "file",
    "joinGet",
    "joinGetOrNull",
    "hasColumnInTable",
    "getServerSetting",
    "getMergeTreeSetting",
    "getServerPort",
    "filesystemAvailable",
    "filesystemCapacity",
    "filesystemUnreserved",
    "catboostEvaluate",
    "addressToLine",
    "addressToLineWithInlines",
    "addressToSymbol",
    "demangle",
    "getClientHTTPHeader",
    "globalVariable",
  ].map((f) => f.toLowerCase()),
);

const isRefusedFunction = (name: string) => {
  const lower = name.toLowerCase();
  return REFUSED_FUNCTIONS.has(lower) || lower.startsWith("dict");
};

/** Kinds of refusal, each its own error code (`sql_<kind>`) and a sentence naming what was found. */
export type RefusalKind =
  | "not_select"
  | "settings"
  | "format_clause"
  | "table_function"
  | "system_table"
  | "other_database"
  | "table_not_allowed"
  | "function_refused";

export function refusal(kind: RefusalKind, message: string, found: string): AppError {
  return new AppError(`sql_${kind}`, `query: ${message}`, {
    status: 400,
    details: { field: "query", construct: kind, found },
  });
}

interface Node {
  type: string;
  /** The rest of the line after the node type (names, aliases, children count). */
  text: string;
  depth: number;
  parent: Node | null;
}

/** EXPLAIN output lines as nodes with their parent, by indentation (`step` spaces per level). */
function parseTree(lines: readonly string[], step: number): Node[] {
  const nodes: Node[] = [];
  const stack: Node[] = [];
  for (const line of lines) {
    if (line.trim() === "") continue;
    const indent = line.length - line.trimStart().length;
    const depth = Math.floor(indent / step);
    const body = line.trim();
    const space = body.indexOf(" ");
    const type = space === -1 ? body : body.slice(0, space);
    const text = space === -1 ? "" : body.slice(space + 1);
    while (stack.length > depth) stack.pop();
    const node: Node = { type, text, depth, parent: stack.at(-1) ?? null };
    nodes.push(node);
    stack[depth] = node;
    stack.length = depth + 1;
  }
  return nodes;
}

/** The name part of an AST node's text: `url (alias u) (children 1)` → `url`. */
const astName = (text: string) => text.replace(/( \(alias .*?\))?( \(children \d+\))?$/, "");

/** Checks a `db.table` or `table` name the query reads against the views; `database` is this deployment's. */
function checkTable(name: string, database: string, unqualifiedOk: (n: string) => boolean): void {
  const dot = name.indexOf(".");
  if (dot === -1) {
    if ((API_V1_VIEWS as readonly string[]).includes(name) || unqualifiedOk(name)) return;
    throw refusal(
      "table_not_allowed",
      `reads ${name}, which is not one of the documented views (${API_V1_VIEWS.join(", ")})`,
      name,
    );
  }
  const db = name.slice(0, dot);
  const table = name.slice(dot + 1);
  if (db.toLowerCase() === "system" || db.toLowerCase() === "information_schema") {
    throw refusal("system_table", `reads ${name}: system tables are refused`, name);
  }
  if (db !== database) {
    throw refusal("other_database", `reads ${name} from another database (${db}): refused`, name);
  }
  checkTable(table, database, () => false);
}

export interface AstCheck {
  /** True when the query defines CTEs (WITH x AS (...)): their names are only resolved by the query tree. */
  hasCte: boolean;
}

/**
 * The `EXPLAIN AST` tree (one space per level) of one statement: a SELECT (or UNION / INTERSECT /
 * EXCEPT of SELECTs) without SETTINGS, FORMAT or INTO OUTFILE, reading only the views, calling no
 * table function and no refused function.
 */
export function checkAst(lines: readonly string[], database: string): AstCheck {
  const nodes = parseTree(lines, 1);
  const root = nodes[0];
  if (!root) throw refusal("not_select", "is empty", "");
  if (root.type !== "SelectWithUnionQuery" && root.type !== "SelectIntersectExceptQuery") {
    const kind = root.type.replace(/Query$/, "").toUpperCase();
    throw refusal("not_select", `is a ${kind} statement; only SELECT is allowed`, kind);
  }
  const hasCte = nodes.some((n) => n.type === "WithElement");
  for (const node of nodes) {
    if (node.type === "Set" || node.type === "SetQuery") {
      throw refusal("settings", "has a SETTINGS clause; settings cannot be changed", "SETTINGS");
    }
    if (node.parent === root && node !== root && node.type !== "ExpressionList") {
      const clause =
        node.type === "Literal" ? "INTO OUTFILE" : node.type === "Identifier" ? "FORMAT" : node.type;
      throw refusal(
        "format_clause",
        `has a ${clause} clause; choose the output with format or Accept`,
        clause,
      );
    }
    if (node.type === "Function") {
      const name = astName(node.text);
      if (node.parent?.type === "TableExpression") {
        throw refusal(
          "table_function",
          `calls the table function ${name}(); table functions are refused`,
          name,
        );
      }
      if (isRefusedFunction(name)) {
        throw refusal("function_refused", `calls ${name}(), which is refused`, name);
      }
    }
    if (node.type === "TableIdentifier") checkTable(astName(node.text), database, () => hasCte);
  }
  return { hasCte };
}

/**
 * The analyzer's `EXPLAIN QUERY TREE` (two spaces per level): every table it resolved is one of this
 * database's views, no table function, no refused function. This catches names the AST leaves open:
 * a CTE's name shadowing nothing, `x IN some_table`, a view name hidden in an alias.
 */
export function checkQueryTree(lines: readonly string[], database: string): void {
  for (const line of lines) {
    const body = line.trim();
    const tableFunction = /^TABLE_FUNCTION id: \d+.*?table_function_name: ([^,]+)/.exec(body);
    if (tableFunction) {
      const name = tableFunction[1] ?? "";
      throw refusal(
        "table_function",
        `calls the table function ${name}(); table functions are refused`,
        name,
      );
    }
    if (/^TABLE id: /.test(body)) {
      const table = /table_name: ([^,]+)/.exec(body)?.[1];
      if (!table) throw refusal("table_not_allowed", "reads a table this check cannot name", body);
      // A SELECT without FROM reads system.one, the engine's one-row table (an explicit system.one in the
      // query is refused by the AST check, which sees the name as written).
      if (table !== "system.one") checkTable(table, database, () => false);
    }
    const fn = /^FUNCTION id: \d+, function_name: ([^,]+)/.exec(body)?.[1];
    if (fn && isRefusedFunction(fn)) throw refusal("function_refused", `calls ${fn}(), which is refused`, fn);
  }
}
