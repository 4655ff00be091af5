// Test passes: embedded (what it checks is chDB's; its Postgres holds keys and plans, the same SQL on PGlite).
/**
 * POST /sql: read-only SQL over the api_v1_* views. Who may call it (admin keys, plans SQL_PLANS lists);
 * every refused construct answers 400 naming it, checked on ClickHouse's parse; each limit answers 400
 * naming its config key; readonly really refuses writes on the shared chDB session and does not leak into
 * it; allowed queries give the same rows as the JSON routes; CSV and Parquet answers read back. Seeds
 * hand-made events and a pool pair with its candles as plain rows. Runs on PGlite, or on PostgreSQL with
 * TEST_POSTGRES_URL (the key and plan side), with chDB.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addressFromContractId } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/config.ts";
import { splitStatements } from "../../lib/migrate.ts";
import { API_V1_VIEWS } from "../../lib/sql/guard.ts";
import { sqlSettings } from "../../lib/sql/service.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { blockMessage, type EventSpec, liftWatermark, writeMessages } from "../helpers/dapp-events.ts";
import { addPoolPairWithDailyCandles } from "../helpers/prices.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

type Reply = Awaited<ReturnType<TestApp["app"]["inject"]>>;
type Json = Record<string, unknown>;

const T0 = 1_750_000_020_000;
const MINUTE = 60_000;
const PXA = "a1".repeat(32);
const POOL = addressFromContractId("01".repeat(32));
const miner = addressFromContractId("0a".repeat(32));
const trader = addressFromContractId("0b".repeat(32));

/** Minimal RFC 4180 reader: quoted cells with doubled quotes, commas and line breaks inside. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(cell);
      cell = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else cell += ch;
  }
  if (cell !== "" || row.length) rows.push([...row, cell]);
  return rows;
}

function expectRefused(r: Reply, code: string, named: string): void {
  expect(r.statusCode, r.body).toBe(400);
  expect(r.headers["content-type"]).toContain("application/problem+json");
  const body = r.json() as { code: string; detail: string };
  expect(body.code, r.body).toBe(code);
  expect(body.detail).toContain("query");
  expect(body.detail.toLowerCase()).toContain(named.toLowerCase());
}

describe(`POST /sql (${process.env.TEST_POSTGRES_URL ? "PostgreSQL" : "PGlite"} + chDB)`, () => {
  let stores: { pg: TestPg; ch: TestCh };
  let t: TestApp;
  let pairId: number;
  let freeKey: string;
  let freeAdminKey: string;
  const extraApps: TestApp[] = [];
  const tmp = mkdtempSync(join(tmpdir(), "sql-test-"));

  const sql = (app: TestApp, key: string, body: Json, headers: Record<string, string> = {}) =>
    app.app.inject({ method: "POST", url: "/sql", headers: { ...app.auth(key), ...headers }, payload: body });
  const admin = (query: string, extra: Json = {}, headers: Record<string, string> = {}) =>
    sql(t, t.adminKey, { query, ...extra }, headers);
  const countEvents = async () =>
    Number((await stores.ch.ch.query<{ n: string }>("t", "SELECT count() AS n FROM events"))[0]!.n);

  beforeAll(async () => {
    stores = { pg: await openTestPg(), ch: await openTestCh() };
    t = await createTestApp({ stores });
    // Events: 6 blocks of chain 0 a minute apart, each a coinbase and a swap.
    const messages = [];
    for (let h = 1; h <= 6; h++) {
      const txs: EventSpec[][] = [
        [
          {
            dapp_id: "alephium",
            category: "mining",
            sub_kind: "coinbase",
            type: "coinbase",
            to: miner,
            amount: String(3n * 10n ** 18n + BigInt(h)),
            payload: { reward: h },
          },
        ],
        [
          {
            dapp_id: "ayin",
            category: "dex",
            sub_kind: h % 2 ? "buy" : "sell",
            type: "swap",
            from: trader,
            with: POOL,
            token_id: PXA,
            amount: String(1000 * h),
            payload: { note: 'one, "two"\nthree' },
          },
        ],
      ];
      messages.push(blockMessage(0, h, T0 + h * MINUTE, txs));
    }
    await writeMessages(stores.ch.ch, messages);
    await liftWatermark(stores.ch.ch, T0 + 100 * MINUTE);

    // A pool pair (PXA / ALPH) and three daily candles, as the candles processor writes them.
    await stores.pg.pg.query(
      "t",
      `INSERT INTO tokens (id, contract_address, name, symbol, decimals, source, created_at, updated_at)
       VALUES ($1, $2, 'Pixa', 'PXA', 6, 'chain', $3, $3)`,
      [PXA, addressFromContractId(PXA), Date.now()],
    );
    pairId = await addPoolPairWithDailyCandles(t, stores, POOL, PXA);

    const keys = t.deps.keys!;
    freeKey = (await keys.createKey({ userId: "sql-free", planId: "free", level: "user" })).key;
    freeAdminKey = (await keys.createKey({ userId: "sql-admin", planId: "free", level: "admin" })).key;
  });
  afterAll(async () => {
    for (const a of extraApps) await a.close();
    await t?.close();
    await stores?.ch.close();
    await stores?.pg.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("is for admin keys and the plans SQL_PLANS lists (enterprise by default)", async () => {
    const query = "SELECT count() AS n FROM api_v1_events";
    const refused = await sql(t, freeKey, { query });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json().code).toBe("sql_not_in_plan");
    expect(refused.json().detail).toContain("free");
    const enterprise = await sql(t, t.userKey, { query });
    expect(enterprise.statusCode, enterprise.body).toBe(200);
    expect(enterprise.json().data).toEqual([{ n: "12" }]);
    const adminOnFree = await sql(t, freeAdminKey, { query });
    expect(adminOnFree.statusCode, adminOnFree.body).toBe(200);

    // Another plan list: free is in, enterprise users are out.
    const other = await createTestApp({ stores, env: { SQL_PLANS: "free" } });
    extraApps.push(other);
    const otherFree = await other.deps.keys!.createKey({
      userId: "sql-free-2",
      planId: "free",
      level: "user",
    });
    expect((await sql(other, otherFree.key, { query })).statusCode).toBe(200);
    expect((await sql(other, other.userKey, { query })).statusCode).toBe(403);
  });

  it("gives the rows of /events/all for the same events", async () => {
    const page = await t.app.inject({ url: "/events/all?limit=200", headers: t.auth(t.userKey) });
    expect(page.statusCode, page.body).toBe(200);
    const events = (page.json().events as Json[])
      .slice()
      .sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(events).toHaveLength(12);
    const r = await admin(
      `SELECT id, dapp_id, category, sub_kind, type, from, to, with, token_id, amount, is_main, tx_id,
              block_hash, block_height, chain_index, toUnixTimestamp64Milli(timestamp) AS timestamp, payload
       FROM api_v1_events ORDER BY id`,
    );
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers["content-type"]).toContain("application/json");
    const body = r.json() as { meta: { name: string }[]; rows: number; data: Json[] };
    expect(body.meta.map((m) => m.name).slice(0, 3)).toEqual(["id", "dapp_id", "category"]);
    expect(body.rows).toBe(12);
    const rows = body.data.map((row) => ({
      ...row,
      timestamp: Number(row.timestamp),
      payload: JSON.parse(String(row.payload)),
    }));
    const keys = Object.keys(rows[0]!);
    expect(rows).toEqual(events.map((e) => Object.fromEntries(keys.map((k) => [k, e[k]]))));
  });

  it("gives the candles of the OHLCV page (raw ratios the page scales by the token decimals)", async () => {
    const page = await t.app.inject({
      url: `/price/pair/${pairId}/ohlcv?scale=1d&pageSize=10`,
      headers: t.auth(t.userKey),
    });
    expect(page.statusCode, page.body).toBe(200);
    const candles = page.json().ohlcv as { t: number; c: number; v: number }[];
    expect(candles).toHaveLength(3);
    const r = await admin(
      `SELECT t, c, v FROM api_v1_candles WHERE market = 'ayin:${POOL}' AND scale = '1d' ORDER BY t DESC`,
    );
    expect(r.statusCode, r.body).toBe(200);
    const rows = r.json().data as { t: string; c: string; v: string }[];
    expect(rows.map((row) => Number(row.t))).toEqual(candles.map((c) => c.t));
    // One factor (10^(base decimals - quote decimals)) turns every raw close into the page's close.
    const factor = candles[0]!.c / Number(rows[0]!.c);
    rows.forEach((row, i) => {
      expect(Number(row.c) * factor).toBeCloseTo(candles[i]!.c, 9);
    });
    expect(Number(rows[0]!.v) / 1e6).toBe(candles[0]!.v);
  });

  it("answers CSV by format or Accept, and the rows read back to the JSON's", async () => {
    const query = "SELECT id, category, amount, payload FROM api_v1_events ORDER BY id";
    const json = (await admin(query)).json().data as Json[];
    const byFormat = await admin(query, { format: "csv" });
    const byAccept = await admin(query, {}, { accept: "text/csv" });
    expect(byFormat.statusCode, byFormat.body).toBe(200);
    expect(byFormat.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(byAccept.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(byAccept.body).toBe(byFormat.body);
    const [header, ...lines] = parseCsv(byFormat.body);
    expect(header).toEqual(["id", "category", "amount", "payload"]);
    expect(lines.map(([id, category, amount, payload]) => ({ id, category, amount, payload }))).toEqual(json);
    // `format` wins over Accept; JSON stays the default.
    expect(
      (await admin(query, { format: "json" }, { accept: "text/csv" })).headers["content-type"],
    ).toContain("application/json");
  });

  it("answers Parquet that reads back to the same rows", async () => {
    const query =
      "SELECT id, category, toString(amount) AS amount, block_height FROM api_v1_events ORDER BY id";
    const json = (await admin(query)).json().data as Json[];
    const r = await admin(query, {}, { accept: "application/vnd.apache.parquet" });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers["content-type"]).toBe("application/vnd.apache.parquet");
    const bytes = r.rawPayload;
    expect(bytes.subarray(0, 4).toString()).toBe("PAR1");
    const file = join(tmp, "answer.parquet");
    writeFileSync(file, bytes);
    const back = await stores.ch.ch.query<Json>(
      "t",
      `SELECT id, category, amount, toString(block_height) AS block_height FROM file('${file}', Parquet)`,
    );
    expect(back).toEqual(json.map((row) => ({ ...row, block_height: String(row.block_height) })));
  });

  const REFUSED: [string, string, string, string][] = [
    [
      "table function url",
      "SELECT * FROM url('http://127.0.0.1:9/x', CSV, 'a String')",
      "sql_table_function",
      "url",
    ],
    ["table function file", "SELECT * FROM file('/etc/passwd', LineAsString)", "sql_table_function", "file"],
    [
      "table function s3",
      "SELECT * FROM s3('http://127.0.0.1:9/b/k.csv', CSV, 'a String')",
      "sql_table_function",
      "s3",
    ],
    [
      "table function remote",
      "SELECT * FROM remote('127.0.0.1:9', system.one)",
      "sql_table_function",
      "remote",
    ],
    ["table function input", "SELECT * FROM input('a String')", "sql_table_function", "input"],
    ["table function numbers", "SELECT number FROM numbers(10)", "sql_table_function", "numbers"],
    [
      "table function in a join",
      "SELECT id FROM api_v1_events AS e JOIN url('http://127.0.0.1:9/x', CSV, 'id String') AS u USING id",
      "sql_table_function",
      "url",
    ],
    ["system table", "SELECT name FROM system.tables", "sql_system_table", "system.tables"],
    [
      "system table in a subquery",
      "SELECT id FROM api_v1_events WHERE id IN (SELECT name FROM system.tables)",
      "sql_system_table",
      "system.tables",
    ],
    [
      "information_schema",
      "SELECT * FROM information_schema.tables",
      "sql_system_table",
      "information_schema.tables",
    ],
    ["another database", "SELECT * FROM other_db.api_v1_events", "sql_other_database", "other_db"],
    ["an internal table", "SELECT * FROM events", "sql_table_not_allowed", "events"],
    [
      "an internal table behind a CTE",
      "WITH x AS (SELECT 1 AS a) SELECT id FROM events",
      "sql_table_not_allowed",
      "events",
    ],
    [
      "an internal table in IN",
      "WITH x AS (SELECT 1 AS a) SELECT id FROM api_v1_events WHERE id IN event_rewrites",
      "sql_table_not_allowed",
      "event_rewrites",
    ],
    ["SETTINGS", "SELECT id FROM api_v1_events SETTINGS max_threads = 1", "sql_settings", "SETTINGS"],
    [
      "SETTINGS in a subquery",
      "SELECT * FROM (SELECT id FROM api_v1_events SETTINGS readonly = 0)",
      "sql_settings",
      "SETTINGS",
    ],
    ["SET", "SET readonly = 0", "sql_not_select", "SET"],
    ["INSERT", "INSERT INTO api_v1_events SELECT * FROM api_v1_events", "sql_not_select", "INSERT"],
    ["ALTER", "ALTER TABLE events DELETE WHERE 1", "sql_not_select", "ALTER"],
    ["DROP", "DROP TABLE events", "sql_not_select", "DROP"],
    ["CREATE", "CREATE TABLE x (a UInt8) ENGINE = Memory", "sql_not_select", "CREATE"],
    ["TRUNCATE", "TRUNCATE TABLE events", "sql_not_select", "TRUNCATE"],
    [
      "multiple statements",
      "SELECT 1; DROP TABLE events",
      "sql_multiple_statements",
      "more than one statement",
    ],
    [
      "a second statement behind a line comment",
      "SELECT 1 -- harmless\n; DROP TABLE events",
      "sql_multiple_statements",
      "more than one statement",
    ],
    [
      "a second statement behind a block comment",
      "SELECT 1 /* ; */; DROP TABLE events",
      "sql_multiple_statements",
      "more than one statement",
    ],
    ["FORMAT", "SELECT 1 FORMAT TSV", "sql_format_clause", "FORMAT"],
    ["INTO OUTFILE", "SELECT 1 INTO OUTFILE '/tmp/x.csv'", "sql_format_clause", "INTO OUTFILE"],
    ["the file function", "SELECT file('/etc/passwd')", "sql_function_refused", "file"],
    ["dictionaries", "SELECT dictGet('d', 'a', toUInt64(1))", "sql_function_refused", "dictGet"],
    ["a syntax error", "SELEKT 1", "sql_syntax", "does not parse"],
  ];

  it.each(REFUSED)("refuses %s with 400 naming it", async (_label, query, code, named) => {
    expectRefused(await admin(query), code, named);
  });

  it("ran none of the refused statements", async () => {
    expect(await countEvents()).toBeGreaterThanOrEqual(12);
    const tables = await stores.ch.ch.query<{ name: string }>(
      "t",
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name IN ('events', 'x')",
    );
    expect(tables.map((row) => row.name)).toEqual(["events"]);
  });

  it("answers 400 naming each limit a query exceeds", async () => {
    // One app whose limits each case sets in its config (the service reads them per query).
    const limited = await createTestApp({ stores });
    extraApps.push(limited);
    const defaults = { ...limited.deps.config };
    const cases: [Partial<typeof defaults>, string, string][] = [
      [{ SQL_MAX_EXECUTION_MS: 200 }, "SELECT sleep(2)", "SQL_MAX_EXECUTION_MS"],
      [
        { SQL_MAX_ROWS_TO_READ: 5 },
        "SELECT count() FROM api_v1_events WHERE amount > 0",
        "SQL_MAX_ROWS_TO_READ",
      ],
      [
        { SQL_MAX_RESULT_ROWS: 3 },
        "SELECT id FROM api_v1_events ORDER BY id LIMIT 10",
        "SQL_MAX_RESULT_ROWS",
      ],
      [
        { SQL_MAX_RESULT_BYTES: 1000 },
        "SELECT repeat(id, 20) AS big FROM api_v1_events",
        "SQL_MAX_RESULT_BYTES",
      ],
      [
        { SQL_MAX_MEMORY_BYTES: 1_000_000 },
        "SELECT length(groupArray(repeat(id, 10000))) AS n FROM api_v1_events",
        "SQL_MAX_MEMORY_BYTES",
      ],
    ];
    for (const [limits, query, key] of cases) {
      Object.assign(limited.deps.config, defaults, limits);
      const r = await sql(limited, limited.adminKey, { query });
      expect(r.statusCode, `${key}: ${r.body}`).toBe(400);
      const body = r.json() as { code: string; detail: string; details: { limit: string } };
      expect(body.code, `${key}: ${r.body}`).toBe("sql_limit_exceeded");
      expect(body.detail).toContain(key);
      expect(body.details.limit).toBe(key);
      // The shared chDB session is clean after the failure: the next query gets only its own result
      // (chDB hands a failed query's partial output, like the JSON header, to the next one unless drained).
      expect(await stores.ch.ch.query("t", "SELECT 42 AS x")).toEqual([{ x: 42 }]);
      // Under the default limits the same query passes: the lowered limit was the reason.
      Object.assign(limited.deps.config, defaults);
      const passes = await sql(limited, limited.adminKey, { query });
      expect(passes.statusCode, `${key}: ${passes.body}`).toBe(200);
    }
  });

  it("runs with readonly on the shared session for that query only: writes are refused, ingest still writes", async () => {
    const config = loadConfig({});
    const before = await countEvents();
    const write = stores.ch.ch.queryRaw(
      "t",
      "INSERT INTO event_rewrites (from_id, to_id, blocks, seq) SELECT 'a', 'b', 1, 1",
      { format: "JSON", settings: sqlSettings(config) },
    );
    await expect(write).rejects.toMatchObject({ details: { clickhouse_code: 164 } });
    const rewrites = async () =>
      Number((await stores.ch.ch.query<{ n: string }>("t", "SELECT count() AS n FROM event_rewrites"))[0]!.n);
    const rewritesBefore = await rewrites();
    // The setting did not stay on the session: a plain write right after works.
    await stores.ch.ch.insert("t", "event_rewrites", [{ from_id: "a", to_id: "b", blocks: 1, seq: 1 }]);
    expect(await rewrites()).toBe(rewritesBefore + 1);
    // And a SELECT through /sql after all the refusals still sees every event.
    const r = await admin("SELECT count() AS n FROM api_v1_events");
    expect(Number(r.json().data[0].n)).toBe(before);
  });

  it("allows exactly the views the migrations create, and the server role grants exactly those", async () => {
    const views = await stores.ch.ch.query<{ name: string; engine: string }>(
      "t",
      "SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND name LIKE 'api\\_v1\\_%' ORDER BY name",
    );
    expect(views.map((v) => v.name)).toEqual([...API_V1_VIEWS].sort());
    expect(new Set(views.map((v) => v.engine))).toEqual(new Set(["View"]));
    // Every view answers through /sql.
    for (const view of API_V1_VIEWS) {
      const r = await admin(`SELECT * FROM ${view} LIMIT 1`);
      expect(r.statusCode, `${view}: ${r.body}`).toBe(200);
    }
    const role = readFileSync(new URL("../../clickhouse/roles/api_v1_reader.sql", import.meta.url), "utf8");
    const statements = splitStatements(role).map((st) => st.replace(/--.*$/gm, "").trim());
    const granted = statements.flatMap(
      (st) => /^GRANT SELECT ON alephium_prod\.(\w+) TO api_v1_reader$/.exec(st)?.[1] ?? [],
    );
    expect(granted.sort()).toEqual([...API_V1_VIEWS].sort());
    expect(statements.filter((st) => st.startsWith("GRANT")).length).toBe(API_V1_VIEWS.length);
    // Each statement is one the engine parses (the server itself is not part of this test run).
    for (const q of statements) {
      await expect(
        stores.ch.ch.query("t", "SELECT formatQuery({q:String}) AS f", { q }),
      ).resolves.toHaveLength(1);
    }
  });

  it("counts queries by outcome in the metrics", async () => {
    const counts = async () =>
      Object.fromEntries(
        (await t.deps.metrics.sqlQueries.get()).values.map((v) => [String(v.labels.outcome), v.value]),
      );
    const before = await counts();
    await admin("SELECT 1 AS one");
    await admin("SELECT * FROM numbers(3)");
    const after = await counts();
    expect(after.ok).toBe((before.ok ?? 0) + 1);
    expect(after.sql_table_function).toBe((before.sql_table_function ?? 0) + 1);
  });

  it("refuses bad bodies with 400 naming the field", async () => {
    const noQuery = await sql(t, t.adminKey, {});
    expect(noQuery.statusCode).toBe(400);
    expect(noQuery.json().detail).toContain("query");
    const badFormat = await admin("SELECT 1", { format: "xml" });
    expect(badFormat.statusCode).toBe(400);
    expect(badFormat.json().detail).toContain("format");
    expectRefused(await admin("SELECT id FROM api_v1_events WHERE nope = 1"), "sql_error", "nope");
  });
});
