/**
 * Centralized exchanges through ccxt: the only module that imports it. An exchange is a ccxt
 * instance (spot markets only, ccxt's own rate limiter on), optionally pointed at other API hosts
 * (`EXCHANGE_API_URLS`, for test doubles and proxies). Candles, tickers and fills are read through
 * ccxt's implicit endpoint methods (Gate's API v4 for `gate` and `gateeu`, MEXC's spot API v3 for
 * `mexc`) so the exchange's decimal strings reach the stores as sent: ccxt's unified `fetchOHLCV`
 * parses them into floats.
 */
import ccxt, { type Exchange } from "ccxt";
import { AppError } from "../../lib/errors.ts";

/** Exchanges whose candles and tickers the indexer reads (Gate's API v4). */
export { SUPPORTED_EXCHANGES } from "../../lib/config.ts";

import { SUPPORTED_EXCHANGES } from "../../lib/config.ts";

/** The REST dialect of a supported exchange. */
const dialectOf = (id: string): "gate" | "mexc" => (id === "mexc" ? "mexc" : "gate");

/** Quote assets that count as US dollars (the denominations of USD prices). */
export const USD_STABLECOINS = ["USDT", "USDC", "USD", "DAI", "USDD", "FDUSD"] as const;

/** Largest number of 1m candles Gate returns for one request. */
export const CANDLES_PER_PAGE = 1000;
const MINUTE = 60_000;

export interface ExchangeOptions {
  /** Base URL (scheme, host, optional path prefix) replacing the host of every `urls.api` entry. */
  apiUrl?: string;
  timeoutMs: number;
}

/** A failed exchange call: retryable, with the delay the exchange asked for (Retry-After), if any. */
export class ExchangeError extends AppError {
  constructor(
    readonly exchange: string,
    message: string,
    readonly retryAfterMs: number | null,
    cause?: unknown,
  ) {
    super("upstream_unavailable", `${exchange}: ${message}`, { status: 502, retryable: true, cause });
  }
}

/** `EXCHANGE_API_URLS` (checked by the config) as the poller uses it: base URLs without a trailing slash. */
export function apiBaseUrls(urls: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(urls).map(([id, url]) => [id, url.replace(/\/+$/, "")]));
}

/** Replaces the origin of every URL in a (nested) `urls.api` object. */
function rebase(api: unknown, base: string): unknown {
  if (typeof api === "string") return api.replace(/^https?:\/\/[^/]+/, base);
  if (typeof api !== "object" || api === null) return api;
  return Object.fromEntries(Object.entries(api).map(([k, v]) => [k, rebase(v, base)]));
}

type ExchangeClass = new (options: Record<string, unknown>) => Exchange;

export interface CexClient {
  id: string;
  label: string;
  exchange: Exchange;
}

export function createExchange(id: string, options: ExchangeOptions): CexClient {
  const Class = (ccxt as unknown as Record<string, ExchangeClass | undefined>)[id];
  if (!(SUPPORTED_EXCHANGES as readonly string[]).includes(id) || typeof Class !== "function") {
    throw new Error(`Exchange ${id} is not supported (supported: ${SUPPORTED_EXCHANGES.join(", ")})`);
  }
  const exchange = new Class({
    enableRateLimit: true,
    timeout: options.timeoutMs,
    options: { defaultType: "spot", fetchMarkets: { types: ["spot"] } },
  });
  if (options.apiUrl) {
    exchange.urls = { ...exchange.urls, api: rebase(exchange.urls.api, options.apiUrl) as never };
  }
  return { id, label: String(exchange.name ?? id), exchange };
}

/** Runs one exchange call; any failure becomes an ExchangeError carrying Retry-After. */
async function call<T>(client: CexClient, what: string, fn: () => Promise<T>): Promise<T> {
  const ex = client.exchange as Exchange & { last_response_headers?: Record<string, string> };
  ex.last_response_headers = undefined;
  try {
    return await fn();
  } catch (error) {
    const headers: Record<string, string> = ex.last_response_headers ?? {};
    const raw = headers["Retry-After"] ?? headers["retry-after"];
    const seconds = raw === undefined ? Number.NaN : Number(raw);
    const retryAfterMs = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : null;
    const name = error instanceof Error ? error.constructor.name : "Error";
    const message = error instanceof Error ? error.message : String(error);
    throw new ExchangeError(
      client.id,
      `${what} failed (${name}): ${message.slice(0, 300)}`,
      retryAfterMs,
      error,
    );
  }
}

function badResponse(client: CexClient, what: string, detail: string): ExchangeError {
  return new ExchangeError(client.id, `${what}: unexpected response (${detail})`, null);
}

export interface SpotMarket {
  /** The exchange's own symbol (`ALPH_USDT`): the pair_symbol of the source's pairs. */
  symbol: string;
  base: string;
  quote: string;
  /** When trading started (ms), when the exchange says. */
  listedAt: number | null;
}

/** Every active spot market of the exchange. */
export async function spotMarkets(client: CexClient): Promise<SpotMarket[]> {
  const markets = await call(client, "loading markets", () => client.exchange.loadMarkets(true));
  const out: SpotMarket[] = [];
  for (const m of Object.values(markets)) {
    if (m?.spot !== true || m.active === false) continue;
    const info = (m.info ?? {}) as Record<string, unknown>;
    const start = Number(info.buy_start ?? 0);
    out.push({
      symbol: String(m.id),
      base: String(m.base),
      quote: String(m.quote),
      listedAt: Number.isSafeInteger(start) && start > 0 ? start * 1000 : null,
    });
  }
  return out.sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
}

/** Markets whose base and quote the indexer knows (token symbols), or whose quote is a USD stablecoin. */
export function knownMarkets(
  markets: readonly SpotMarket[],
  knownSymbols: ReadonlySet<string>,
): SpotMarket[] {
  const usd = new Set<string>(USD_STABLECOINS);
  const known = (s: string) => knownSymbols.has(s) || usd.has(s);
  return markets.filter((m) => knownSymbols.has(m.base) && known(m.quote));
}

/** A 1m candle as the exchange sent it: decimal strings, volume in base units. */
export interface RawCandle {
  /** Start (ms). */
  t: number;
  o: string;
  h: string;
  l: string;
  c: string;
  v: string;
  closed: boolean;
}

const DECIMAL = /^\d+(\.\d+)?$/;

function implicit(client: CexClient, name: string): (params: Record<string, unknown>) => Promise<unknown> {
  const fn = (client.exchange as unknown as Record<string, unknown>)[name];
  if (typeof fn !== "function") throw new Error(`Exchange ${client.id} has no ${name}`);
  return (params) => (fn as (p: Record<string, unknown>) => Promise<unknown>).call(client.exchange, params);
}

/**
 * 1m candles of a market whose start is in [from, to] (ms, at most CANDLES_PER_PAGE minutes),
 * oldest first, as the exchange's strings.
 */
export async function fetchCandles1m(
  client: CexClient,
  symbol: string,
  from: number,
  to: number,
  now = Date.now(),
): Promise<RawCandle[]> {
  if (dialectOf(client.id) === "mexc") return mexcCandles1m(client, symbol, from, to, now);
  const what = `candles of ${symbol}`;
  const fromS = Math.ceil(from / 1000);
  const toS = Math.min(Math.floor(to / 1000), fromS + (CANDLES_PER_PAGE - 1) * 60);
  const rows = await call(client, what, () =>
    implicit(
      client,
      "publicSpotGetCandlesticks",
    )({ currency_pair: symbol, interval: "1m", from: fromS, to: toS }),
  );
  if (!Array.isArray(rows)) throw badResponse(client, what, "not a JSON array");
  const out: RawCandle[] = [];
  for (const row of rows) {
    // [t (s), quote volume, close, high, low, open, base volume, closed]
    if (!Array.isArray(row) || row.length < 7) throw badResponse(client, what, "a row is not a candle");
    const [t, , c, h, l, o, v, closed] = row.map((x) => String(x));
    const values = [o, h, l, c, v] as string[];
    if (!/^\d+$/.test(t ?? "") || !values.every((x) => DECIMAL.test(x))) {
      throw badResponse(client, what, `bad values ${JSON.stringify(row).slice(0, 120)}`);
    }
    const ms = Number(t) * 1000;
    if (ms % MINUTE !== 0) throw badResponse(client, what, `candle time ${t} is not a minute`);
    out.push({ t: ms, o: o!, h: h!, l: l!, c: c!, v: v!, closed: closed !== "false" });
  }
  return out.sort((a, b) => a.t - b.t);
}

/** The exchange's last traded price of a market (decimal string), or null when it has none. */
export async function fetchLastPrice(client: CexClient, symbol: string): Promise<string | null> {
  const what = `ticker of ${symbol}`;
  if (dialectOf(client.id) === "mexc") {
    const row = (await call(client, what, () => implicit(client, "spotPublicGetTickerPrice")({ symbol }))) as
      | { symbol?: unknown; price?: unknown }
      | undefined;
    if (typeof row !== "object" || row === null || Array.isArray(row)) {
      throw badResponse(client, what, "not a JSON object");
    }
    const price = String(row.price ?? "");
    if (price === "") return null;
    if (!DECIMAL.test(price)) throw badResponse(client, what, `price ${price.slice(0, 40)}`);
    return price;
  }
  const rows = await call(client, what, () =>
    implicit(client, "publicSpotGetTickers")({ currency_pair: symbol }),
  );
  if (!Array.isArray(rows)) throw badResponse(client, what, "not a JSON array");
  const row = rows.find((r) => (r as { currency_pair?: unknown })?.currency_pair === symbol) as
    | { last?: unknown }
    | undefined;
  if (!row) return null;
  const last = String(row.last ?? "");
  if (last === "") return null;
  if (!DECIMAL.test(last)) throw badResponse(client, what, `last ${last.slice(0, 40)}`);
  return last;
}

/** One exchange fill as the exchange sent it (Gate's spot trade). */
export interface RawTrade {
  /** The exchange's trade id (an integer as a string), increasing with time. */
  id: string;
  /** Trade time (ms). */
  ts: number;
  /** Taker side. */
  side: "buy" | "sell";
  /** Base amount and price, decimal strings. */
  amount: string;
  price: string;
}

/** Largest number of trades Gate returns for one request. */
export const TRADES_PER_PAGE = 1000;

const byTradeId = (a: RawTrade, b: RawTrade) =>
  a.id.length !== b.id.length ? a.id.length - b.id.length : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Trades of a market, oldest first: those after `afterId` (at most `limit`), or without it the newest
 * `limit` ones.
 */
export async function fetchTrades(
  client: CexClient,
  symbol: string,
  afterId: string | null,
  limit = TRADES_PER_PAGE,
): Promise<RawTrade[]> {
  const what = `trades of ${symbol}`;
  if (dialectOf(client.id) === "mexc") return mexcTrades(client, symbol, afterId, limit);
  const params: Record<string, unknown> = { currency_pair: symbol, limit };
  if (afterId !== null) Object.assign(params, { last_id: afterId, reverse: "false" });
  const rows = await call(client, what, () => implicit(client, "publicSpotGetTrades")(params));
  if (!Array.isArray(rows)) throw badResponse(client, what, "not a JSON array");
  const out: RawTrade[] = [];
  for (const row of rows) {
    const r = (row ?? {}) as Record<string, unknown>;
    const id = String(r.id ?? "");
    const ms = Math.floor(Number(r.create_time_ms ?? Number(r.create_time) * 1000));
    const [amount, price, side] = [String(r.amount ?? ""), String(r.price ?? ""), r.side];
    if (!/^\d{1,30}$/.test(id) || !Number.isSafeInteger(ms) || ms <= 0) {
      throw badResponse(client, what, `bad trade ${JSON.stringify(row).slice(0, 120)}`);
    }
    if (!DECIMAL.test(amount) || !DECIMAL.test(price) || (side !== "buy" && side !== "sell")) {
      throw badResponse(client, what, `bad trade ${JSON.stringify(row).slice(0, 120)}`);
    }
    out.push({ id, ts: ms, side, amount, price });
  }
  out.sort(byTradeId);
  return afterId === null ? out : out.filter((t) => byTradeId(t, { ...t, id: afterId }) > 0);
}

/** MEXC's 1m klines `[open time, open, high, low, close, volume, close time, quote volume]`. */
async function mexcCandles1m(
  client: CexClient,
  symbol: string,
  from: number,
  to: number,
  now: number,
): Promise<RawCandle[]> {
  const what = `candles of ${symbol}`;
  const start = Math.ceil(from / MINUTE) * MINUTE;
  const end = Math.min(to, start + (CANDLES_PER_PAGE - 1) * MINUTE);
  const rows = await call(client, what, () =>
    implicit(
      client,
      "spotPublicGetKlines",
    )({ symbol, interval: "1m", startTime: start, endTime: end + MINUTE - 1, limit: CANDLES_PER_PAGE }),
  );
  if (!Array.isArray(rows)) throw badResponse(client, what, "not a JSON array");
  const out: RawCandle[] = [];
  for (const row of rows) {
    if (!Array.isArray(row) || row.length < 6) throw badResponse(client, what, "a row is not a candle");
    const [t, o, h, l, c, v] = row.map((x) => String(x));
    const values = [o, h, l, c, v] as string[];
    if (!/^\d+$/.test(t ?? "") || !values.every((x) => DECIMAL.test(x))) {
      throw badResponse(client, what, `bad values ${JSON.stringify(row).slice(0, 120)}`);
    }
    const ms = Number(t);
    if (ms % MINUTE !== 0) throw badResponse(client, what, `candle time ${t} is not a minute`);
    if (ms < start || ms > end) continue;
    out.push({ t: ms, o: o!, h: h!, l: l!, c: c!, v: v!, closed: ms + MINUTE <= now });
  }
  return out.sort((a, b) => a.t - b.t);
}

/**
 * MEXC's recent fills (newest `limit`; its public API has no cursor and no trade ids). A fill's id is
 * `<time ms>-<n>`, n counting the fills of the same millisecond in the answer, oldest first, so a fill
 * read again gets the same id; fills after `afterId` are kept. More than `limit` fills between two
 * polls cannot be read back: poll often enough (EXCHANGE_TRADES_POLL_MS).
 */
async function mexcTrades(
  client: CexClient,
  symbol: string,
  afterId: string | null,
  limit: number,
): Promise<RawTrade[]> {
  const what = `trades of ${symbol}`;
  const rows = await call(client, what, () =>
    implicit(client, "spotPublicGetTrades")({ symbol, limit: Math.min(limit, TRADES_PER_PAGE) }),
  );
  if (!Array.isArray(rows)) throw badResponse(client, what, "not a JSON array");
  const parsed = rows.map((row) => {
    const r = (row ?? {}) as Record<string, unknown>;
    const ts = Number(r.time);
    const [amount, price] = [String(r.qty ?? ""), String(r.price ?? "")];
    if (!Number.isSafeInteger(ts) || ts <= 0 || !DECIMAL.test(amount) || !DECIMAL.test(price)) {
      throw badResponse(client, what, `bad trade ${JSON.stringify(row).slice(0, 120)}`);
    }
    if (typeof r.isBuyerMaker !== "boolean") {
      throw badResponse(client, what, `bad trade ${JSON.stringify(row).slice(0, 120)}`);
    }
    // The maker bought: the taker sold.
    return { ts, amount, price, side: r.isBuyerMaker ? ("sell" as const) : ("buy" as const) };
  });
  parsed.sort((a, b) => a.ts - b.ts);
  const out: RawTrade[] = [];
  let n = 0;
  for (let i = 0; i < parsed.length; i++) {
    const f = parsed[i]!;
    n = i > 0 && parsed[i - 1]!.ts === f.ts ? n + 1 : 0;
    out.push({ id: `${String(f.ts).padStart(13, "0")}-${String(n).padStart(4, "0")}`, ...f });
  }
  return afterId === null ? out.slice(-limit) : out.filter((t) => t.id > afterId);
}
