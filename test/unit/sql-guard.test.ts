/**
 * The parse-tree checks of POST /sql on EXPLAIN output as ClickHouse 26 prints it (the integration test
 * sql.test.ts runs the same checks on the engine's own output).
 */
import { describe, expect, it } from "vitest";
import { checkAst, checkQueryTree } from "../../lib/sql/guard.ts";

const DB = "alephium_test";
const lines = (text: string) => text.split("\n");

function refusedWith(run: () => unknown): { code: string; found: unknown } {
  try {
    run();
  } catch (error) {
    const e = error as { code: string; details: { found: unknown } };
    return { code: e.code, found: e.details.found };
  }
  throw new Error("not refused");
}

describe("checkAst", () => {
  it("accepts a SELECT over the views, qualified with this database or not", () => {
    const ast = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 2)
   ExpressionList (children 1)
    Asterisk
   TablesInSelectQuery (children 2)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      TableIdentifier api_v1_events (alias e)
    TablesInSelectQueryElement (children 2)
     TableExpression (children 1)
      TableIdentifier ${DB}.api_v1_blocks
     TableJoin`;
    expect(checkAst(lines(ast), DB)).toEqual({ hasCte: false });
  });

  it("refuses a table function wherever it sits, by its place in the tree", () => {
    const ast = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 2)
   ExpressionList (children 1)
    Asterisk
   TablesInSelectQuery (children 1)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      Subquery (children 1)
       SelectWithUnionQuery (children 1)
        ExpressionList (children 1)
         SelectQuery (children 2)
          ExpressionList (children 1)
           Asterisk
          TablesInSelectQuery (children 1)
           TablesInSelectQueryElement (children 1)
            TableExpression (children 1)
             Function somethingNew (alias x) (children 1)
              ExpressionList`;
    expect(refusedWith(() => checkAst(lines(ast), DB))).toEqual({
      code: "sql_table_function",
      found: "somethingNew",
    });
  });

  it("refuses statements other than SELECT, SETTINGS, FORMAT, other databases and dictionaries", () => {
    expect(
      refusedWith(() => checkAst(lines("AlterQuery  events (children 2)\n Identifier events"), DB)).code,
    ).toBe("sql_not_select");
    const withClause = (extra: string) => `SelectWithUnionQuery (children 2)
 ExpressionList (children 1)
  SelectQuery (children 1)
   ExpressionList (children 1)
    Literal UInt64_1
${extra}`;
    expect(refusedWith(() => checkAst(lines(withClause(" Identifier TSV")), DB))).toEqual({
      code: "sql_format_clause",
      found: "FORMAT",
    });
    expect(refusedWith(() => checkAst(lines(withClause(" Literal 'x.csv'")), DB)).found).toBe("INTO OUTFILE");
    expect(refusedWith(() => checkAst(lines(withClause("   Set")), DB)).code).toBe("sql_settings");
    const table = (name: string, fn = "toString") => `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 2)
   ExpressionList (children 1)
    Function ${fn} (children 1)
     ExpressionList
   TablesInSelectQuery (children 1)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      TableIdentifier ${name}`;
    expect(refusedWith(() => checkAst(lines(table("other.api_v1_events")), DB)).code).toBe(
      "sql_other_database",
    );
    expect(refusedWith(() => checkAst(lines(table("system.parts")), DB)).code).toBe("sql_system_table");
    expect(refusedWith(() => checkAst(lines(table("events")), DB)).code).toBe("sql_table_not_allowed");
    expect(refusedWith(() => checkAst(lines(table("api_v1_events", "dictGetString")), DB))).toEqual({
      code: "sql_function_refused",
      found: "dictGetString",
    });
  });

  it("leaves names to the query tree when the query defines CTEs", () => {
    const ast = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 3)
   ExpressionList (children 1)
    WithElement (children 1)
     Subquery (children 1)
   ExpressionList (children 1)
    Asterisk
   TablesInSelectQuery (children 1)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      TableIdentifier recent`;
    expect(checkAst(lines(ast), DB)).toEqual({ hasCte: true });
  });
});

describe("checkQueryTree", () => {
  const tree = (table: string) => `QUERY id: 0
  PROJECTION COLUMNS
    id String
  JOIN TREE
    QUERY id: 3, alias: __table1, is_subquery: 1, is_cte: 1, cte_name: recent
      JOIN TREE
        TABLE id: 6, alias: __table2, table_name: ${table}`;

  it("accepts the views of this database and the engine's system.one", () => {
    expect(() => checkQueryTree(lines(tree(`${DB}.api_v1_events`)), DB)).not.toThrow();
    expect(() => checkQueryTree(lines(tree("system.one")), DB)).not.toThrow();
  });

  it("refuses the tables a CTE or IN resolved to, table functions and refused functions", () => {
    expect(refusedWith(() => checkQueryTree(lines(tree(`${DB}.events`)), DB))).toEqual({
      code: "sql_table_not_allowed",
      found: "events",
    });
    expect(refusedWith(() => checkQueryTree(lines(tree("system.tables")), DB)).code).toBe("sql_system_table");
    expect(refusedWith(() => checkQueryTree(lines(tree("other.api_v1_events")), DB)).code).toBe(
      "sql_other_database",
    );
    expect(
      refusedWith(() =>
        checkQueryTree(["    TABLE_FUNCTION id: 3, alias: __table1, table_function_name: url"], DB),
      ),
    ).toEqual({ code: "sql_table_function", found: "url" });
    expect(
      refusedWith(() =>
        checkQueryTree(["      FUNCTION id: 2, function_name: joinGet, function_type: ordinary"], DB),
      ).code,
    ).toBe("sql_function_refused");
  });
});
