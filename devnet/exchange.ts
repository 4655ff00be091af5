/**
 * Test double of a centralized exchange: an HTTP server answering the public spot endpoints of
 * Gate's REST API v4 (https://www.gate.com/docs/developers/apiv4/en) that ccxt's `gate` exchange
 * calls to list markets and read candles and tickers. Never imported by pipeline/ or api/.
 *
 * Data is deterministic: every 1m candle of a pair, and every fill (`/spot/trades`), is a pure function
 * of (seed, pair, minute), so it answers the same whenever it is asked for; the still-open candle of the exchange's current
 * minute grows with the exchange's clock (`now`, injectable), and the ticker equals it. Values are
 * decimal strings as Gate sends them. The server can be told to fail (stall, 429 with Retry-After,
 * 5xx, garbage JSON) to test how clients cope.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ExchangePairSpec {
  /** Gate's currency pair id, `BASE_QUOTE`. */
  id: string;
  base: string;
  quote: string;
  /** Listing time (ms): the first candle's minute. */
  listedAt: number;
  /** Price of the first candle. */
  startPrice: number;
  /** Price change per minute (relative, e.g. 0.0004 = +0.04%). */
  trend: number;
  /** Decimals of prices (Gate's `precision`) and of base amounts (`amount_precision`). */
  precision: number;
  amountPrecision: number;
  /** Most fills in one minute (each minute has 1..this many); default 6, at most 999. */
  tradesPerMinute?: number;
}

/** One fill as Gate's `GET /spot/trades` lists it. */
export interface GateTrade {
  id: string;
  create_time: string;
  create_time_ms: string;
  currency_pair: string;
  side: "buy" | "sell";
  amount: string;
  price: string;
  sequence_id: string;
}

export type ExchangeFailure =
  | { kind: "none" }
  | { kind: "stall" }
  | { kind: "429"; retryAfterSeconds: number }
  | { kind: "5xx"; status: number }
  | { kind: "garbage" };

export interface ExchangeDoubleOptions {
  /**
   * Which exchange's REST API it answers: Gate's API v4 (`gate`, default) or MEXC's spot API v3
   * (`mexc`: symbols without the underscore, `ALPHUSDT`). The data is the same either way.
   */
  dialect?: "gate" | "mexc";
  seed?: number;
  /** The exchange's clock (ms). Default: the wall clock. */
  now?: () => number;
  pairs?: ExchangePairSpec[];
  host?: string;
  port?: number;
}

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;

/** The pairs of the double: ALPH on Gate (USDT, USDC), AYIN, and a pair of an asset Alephium does not know. */
export function defaultExchangePairs(now: number): ExchangePairSpec[] {
  const at = (daysAgo: number) => Math.floor((now - daysAgo * DAY) / MINUTE) * MINUTE;
  return [
    {
      id: "ALPH_USDT",
      base: "ALPH",
      quote: "USDT",
      listedAt: at(30),
      startPrice: 0.31,
      trend: 0.000005,
      precision: 5,
      amountPrecision: 2,
      tradesPerMinute: 30,
    },
    {
      id: "ALPH_USDC",
      base: "ALPH",
      quote: "USDC",
      listedAt: at(20),
      startPrice: 0.305,
      trend: 0.000005,
      precision: 5,
      amountPrecision: 2,
    },
    {
      id: "AYIN_USDT",
      base: "AYIN",
      quote: "USDT",
      listedAt: at(10),
      startPrice: 1.7,
      trend: -0.000003,
      precision: 4,
      amountPrecision: 3,
    },
    {
      id: "BTC_USDT",
      base: "BTC",
      quote: "USDT",
      listedAt: at(60),
      startPrice: 64000,
      trend: 0.000001,
      precision: 1,
      amountPrecision: 6,
    },
  ];
}

/** One Gate candlestick row: `[t (s), quote volume, close, high, low, open, base volume, closed]`. */
export type GateCandle = [string, string, string, string, string, string, string, string];

/** 32-bit hash of the seed, the pair and an integer: the one source of every value's noise. */
function noise(seed: number, pair: string, i: number, salt: number): number {
  let h = (seed ^ Math.imul(i, 0x9e3779b1) ^ Math.imul(salt + 1, 0x85ebca6b)) >>> 0;
  for (let k = 0; k < pair.length; k++) h = Math.imul(h ^ pair.charCodeAt(k), 0x01000193) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d) >>> 0;
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b) >>> 0;
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

export class ExchangeDouble {
  readonly seed: number;
  readonly dialect: "gate" | "mexc";
  readonly pairs: ExchangePairSpec[];
  failure: ExchangeFailure = { kind: "none" };
  /** Requests served, by path (failures included). */
  readonly requests = new Map<string, number>();
  private clock: () => number;
  private server: Server | null = null;
  private stalled = new Set<ServerResponse>();
  url = "";

  constructor(options: ExchangeDoubleOptions = {}) {
    this.seed = options.seed ?? 1;
    this.dialect = options.dialect ?? "gate";
    this.clock = options.now ?? Date.now;
    this.pairs = options.pairs ?? defaultExchangePairs(this.clock());
  }

  now(): number {
    return this.clock();
  }

  setNow(now: () => number): void {
    this.clock = now;
  }

  pair(id: string): ExchangePairSpec | undefined {
    return this.pairs.find((p) => p.id === id);
  }

  /** Close of minute `i` (0 = listing minute) before rounding. */
  private closeAt(p: ExchangePairSpec, i: number): number {
    if (i < 0) return p.startPrice;
    const wobble = (noise(this.seed, p.id, i, 0) - 0.5) * 0.004;
    return p.startPrice * (1 + p.trend) ** i * (1 + wobble);
  }

  /**
   * The 1m candle starting at `t` (a minute of the pair's listed life up to the exchange's clock), or
   * null. The candle of the current minute is open: it has moved `elapsed / 60 s` of the way.
   */
  candle(p: ExchangePairSpec, t: number, now = this.now()): GateCandle | null {
    const current = Math.floor(now / MINUTE) * MINUTE;
    if (t < p.listedAt || t > current || t % MINUTE !== 0) return null;
    const i = (t - p.listedAt) / MINUTE;
    const open = this.closeAt(p, i - 1);
    const full = this.closeAt(p, i);
    const closed = t < current;
    const part = closed ? 1 : Math.floor((now - t) / 1000) / 60;
    const close = open + (full - open) * part;
    const high = Math.max(open, close) * (1 + noise(this.seed, p.id, i, 1) * 0.002 * part);
    const low = Math.min(open, close) * (1 - noise(this.seed, p.id, i, 2) * 0.002 * part);
    const fmt = (x: number) => x.toFixed(p.precision);
    const [o, c, h, l] = [fmt(open), fmt(close), fmt(high), fmt(low)];
    // High and low as printed must bracket open and close as printed.
    const hi = [o, c, h].reduce((a, b) => (Number(b) > Number(a) ? b : a));
    const lo = [o, c, l].reduce((a, b) => (Number(b) < Number(a) ? b : a));
    const baseVolume = (1000 + noise(this.seed, p.id, i, 3) * 50_000) * part;
    const base = baseVolume.toFixed(p.amountPrecision);
    const quote = (Number(base) * Number(c)).toFixed(p.precision + p.amountPrecision);
    return [String(t / 1000), quote, c, hi, lo, o, base, closed ? "true" : "false"];
  }

  /** 1m candles of a pair with start in [from, to] (ms), oldest first. */
  candles(p: ExchangePairSpec, from: number, to: number): GateCandle[] {
    const out: GateCandle[] = [];
    const now = this.now();
    const first = Math.max(p.listedAt, Math.ceil(from / MINUTE) * MINUTE);
    for (let t = first; t <= to; t += MINUTE) {
      const c = this.candle(p, t, now);
      if (!c) break;
      out.push(c);
    }
    return out;
  }

  /** The fills of minute `i` of a pair's life (0 = listing minute) that happened by `now`. */
  tradesOfMinute(p: ExchangePairSpec, i: number, now = this.now()): GateTrade[] {
    const t = p.listedAt + i * MINUTE;
    if (i < 0 || t > now) return [];
    const most = Math.min(999, Math.max(1, p.tradesPerMinute ?? 6));
    const count = 1 + Math.floor(noise(this.seed, p.id, i, 10) * most);
    const close = this.closeAt(p, i);
    const out: GateTrade[] = [];
    for (let j = 0; j < count; j++) {
      const ms = t + Math.floor(((j + noise(this.seed, p.id, i, 11 + j)) / count) * MINUTE);
      if (ms > now) break;
      const id = String((i + 1) * 1000 + j);
      const wobble = (noise(this.seed, p.id, i, 2000 + j) - 0.5) * 0.002;
      out.push({
        id,
        create_time: String(Math.floor(ms / 1000)),
        create_time_ms: `${ms}.000`,
        currency_pair: p.id,
        side: noise(this.seed, p.id, i, 4000 + j) < 0.5 ? "buy" : "sell",
        amount: (1 + noise(this.seed, p.id, i, 6000 + j) * 500).toFixed(p.amountPrecision),
        price: (close * (1 + wobble)).toFixed(p.precision),
        sequence_id: id,
      });
    }
    return out;
  }

  /**
   * Gate's trade list: with `lastId`, fills with a larger id, oldest first; without, the newest
   * `limit` fills, newest first (as Gate lists them).
   */
  trades(p: ExchangePairSpec, lastId: number | null, limit: number): GateTrade[] {
    const now = this.now();
    const current = Math.floor((now - p.listedAt) / MINUTE);
    const out: GateTrade[] = [];
    if (lastId === null) {
      for (let i = current; i >= 0 && out.length < limit; i--) {
        out.push(...this.tradesOfMinute(p, i, now).reverse());
      }
      return out.slice(0, limit);
    }
    for (let i = Math.max(0, Math.floor(lastId / 1000) - 1); i <= current && out.length < limit; i++) {
      for (const f of this.tradesOfMinute(p, i, now)) if (Number(f.id) > lastId) out.push(f);
    }
    return out.slice(0, limit);
  }

  /** Gate's ticker of a pair: last = the close of the current (open) candle. */
  ticker(p: ExchangePairSpec): Record<string, string> {
    const now = this.now();
    const current = Math.floor(now / MINUTE) * MINUTE;
    const day = this.candles(p, current - DAY + MINUTE, current);
    const last = day[day.length - 1];
    const first = day[0];
    if (!last || !first) {
      return { currency_pair: p.id, last: "", lowest_ask: "", highest_bid: "", change_percentage: "" };
    }
    const close = Number(last[2]);
    const spread = 10 ** -p.precision;
    let high = 0;
    let low = Number.POSITIVE_INFINITY;
    let base = 0;
    let quote = 0;
    for (const c of day) {
      high = Math.max(high, Number(c[3]));
      low = Math.min(low, Number(c[4]));
      base += Number(c[6]);
      quote += Number(c[1]);
    }
    const open = Number(first[5]);
    return {
      currency_pair: p.id,
      last: last[2],
      lowest_ask: (close + spread).toFixed(p.precision),
      lowest_size: "120.5",
      highest_bid: (close - spread).toFixed(p.precision),
      highest_size: "88.1",
      change_percentage: (((close - open) / open) * 100).toFixed(2),
      change_utc0: "0",
      change_utc8: "0",
      base_volume: base.toFixed(p.amountPrecision),
      quote_volume: quote.toFixed(2),
      high_24h: high.toFixed(p.precision),
      low_24h: low.toFixed(p.precision),
    };
  }

  async start(options: { host?: string; port?: number } = {}): Promise<string> {
    const server = createServer((req, res) => this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) =>
      server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
    );
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this.url;
  }

  /** Ends stalled requests and stops the server. */
  async close(): Promise<void> {
    this.releaseStalled();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = null;
  }

  /** Closes the connections of requests held by a stall. */
  releaseStalled(): void {
    for (const res of this.stalled) res.destroy();
    this.stalled.clear();
  }

  private handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://exchange.invalid");
    this.requests.set(url.pathname, (this.requests.get(url.pathname) ?? 0) + 1);
    const failure = this.failure;
    switch (failure.kind) {
      case "stall":
        this.stalled.add(res);
        res.on("close", () => this.stalled.delete(res));
        return;
      case "429":
        return send(
          res,
          429,
          { label: "TOO_MANY_REQUESTS", message: "Request Rate limit Exceeded" },
          {
            "retry-after": String(failure.retryAfterSeconds),
          },
        );
      case "5xx":
        return send(res, failure.status, { label: "SERVER_ERROR", message: "Internal server error" });
      case "garbage":
        res.writeHead(200, { "content-type": "application/json" });
        res.end('[["1700000000", "12.5", "0.3", {"oops');
        return;
      case "none":
        break;
    }
    if (req.method !== "GET") return send(res, 405, { label: "METHOD_NOT_ALLOWED", message: "GET only" });
    const q = url.searchParams;
    if (this.dialect === "mexc") return this.handleMexc(url.pathname, q, res);
    switch (url.pathname) {
      case "/api/v4/spot/currencies":
        return send(res, 200, this.currencies());
      case "/api/v4/margin/currency_pairs":
        return send(res, 200, []);
      case "/api/v4/spot/currency_pairs":
        return send(
          res,
          200,
          this.pairs.map((p) => this.currencyPair(p)),
        );
      case "/api/v4/spot/candlesticks":
        return this.candlesticks(q, res);
      case "/api/v4/spot/tickers": {
        const id = q.get("currency_pair");
        if (id !== null) {
          const p = this.pair(id);
          if (!p) return invalid(res, "INVALID_CURRENCY_PAIR", `Invalid currency pair ${id}`);
          return send(res, 200, [this.ticker(p)]);
        }
        return send(
          res,
          200,
          this.pairs.map((p) => this.ticker(p)),
        );
      }
      case "/api/v4/spot/trades": {
        const id = q.get("currency_pair");
        if (id === null || !this.pair(id)) {
          return invalid(res, "INVALID_CURRENCY_PAIR", `Invalid currency pair ${id ?? ""}`);
        }
        const limit = q.get("limit") ?? "100";
        const lastId = q.get("last_id");
        if (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000) {
          return invalid(res, "INVALID_PARAM_VALUE", "limit must be from 1 to 1000");
        }
        if (lastId !== null && !/^\d{1,15}$/.test(lastId)) {
          return invalid(res, "INVALID_PARAM_VALUE", `Invalid last_id ${lastId}`);
        }
        if (lastId !== null && q.get("reverse") !== "false") {
          // Gate's reverse=true walks back from last_id; the indexer reads forward only.
          return invalid(res, "INVALID_PARAM_VALUE", "this double serves reverse=false only");
        }
        return send(
          res,
          200,
          this.trades(this.pair(id)!, lastId === null ? null : Number(lastId), Number(limit)),
        );
      }
      default:
        return send(res, 404, { label: "NOT_FOUND", message: `No route ${url.pathname}` });
    }
  }

  /** MEXC's symbol of a pair (`ALPH_USDT` → `ALPHUSDT`). */
  mexcSymbol(p: ExchangePairSpec): string {
    return `${p.base}${p.quote}`;
  }

  /**
   * MEXC's spot API v3 (https://mexcdevelop.github.io/apidocs/spot_v3_en/): exchangeInfo, klines,
   * ticker/price, trades (no ids, `isBuyerMaker`), and the futures contract list ccxt's loadMarkets
   * also reads (empty).
   */
  private handleMexc(path: string, q: URLSearchParams, res: ServerResponse) {
    const bad = (msg: string) => send(res, 400, { code: -1121, msg });
    const pairOf = () => this.pairs.find((p) => this.mexcSymbol(p) === q.get("symbol"));
    switch (path) {
      case "/api/v1/contract/detail":
        return send(res, 200, { success: true, code: 0, data: [] });
      case "/api/v3/exchangeInfo":
        return send(res, 200, {
          timezone: "CST",
          serverTime: this.now(),
          symbols: this.pairs.map((p) => ({
            symbol: this.mexcSymbol(p),
            status: "1",
            baseAsset: p.base,
            baseAssetPrecision: p.amountPrecision,
            quoteAsset: p.quote,
            quotePrecision: p.precision,
            quoteAssetPrecision: p.precision,
            baseCommissionPrecision: p.amountPrecision,
            quoteCommissionPrecision: p.precision,
            orderTypes: ["LIMIT", "MARKET", "LIMIT_MAKER"],
            isSpotTradingAllowed: true,
            isMarginTradingAllowed: false,
            quoteAmountPrecision: "1",
            baseSizePrecision: "0",
            permissions: ["SPOT"],
            filters: [],
            maxQuoteAmount: "2000000",
            makerCommission: "0",
            takerCommission: "0.0005",
            quoteAmountPrecisionMarket: "1",
            maxQuoteAmountMarket: "100000",
            fullName: p.base,
            tradeSideType: 1,
          })),
        });
      case "/api/v3/klines": {
        const p = pairOf();
        if (!p) return bad("Invalid symbol.");
        if (q.get("interval") !== "1m") return bad("this double serves interval 1m only");
        const int = (name: string) => {
          const raw = q.get(name);
          return raw === null ? undefined : /^\d{1,15}$/.test(raw) ? Number(raw) : Number.NaN;
        };
        const [start, end, limit] = [int("startTime"), int("endTime"), int("limit") ?? 500];
        if ([start, end, limit].some((x) => Number.isNaN(x)) || limit < 1 || limit > 1000) {
          return bad("Illegal characters found in parameter.");
        }
        const to = end ?? this.now();
        const from = start ?? Math.floor(to / MINUTE) * MINUTE - (limit - 1) * MINUTE;
        // [open time, open, high, low, close, volume, close time, quote volume]
        const rows = this.candles(p, from, to)
          .slice(0, limit)
          .map((c) => [
            Number(c[0]) * 1000,
            c[5],
            c[3],
            c[4],
            c[2],
            c[6],
            Number(c[0]) * 1000 + MINUTE - 1,
            c[1],
          ]);
        return send(res, 200, rows);
      }
      case "/api/v3/ticker/price": {
        const p = pairOf();
        if (!p) return bad("Invalid symbol.");
        return send(res, 200, { symbol: this.mexcSymbol(p), price: this.ticker(p).last });
      }
      case "/api/v3/trades": {
        const p = pairOf();
        if (!p) return bad("Invalid symbol.");
        const limit = Number(q.get("limit") ?? 500);
        if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) return bad("limit must be 1 to 1000");
        // The newest `limit` fills, oldest first, without ids.
        const fills = this.trades(p, null, limit).reverse();
        return send(
          res,
          200,
          fills.map((f) => ({
            id: null,
            price: f.price,
            qty: f.amount,
            quoteQty: (Number(f.amount) * Number(f.price)).toFixed(p.precision + p.amountPrecision),
            time: Number(f.create_time_ms.split(".")[0]),
            isBuyerMaker: f.side === "sell",
            isBestMatch: true,
            tradeType: f.side === "sell" ? "ASK" : "BID",
          })),
        );
      }
      default:
        return send(res, 404, { code: 404, msg: `No route ${path}` });
    }
  }

  private candlesticks(q: URLSearchParams, res: ServerResponse) {
    const id = q.get("currency_pair");
    const p = id === null ? undefined : this.pair(id);
    if (!p) return invalid(res, "INVALID_CURRENCY_PAIR", `Invalid currency pair ${id ?? ""}`);
    const interval = q.get("interval") ?? "30m";
    if (interval !== "1m") {
      // The double keeps 1m candles only; Gate's other intervals are valid but not simulated.
      return invalid(
        res,
        "INVALID_PARAM_VALUE",
        `interval ${interval} is not served by this double (1m only)`,
      );
    }
    const int = (name: string): number | null | undefined => {
      const raw = q.get(name);
      if (raw === null) return undefined;
      return /^\d{1,12}$/.test(raw) ? Number(raw) : null;
    };
    const [from, to, limit] = [int("from"), int("to"), int("limit")];
    if (from === null) return invalid(res, "INVALID_PARAM_VALUE", "Invalid from");
    if (to === null) return invalid(res, "INVALID_PARAM_VALUE", "Invalid to");
    if (limit === null || (limit !== undefined && (limit < 1 || limit > 1000))) {
      return invalid(res, "INVALID_PARAM_VALUE", "limit must be from 1 to 1000");
    }
    if (limit !== undefined && (from !== undefined || to !== undefined)) {
      return invalid(res, "INVALID_PARAM_VALUE", "limit conflicts with from and to");
    }
    const nowS = Math.floor(this.now() / 1000);
    const toS = to ?? nowS;
    const fromS = from ?? Math.floor(toS / 60) * 60 - ((limit ?? 100) - 1) * 60;
    if (fromS > toS) return invalid(res, "INVALID_PARAM_VALUE", "from must not be after to");
    if ((toS - fromS) / 60 + 1 > 1000) {
      return invalid(
        res,
        "INVALID_PARAM_VALUE",
        "Candlestick too long ago. Maximum 1000 points ago are allowed",
      );
    }
    return send(res, 200, this.candles(p, fromS * 1000, toS * 1000));
  }

  private currencies(): object[] {
    const seen = new Set<string>();
    for (const p of this.pairs) for (const c of [p.base, p.quote]) seen.add(c);
    return [...seen].sort().map((currency) => ({
      currency,
      name: currency,
      delisted: false,
      withdraw_disabled: false,
      withdraw_delayed: false,
      deposit_disabled: false,
      trade_disabled: false,
      fixed_rate: "",
      chain: currency === "ALPH" || currency === "AYIN" ? "ALPH" : "ETH",
      chains: [
        {
          name: currency === "ALPH" || currency === "AYIN" ? "ALPH" : "ETH",
          addr: "",
          withdraw_disabled: false,
          withdraw_delayed: false,
          deposit_disabled: false,
        },
      ],
    }));
  }

  private currencyPair(p: ExchangePairSpec): object {
    return {
      id: p.id,
      base: p.base,
      base_name: p.base,
      quote: p.quote,
      quote_name: p.quote,
      fee: "0.2",
      min_base_amount: "1",
      min_quote_amount: "3",
      max_base_amount: "",
      max_quote_amount: "5000000",
      amount_precision: p.amountPrecision,
      precision: p.precision,
      trade_status: "tradable",
      sell_start: Math.floor(p.listedAt / 1000),
      buy_start: Math.floor(p.listedAt / 1000),
      delisting_time: 0,
      type: "normal",
      trade_url: `https://www.gate.io/trade/${p.id}`,
      st_tag: false,
    };
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

/** Gate's error shape: HTTP 400 with `{ label, message }`. */
function invalid(res: ServerResponse, label: string, message: string): void {
  send(res, 400, { label, message });
}

/** Starts a double on an ephemeral port (or `port`). */
export async function startExchangeDouble(options: ExchangeDoubleOptions = {}): Promise<ExchangeDouble> {
  const double = new ExchangeDouble(options);
  await double.start({ host: options.host, port: options.port });
  return double;
}
