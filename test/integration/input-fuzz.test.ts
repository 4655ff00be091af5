// Test passes: embedded and server (hostile values reach no store unchecked: the PostgreSQL driver and server, not only PGlite).
/**
 * Walks the app's own route table with its OpenAPI document and sends hostile values to every path
 * parameter, query parameter and top-level body field: nothing may reach a store unchecked (no 5xx),
 * and a refused value is named in the Problem body.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteEntry } from "../../api/types.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

interface FieldSchema {
  type?: string;
  default?: unknown;
}
interface Operation {
  parameters?: { name: string; in: "path" | "query"; required?: boolean; schema: FieldSchema }[];
  requestBody?: {
    content: Record<string, { schema: { properties?: Record<string, FieldSchema>; required?: string[] } }>;
  };
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
}

const HEX64 = "ab".repeat(32);
const ADDRESS = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH";

/** Valid values for path parameters, so that validation reaches the parameter under test. */
const PATH_SAMPLES: Record<string, () => string> = {
  keyid: () => randomUUID(),
  banid: () => randomUUID(),
  peerid: () => randomUUID(),
  jobid: () => randomUUID(),
  webhookid: () => randomUUID(),
  tokenid: () => HEX64,
  txid: () => HEX64,
  transaction_id: () => HEX64,
  block_hash: () => HEX64,
  address: () => ADDRESS,
  dappid: () => "fuzz-dapp",
  srcid: () => "ayin",
  pairid: () => "1",
  invoiceid: () => randomUUID(),
  seriesid: () => "chain-transactions",
  listid: () => "tokens-by-volume-24h",
  instanceid: () => HEX64,
  scale: () => "1m",
  gameid: () => HEX64,
  chainid: () => "1",
  pool: () => ADDRESS,
  round: () => "1",
};

/** Valid values for required query parameters, so that validation reaches the parameter under test. */
const QUERY_SAMPLES: Record<string, string> = {
  scale: "1m",
  bucket_start_ts: "0",
  segment_id: "00000000-0000-0000-0000-000000000000",
  ticker_id: `${HEX64}_${HEX64}`,
  key: "ALPH/USD",
};

/** Streaming routes end once caught up with this query, so that each fuzz request returns. */
const STREAM_QUERY: Record<string, string> = { "/events/stream": "until_caught_up=1" };

/** Valid values for required body fields, so that validation reaches the field under test. */
const BODY_SAMPLES: Record<string, unknown> = {
  from: 1,
  to: 2,
  plan_id: "free",
  name: "Fuzz",
  rpm: 10,
  rpd: 100,
  price: "0",
  price_alph: "0",
  validity_days: 30,
  user_id: "fuzz-user",
  origin: "https://fuzz.example",
  address: ADDRESS,
  label: "fuzz",
  id: "fuzz-cat",
  category_ids: [],
  type: "dex",
  chain: "alph",
  token_id: HEX64,
  exchange_id: "fuzz-exchange",
  update_id: 1,
  telegram_user_id: 42,
  invoice_id: "00000000-0000-4000-8000-000000000000",
  // A ban of a user no key of the walk belongs to (an IP sample could ban the walk's own address).
  kind: "user",
  value: "fuzz-banned-user",
  reason: "fuzz",
  // A public address literal (no DNS lookup) no worker of this test delivers to.
  url: "https://203.0.113.7/fuzz-hook",
  // POST /sql: a query every check lets through, so each field's bad values are what gets refused.
  query: "SELECT 1",
};

/** A required body field whose sample depends on its type (`id` is a category id or a mapping row id). */
const bodySample = (name: string, schema: FieldSchema | undefined): unknown =>
  name === "id" && schema?.type === "integer" ? 1 : BODY_SAMPLES[name];

/**
 * Times in Unix ms (query parameters and body fields) legitimately exceed int32 (their documented maximum is 8.64e15, the last instant a
 * Date holds): for exactly these parameters 2147483648 is a legal value, not one to refuse. Past-the-max
 * values (HUGE) stay strict for them.
 */
const MS_TIME_PARAMS = new Set([
  "/price/pair/:pairid/spot timestamp",
  "/price/pair/:pairid/ohlcv start",
  "/price/pair/:pairid/ohlcv end",
  "/addresses/exchange-wallets/add applies_from",
  // Telegram ids: user ids have up to 52 significant bits, update ids are bigint columns.
  "/system/telegram/admins/add telegram_user_id",
  "/system/telegram/admins/remove telegram_user_id",
  "/telegram/webhook update_id",
  "/series/instances/:instanceid/:scale/chart until_ts",
  "/series/instances/:instanceid/:scale/chart from_ts",
  "/series/instances/:instanceid/:scale/chart to_ts",
  "/series/instances/:instanceid/bucket bucket_start_ts",
  "/series/instances/:instanceid/bucket-data bucket_start_ts",
  "/dapps/furnace/burns from_ts",
  "/dapps/furnace/burns to_ts",
  "/dapps/elexium/pools/:pool/daily from_ts",
  "/dapps/elexium/pools/:pool/daily to_ts",
  "/dapps/elexium/historical_trades start_time",
  "/dapps/elexium/historical_trades end_time",
  "/dapps/dia-oracle/history from_ts",
  "/dapps/dia-oracle/history to_ts",
  "/system/jobs from",
  "/system/jobs to",
  "/system/jobs since",
  "/system/jobs until",
  // Not a time: delivery ids are a bigint column.
  "/webhooks/:webhookid/deliveries before",
]);

const NUL = "a\u0000b";
const LONG = "a".repeat(10_000);
/** Numbers past what any field holds; as raw text, so that JSON bodies carry them unrounded. */
const HUGE = ["18446744073709551616", "99999999999999999999", "9007199254740993", "1e309", "-1e309"];
const INT32_PAST = "2147483648";

type Reply = Awaited<ReturnType<TestApp["app"]["inject"]>>;

interface Case {
  route: RouteEntry;
  field: string;
  where: "path" | "query" | "body";
  label: string;
  /** Strict: must be a 4xx naming the field. Lenient: a legal value for a string (a numeric search term). */
  strict: boolean;
  send: () => Promise<Reply>;
  /** For a path parameter past the router's length limit: the router answers 414 before any schema. */
  expect414?: boolean;
}

describe("hostile input on every route", () => {
  let t: TestApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        PUBLIC_RPM: "1000000",
        // WireGuard peer creation configured, so that accepted values reach the store (not a 503).
        WG_SERVER_PUBLIC_KEY: "HtsDlYG92+RYdBNe4WUWuP5hOUN2q/9e5rGd4l+6FDM=",
        WG_ENDPOINT: "vpn.example.com:51820",
      },
    });
    doc = t.app.swagger() as unknown as Doc;
  });
  afterAll(async () => t?.close());

  function buildCases(): { cases: Case[]; problems: string[] } {
    const cases: Case[] = [];
    const problems: string[] = [];
    const headers = t.auth(t.adminKey);
    for (const route of t.app.routeTable) {
      // The admin portal's routes are not in the OpenAPI document (browser pages and their cookie
      // endpoints); their inputs are walked in portal.test.ts.
      if (route.url === "/portal" || route.url.startsWith("/portal/")) continue;
      const path = route.url.replace(/:([A-Za-z_]+)/g, "{$1}");
      const op = doc.paths[path]?.[route.method.toLowerCase()];
      if (!op) {
        problems.push(`${route.method} ${route.url}: not in the OpenAPI document`);
        continue;
      }
      const pathParams = (op.parameters ?? []).filter((p) => p.in === "path");
      const queryParams = (op.parameters ?? []).filter((p) => p.in === "query");
      const bodySchema = op.requestBody?.content["application/json"]?.schema;
      const bodyProps = bodySchema?.properties ?? {};
      for (const p of pathParams)
        if (!PATH_SAMPLES[p.name]) problems.push(`${route.url}: no sample for path parameter ${p.name}`);
      const requiredQuery = queryParams.filter((p) => p.required && p.schema.default === undefined);
      for (const p of requiredQuery)
        if (!(p.name in QUERY_SAMPLES)) problems.push(`${route.url}: no sample for required query ${p.name}`);
      /** The required query parameters but `except`, with their samples. */
      const baseQuery = (except: string) =>
        requiredQuery
          .filter((p) => p.name !== except)
          .map((p) => `&${p.name}=${encodeURIComponent(QUERY_SAMPLES[p.name] ?? "")}`)
          .join("");
      const baseBody: Record<string, unknown> = {};
      for (const name of bodySchema?.required ?? []) {
        if (bodyProps[name]?.default !== undefined) continue;
        if (name in BODY_SAMPLES) baseBody[name] = bodySample(name, bodyProps[name]);
        else problems.push(`${route.method} ${route.url}: no sample for required body field ${name}`);
      }
      const url = (override?: { name: string; raw: string }, query?: string) => {
        const filled = route.url.replace(/:([A-Za-z_]+)/g, (_m, name: string) =>
          override?.name === name ? override.raw : (PATH_SAMPLES[name]?.() ?? "x"),
        );
        // A stream answers until the client leaves: asked to end once caught up, so each request returns.
        const q = [query, STREAM_QUERY[route.url]].filter(Boolean).join("&");
        return q ? `${filled}?${q}` : filled;
      };
      const hasBody = bodySchema !== undefined;
      const inject = (u: string, payload?: string): Promise<Reply> =>
        t.app.inject({
          method: route.method as "GET",
          url: u,
          headers: payload === undefined ? headers : { ...headers, "content-type": "application/json" },
          ...(payload === undefined ? {} : { payload }),
        });
      const plainBody = hasBody ? JSON.stringify(baseBody) : undefined;

      for (const p of [...pathParams, ...queryParams]) {
        const numeric = p.schema.type === "integer" || p.schema.type === "number";
        const values: [string, string, boolean][] = [
          ["NUL", NUL, true],
          ["10,000 characters", LONG, true],
          ...HUGE.map((v): [string, string, boolean] => [v, v, numeric || p.schema.type === "boolean"]),
          ...(p.schema.type === "integer"
            ? [
                [INT32_PAST, INT32_PAST, !MS_TIME_PARAMS.has(`${route.url} ${p.name}`)] as [
                  string,
                  string,
                  boolean,
                ],
              ]
            : []),
        ];
        for (const [label, value, strict] of values) {
          const raw = encodeURIComponent(value);
          const where = p.in;
          cases.push({
            route,
            field: p.name,
            where,
            label,
            strict,
            expect414: where === "path" && value.length > 256,
            send: () =>
              inject(
                where === "path"
                  ? url({ name: p.name, raw }, baseQuery("").slice(1))
                  : url(undefined, `${p.name}=${raw}${baseQuery(p.name)}`),
                plainBody,
              ),
          });
        }
      }
      for (const [name, schema] of Object.entries(bodyProps)) {
        const stringLike = schema.type === "string" || schema.type === "array";
        const values: [string, string, boolean][] = [
          ["NUL", JSON.stringify(NUL), true],
          ["10,000 characters", JSON.stringify(LONG), true],
          ...HUGE.map((v): [string, string, boolean] => [v, v, !stringLike]),
          ...(schema.type === "integer"
            ? [
                [INT32_PAST, INT32_PAST, !MS_TIME_PARAMS.has(`${route.url} ${name}`)] as [
                  string,
                  string,
                  boolean,
                ],
              ]
            : []),
        ];
        for (const [label, json, strict] of values) {
          const rest = JSON.stringify({ ...baseBody, [name]: undefined }).slice(1, -1);
          const payload = `{${rest}${rest ? "," : ""}${JSON.stringify(name)}:${json}}`;
          cases.push({
            route,
            field: name,
            where: "body",
            label,
            strict,
            send: () => inject(url(), payload),
          });
        }
      }
    }
    return { cases, problems };
  }

  it("answers 4xx with a Problem naming the field, never 5xx, and stays healthy", async () => {
    const { cases, problems } = buildCases();
    expect(problems).toEqual([]);
    // Every route with parameters or a body contributes; a walk that found nothing would pass vacuously.
    expect(cases.length).toBeGreaterThan(500);
    expect(new Set(cases.map((c) => `${c.route.method} ${c.route.url}`)).size).toBeGreaterThan(25);
    expect(cases.filter((c) => c.where === "body").length).toBeGreaterThan(100);

    const failures: string[] = [];
    let strictChecked = 0;
    for (const c of cases) {
      const r = await c.send();
      const where = `${c.route.method} ${c.route.url} ${c.where} ${c.field}=${c.label}`;
      const isProblem = String(r.headers["content-type"]).startsWith("application/problem+json");
      // A legal value (digits are base58) reaches the explorer, which tests leave unreachable: 502.
      const upstream = r.statusCode === 502 && JSON.parse(r.body).code === "upstream_unavailable";
      if (r.statusCode >= 500 && !(upstream && !c.strict)) {
        failures.push(`${where}: ${r.statusCode} ${r.body.slice(0, 200)}`);
        continue;
      }
      if (r.statusCode >= 400 && !isProblem)
        failures.push(`${where}: ${r.statusCode} without a Problem body`);
      if (!c.strict) continue;
      strictChecked++;
      if (c.expect414) {
        if (r.statusCode !== 414) failures.push(`${where}: expected 414, got ${r.statusCode}`);
        continue;
      }
      if (r.statusCode < 400) {
        failures.push(`${where}: accepted (${r.statusCode})`);
        continue;
      }
      const body = JSON.parse(r.body) as { detail?: string; errors?: { path: string }[] };
      const named =
        String(body.detail).includes(c.field) || (body.errors ?? []).some((e) => e.path.includes(c.field));
      if (!named) failures.push(`${where}: ${r.statusCode} does not name the field: ${body.detail}`);
    }
    expect(failures).toEqual([]);
    expect(strictChecked).toBeGreaterThan(300);

    expect((await t.app.inject({ url: "/healthz" })).statusCode).toBe(200);
    const tokens = await t.app.inject({ url: "/token/all?pageSize=5" });
    expect(tokens.statusCode).toBe(200);
    expect(tokens.json().tokens.length).toBe(5);
  });
});
