// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * CSV export of the list routes (events, OHLCV, series chart, token list): the header and every cell,
 * read back with an RFC 4180 parser written here, give the JSON route's values for the same request;
 * the next-page cursor of a CSV page leads to the JSON's next page; quoting, the CSV-injection escape
 * of text columns, a bad `format`, and errors that stay Problem bodies. Seeds hand-made events,
 * series points backfilled from them, registry tokens, a pool pair and its candles as plain rows.
 */
import { addressFromContractId } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backfillSeries } from "../../lib/series/backfill.ts";
import { timeseriesById } from "../../lib/series/definitions/index.ts";
import { createSeriesDeps } from "../../lib/series/settings.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { blockMessage, type EventSpec, liftWatermark, writeMessages } from "../helpers/dapp-events.ts";
import { addPoolPairWithDailyCandles } from "../helpers/prices.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

type Reply = Awaited<ReturnType<TestApp["app"]["inject"]>>;
type Json = Record<string, unknown>;

/** RFC 4180 parser: quoted cells with doubled quotes, commas and line breaks inside; CRLF or LF line ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 2;
      } else if (ch === '"') {
        quoted = false;
        i++;
      } else {
        cell += ch;
        i++;
      }
    } else if (ch === '"') {
      if (cell !== "") throw new Error(`quote inside an unquoted cell at ${i}`);
      quoted = true;
      i++;
    } else if (ch === ",") {
      row.push(cell);
      cell = "";
      i++;
    } else if (ch === "\r" || ch === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i += ch === "\r" && text[i + 1] === "\n" ? 2 : 1;
    } else {
      cell += ch;
      i++;
    }
  }
  if (quoted) throw new Error("unterminated quoted cell");
  if (cell !== "" || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

type Kind = "text" | "number" | "u256" | "boolean" | "json" | "iso";

/** The JSON value a cell of `kind` stands for (the text escape undone). */
function decode(kind: Kind, cell: string): unknown {
  if (cell === "") return kind === "text" ? "" : null;
  switch (kind) {
    case "text":
      return /^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
    case "number":
      return Number(cell);
    case "u256":
      return cell;
    case "boolean":
      expect(["true", "false"]).toContain(cell);
      return cell === "true";
    case "json":
      return JSON.parse(cell);
    case "iso":
      expect(cell).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      return Date.parse(cell);
  }
}

/**
 * Reads a CSV reply back into objects: the header must be exactly `columns` (in order), and each
 * `*_iso` column must be the same instant as its Unix-ms twin. Text nulls read back as "".
 */
function readCsv(r: Reply, columns: [string, Kind][]): Json[] {
  expect(r.statusCode, r.body).toBe(200);
  expect(r.headers["content-type"]).toBe("text/csv; charset=utf-8");
  expect(r.headers.vary).toContain("Accept");
  expect(r.body.endsWith("\r\n")).toBe(true);
  const [header, ...lines] = parseCsv(r.body);
  expect(header).toEqual(columns.map(([name]) => name));
  return lines.map((cells) => {
    expect(cells).toHaveLength(columns.length);
    const out: Json = {};
    columns.forEach(([name, kind], i) => {
      out[name] = decode(kind, cells[i]!);
    });
    for (const [name] of columns.filter(([n]) => n.endsWith("_iso"))) {
      const twin = name.slice(0, -4);
      expect(out[name], name).toBe(out[twin]);
      delete out[name];
    }
    return out;
  });
}

/** A JSON row as readCsv gives it back: only `columns`, text nulls as "". */
function asCsvSees(row: Json, columns: [string, Kind][]): Json {
  const out: Json = {};
  for (const [name, kind] of columns) {
    if (name.endsWith("_iso")) continue;
    const v = row[name];
    out[name] = kind === "text" && (v === null || v === undefined) ? "" : (v ?? null);
  }
  return out;
}

function expectProblem(r: Reply, status: number, named: string): void {
  expect(r.statusCode, r.body).toBe(status);
  expect(r.headers["content-type"]).toContain("application/problem+json");
  const body = r.json() as { status: number; detail: string; errors?: { path: string }[] };
  expect(body.status).toBe(status);
  expect(`${body.detail} ${JSON.stringify(body.errors ?? [])}`).toContain(named);
}

const EVENT_COLUMNS: [string, Kind][] = [
  ["id", "text"],
  ["dapp_id", "text"],
  ["category", "text"],
  ["sub_kind", "text"],
  ["type", "text"],
  ["from", "text"],
  ["to", "text"],
  ["with", "text"],
  ["token_address", "text"],
  ["token_id", "text"],
  ["amount", "u256"],
  ["is_main", "boolean"],
  ["tx_id", "text"],
  ["tx_index", "number"],
  ["event_index", "number"],
  ["block_hash", "text"],
  ["block_height", "number"],
  ["chain_index", "number"],
  ["timestamp", "number"],
  ["timestamp_iso", "iso"],
  ["contract_address", "text"],
  ["contract_event_index", "number"],
  ["payload", "json"],
  ["payload_ref", "text"],
  ["address_labels", "json"],
];

const CANDLE_COLUMNS: [string, Kind][] = [
  ["pair_id", "number"],
  ["pair", "text"],
  ["source", "text"],
  ["denomination", "text"],
  ["scale", "text"],
  ["t", "number"],
  ["t_iso", "iso"],
  ["o", "number"],
  ["h", "number"],
  ["l", "number"],
  ["c", "number"],
  ["v", "number"],
];

const TOKEN_COLUMNS: [string, Kind][] = [
  ["id", "text"],
  ["contractAddress", "text"],
  ["name", "text"],
  ["symbol", "text"],
  ["symbolOnChain", "text"],
  ["decimals", "number"],
  ["logoURI", "text"],
  ["categories", "json"],
  ["dapp", "text"],
  ["originChain", "text"],
  ["registered", "boolean"],
  ["source", "text"],
  ["chainId", "number"],
  ["moderation", "text"],
  ["marketDisplay", "boolean"],
  ["circulatingSupplyUsd", "number"],
  ["priceUsd", "number"],
  ["tvlUsd", "number"],
  ["unknownFigures", "json"],
  ["mintTime", "number"],
  ["mintTime_iso", "iso"],
];

const T0 = 1_750_000_020_000;
const MINUTE = 60_000;
const COINBASE = "3000000000000000000";
const UNCLE = "1500000000000000000";
/** A payload whose text needs every kind of quoting. */
const AWKWARD = { note: 'one, "two"\nthree\r\nfour', formula: "=1+2", n: -5 };
const miner = addressFromContractId("0a".repeat(32));
const trader = addressFromContractId("0b".repeat(32));

/** An evil token of the registry: a formula name, a symbol that needs quotes, a negative-looking on-chain symbol. */
const EVIL = "e7".repeat(32);
const EVIL_NAME = '=HYPERLINK("http://evil.example","click, here")';
const EVIL_SYMBOL = 'EV"IL,\nX';
const PXA = "a1".repeat(32);
const POOL = addressFromContractId("01".repeat(32));
const DAY = 86_400_000;

describe("CSV export", () => {
  let stores: { pg: TestPg; ch: TestCh };
  let t: TestApp;
  let pairId: number;
  let instanceId: string;
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers });
  const user = () => t.auth(t.userKey);
  const sql = (text: string, params: (string | number | null)[] = []) =>
    stores.pg.pg.query("test", text, params);

  beforeAll(async () => {
    stores = { pg: await openTestPg(), ch: await openTestCh() };
    t = await createTestApp({ stores });

    // Events: 6 blocks of chain 0 a minute apart, each a coinbase and a swap with an awkward payload,
    // every third an uncle reward too.
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
            amount: COINBASE,
            payload: { reward: COINBASE },
          },
        ],
        [
          {
            dapp_id: "ayin",
            category: "dex",
            sub_kind: "buy",
            type: "swap",
            from: trader,
            with: POOL,
            token_id: PXA,
            amount: String(1000 + h),
            payload: { ...AWKWARD, h },
          },
        ],
      ];
      if (h % 3 === 0)
        txs.push([
          {
            dapp_id: "alephium",
            category: "mining",
            sub_kind: "uncle_reward",
            type: "uncle_reward",
            to: miner,
            amount: UNCLE,
            payload: {},
          },
        ]);
      messages.push(blockMessage(0, h, T0 + h * MINUTE, txs));
    }
    await writeMessages(stores.ch.ch, messages);
    await liftWatermark(stores.ch.ch, T0 + 100 * MINUTE);

    // Series points of the mining rewards, computed from those events.
    const def = timeseriesById("chain-mining-rewards")!;
    await backfillSeries(createSeriesDeps({ ch: stores.ch.ch, config: t.deps.config, log: quietLog }), [def]);
    const instances = await get("/series/chain-mining-rewards/instances?limit=200", user());
    expect(instances.statusCode, instances.body).toBe(200);
    instanceId = (
      instances.json().instances as { instanceId: string; dimensions: Record<string, string> }[]
    ).find((i) => i.dimensions.chain_index === "all")!.instanceId;

    // Registry tokens: the evil one, and PXA whose symbol starts like a negative number.
    const now = Date.now();
    await sql(
      `INSERT INTO tokens (id, contract_address, name, symbol, symbol_onchain, decimals, source, mint_time, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, 8, 'chain', $6, $7, $7), ($8, $9, NULL, '-PXA', NULL, 6, 'chain', NULL, $7, $7)`,
      [
        EVIL,
        addressFromContractId(EVIL),
        EVIL_NAME,
        EVIL_SYMBOL,
        "-1",
        T0,
        now,
        PXA,
        addressFromContractId(PXA),
      ],
    );
    // A pool pair (-PXA / ALPH) and three daily candles, as the candles processor writes them.
    pairId = await addPoolPairWithDailyCandles(t, stores, POOL, PXA);
  });
  afterAll(async () => {
    await t?.close();
    await stores?.ch.close();
    await stores?.pg.close();
  });

  it("exports a filtered events page that reads back as the JSON's events, quoting included", async () => {
    const query = "category=mining,dex&limit=5";
    const json = (await get(`/events/all?${query}`)).json().events as Json[];
    expect(json).toHaveLength(5);
    const byFormat = readCsv(await get(`/events/all?${query}&format=csv`), EVENT_COLUMNS);
    const byAccept = readCsv(await get(`/events/all?${query}`, { accept: "text/csv" }), EVENT_COLUMNS);
    expect(byFormat).toEqual(json.map((e) => asCsvSees(e, EVENT_COLUMNS)));
    expect(byAccept).toEqual(byFormat);
    // The awkward payload came through quoted: commas, doubled quotes and line breaks inside a cell.
    const swap = byFormat.find((e) => e.category === "dex")!;
    expect(swap.payload).toMatchObject(AWKWARD);
    const raw = (await get(`/events/all?${query}&format=csv`)).body;
    expect(raw).toContain('"{""note"":""one, \\""two\\""\\nthree');
    // The filter applies: only mining events with category=mining.
    const mining = readCsv(await get("/events/all?category=mining&limit=200&format=csv"), EVENT_COLUMNS);
    expect(mining.map((e) => e.sub_kind).sort()).toEqual([
      ...Array(6).fill("coinbase"),
      "uncle_reward",
      "uncle_reward",
    ]);
  });

  it("carries the next-page cursor of events: following it gives the JSON's second page", async () => {
    const first = await get("/events/all?category=mining&limit=3&format=csv");
    const rows = readCsv(first, EVENT_COLUMNS);
    const last = rows.at(-1)!.id as string;
    expect(first.headers["x-next-cursor"]).toBe(last);
    const link = String(first.headers.link);
    const match = /^<([^>]+)>; rel="next"$/.exec(link);
    expect(match, link).not.toBeNull();
    const next = new URL(match![1]!, "http://localhost");
    expect(next.pathname).toBe("/events/all");
    expect(Object.fromEntries(next.searchParams)).toEqual({
      category: "mining",
      limit: "3",
      format: "csv",
      after_id: last,
    });
    const second = readCsv(await get(match![1]!), EVENT_COLUMNS);
    const jsonSecond = (await get(`/events/all?category=mining&limit=3&after_id=${last}`)).json()
      .events as Json[];
    expect(jsonSecond).toHaveLength(3);
    expect(second).toEqual(jsonSecond.map((e) => asCsvSees(e, EVENT_COLUMNS)));
    // The last page (not full) has no next cursor.
    const end = await get("/events/all?category=mining&limit=200&format=csv");
    expect(end.headers["x-next-cursor"]).toBeUndefined();
    expect(end.headers.link).toBeUndefined();
  });

  it("exports OHLCV candles with the pair on every row, pages by its cursor, escapes the pair label", async () => {
    const json = (await get(`/price/pair/${pairId}/ohlcv?scale=1d&pageSize=2`)).json() as Json & {
      ohlcv: Json[];
    };
    expect(json.pair).toBe("-PXA/ALPH");
    expect(json.ohlcv).toHaveLength(2);
    const r = await get(`/price/pair/${pairId}/ohlcv?scale=1d&pageSize=2`, {
      accept: "text/csv, application/json;q=0.5",
    });
    const rows = readCsv(r, CANDLE_COLUMNS);
    const { ohlcv, ...head } = json;
    expect(rows).toEqual(ohlcv.map((c) => asCsvSees({ ...head, ...c }, CANDLE_COLUMNS)));
    // The text cell is escaped against formulas; the numbers are not.
    expect(parseCsv(r.body)[1]!.slice(1, 2)).toEqual(["'-PXA/ALPH"]);
    expect(r.headers["x-next-cursor"]).toBe("1");
    const page1 = readCsv(
      await get(/^<([^>]+)>/.exec(String(r.headers.link))![1]!, { accept: "text/csv" }),
      CANDLE_COLUMNS,
    );
    const jsonPage1 = (await get(`/price/pair/${pairId}/ohlcv?scale=1d&pageSize=2&page=1`)).json()
      .ohlcv as Json[];
    expect(jsonPage1.map((c) => c.t)).toEqual([Date.UTC(2024, 0, 2)]);
    expect(page1).toEqual(jsonPage1.map((c) => asCsvSees({ ...head, ...c }, CANDLE_COLUMNS)));
    // Range mode: the cursor is the `end` before the oldest candle served.
    const range = await get(`/price/pair/${pairId}/ohlcv?scale=1d&start=0&limit=1&format=csv`);
    expect(readCsv(range, CANDLE_COLUMNS).map((c) => c.t)).toEqual([Date.UTC(2024, 0, 9)]);
    expect(range.headers["x-next-cursor"]).toBe(String(Date.UTC(2024, 0, 9) - 1));
    const older = readCsv(await get(/^<([^>]+)>/.exec(String(range.headers.link))![1]!), CANDLE_COLUMNS);
    expect(older.map((c) => c.t)).toEqual([Date.UTC(2024, 0, 3)]);
    expect(Date.UTC(2024, 0, 9) - Date.UTC(2024, 0, 3)).toBe(6 * DAY);
  });

  it("exports a series chart: one column per point key, or y with a key", async () => {
    const url = `/series/instances/${instanceId}/1m/chart`;
    const json = (await get(url, user())).json() as {
      points: { t: number; values: Record<string, number>; kind: string }[];
    };
    expect(json.points).toHaveLength(6);
    const columns: [string, Kind][] = [
      ["t", "number"],
      ["t_iso", "iso"],
      ["kind", "text"],
      ["rewards", "number"],
      ["uncles", "number"],
    ];
    const r = await get(`${url}?format=csv`, user());
    expect(r.headers["x-chart-truncated"]).toBe("false");
    const rows = readCsv(r, columns);
    expect(rows).toEqual(
      json.points.map((p) => ({
        t: p.t,
        kind: p.kind,
        rewards: p.values.rewards ?? null,
        uncles: p.values.uncles ?? null,
      })),
    );
    // Buckets without an uncle have an empty `uncles` cell; the others count one.
    expect(rows.map((p) => p.uncles)).toEqual([null, null, 1, null, null, 1]);
    expect(rows.map((p) => p.rewards)).toEqual([3e18, 3e18, 4.5e18, 3e18, 3e18, 4.5e18]);

    const keyed = (await get(`${url}?key=uncles&until_ts=${T0 + 5 * MINUTE}`, user())).json()
      .points as Json[];
    const keyedCsv = readCsv(
      await get(`${url}?key=uncles&until_ts=${T0 + 5 * MINUTE}`, { ...user(), accept: "text/csv" }),
      [
        ["t", "number"],
        ["t_iso", "iso"],
        ["kind", "text"],
        ["y", "number"],
      ],
    );
    expect(keyed).toHaveLength(1);
    expect(keyedCsv).toEqual(keyed);
  });

  it("exports the token list page by page, escaping formula text and quoting awkward text", async () => {
    const json = (await get("/token/all?pageSize=7&page=1")).json() as { tokens: Json[]; total: number };
    expect(json.total).toBeGreaterThan(14);
    const first = await get("/token/all?pageSize=7&page=1&format=csv");
    expect(readCsv(first, TOKEN_COLUMNS)).toEqual(json.tokens.map((x) => asCsvSees(x, TOKEN_COLUMNS)));
    expect(first.headers["x-total-count"]).toBe(String(json.total));
    expect(first.headers["x-next-cursor"]).toBe("2");
    const link = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link))![1]!;
    expect(new URL(link, "http://localhost").searchParams.get("page")).toBe("2");
    const jsonPage2 = (await get("/token/all?pageSize=7&page=2")).json().tokens as Json[];
    expect(readCsv(await get(link), TOKEN_COLUMNS)).toEqual(
      jsonPage2.map((x) => asCsvSees(x, TOKEN_COLUMNS)),
    );
    const lastPage = Math.ceil(json.total / 7);
    expect(
      (await get(`/token/all?pageSize=7&page=${lastPage}&format=csv`)).headers["x-next-cursor"],
    ).toBeUndefined();

    // The evil token: its name is a formula (escaped), its symbol needs quotes, its on-chain symbol looks negative.
    const evil = await get(`/token/all?search=${EVIL}&format=csv`);
    const [header, row] = parseCsv(evil.body);
    const cell = (name: string) => row![header!.indexOf(name)];
    expect(cell("name")).toBe(`'${EVIL_NAME}`);
    expect(cell("symbol")).toBe(EVIL_SYMBOL);
    expect(cell("symbolOnChain")).toBe("'-1");
    expect(cell("decimals")).toBe("8");
    expect(cell("mintTime")).toBe(String(T0));
    expect(cell("mintTime_iso")).toBe(new Date(T0).toISOString());
    expect(evil.body).toContain('"EV""IL,\nX"');
    const evilJson = (await get(`/token/all?search=${EVIL}`)).json().tokens as Json[];
    expect(readCsv(evil, TOKEN_COLUMNS)).toEqual(evilJson.map((x) => asCsvSees(x, TOKEN_COLUMNS)));
  });

  it("answers JSON for no Accept, */*, a tie, a JSON preference, or an Accept that allows neither", async () => {
    for (const accept of [
      undefined,
      "*/*",
      "application/json, text/csv",
      "text/csv;q=0.4, application/json",
      "image/png",
    ]) {
      const r = await get("/token/all?pageSize=2", accept ? { accept } : {});
      expect(r.statusCode, accept).toBe(200);
      expect(r.headers["content-type"], accept).toBe("application/json; charset=utf-8");
      expect(r.json().tokens, accept).toHaveLength(2);
      expect(r.headers.vary).toContain("Accept");
    }
    // `format` wins over Accept.
    const json = await get("/token/all?pageSize=2&format=json", { accept: "text/csv" });
    expect(json.headers["content-type"]).toBe("application/json; charset=utf-8");
    const csv = await get("/token/all?pageSize=2&format=csv", { accept: "application/json" });
    expect(csv.headers["content-type"]).toBe("text/csv; charset=utf-8");
  });

  it("refuses a bad format with a 400 naming it, and keeps errors as Problem bodies when CSV is asked", async () => {
    for (const url of [
      "/events/all?format=xml",
      `/price/pair/${pairId}/ohlcv?format=CSV`,
      "/token/all?format=",
    ])
      expectProblem(await get(url), 400, "format");
    expectProblem(await get(`/series/instances/${instanceId}/1m/chart?format=tsv`, user()), 400, "format");
    expectProblem(await get("/price/pair/999999/ohlcv?format=csv"), 404, "999999");
    expectProblem(await get("/price/pair/999999/ohlcv", { accept: "text/csv" }), 404, "999999");
    expectProblem(await get("/events/all?limit=0&format=csv"), 400, "limit");
    expectProblem(await get(`/series/instances/${"0".repeat(64)}/1m/chart?format=csv`, user()), 404, "0000");
    // The user route still needs a key with CSV asked.
    const anonymous = await get(`/series/instances/${instanceId}/1m/chart?format=csv`);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers["content-type"]).toContain("application/problem+json");
  });

  it("documents both media types on the four routes", async () => {
    const doc = t.app.swagger() as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }>;
    };
    for (const path of [
      "/events/all",
      "/price/pair/{pairid}/ohlcv",
      "/series/instances/{instanceid}/{scale}/chart",
      "/token/all",
    ]) {
      expect(Object.keys(doc.paths[path]!.get.responses["200"]!.content).sort(), path).toEqual([
        "application/json",
        "text/csv",
      ]);
    }
  });
});
