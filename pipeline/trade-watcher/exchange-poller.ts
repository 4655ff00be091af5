/**
 * The exchange poller: for every exchange in EXCHANGE_SOURCES, keeps its source row and available
 * pairs in step with its markets, and for every watched (configured, enabled) pair backfills 1m
 * candles from the pair's listing (or the configured horizon), then polls new 1m candles and the
 * ticker every EXCHANGE_POLL_MS. Each exchange runs on its own: one that fails (rate limit, 5xx,
 * garbage, timeout) backs off (at least its Retry-After) and is marked degraded in price_sources and
 * the `price_source_up` metric, while the others go on.
 */
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics.ts";
import { mulDecimal } from "../../lib/prices/decimal.ts";
import { marketOf } from "../../lib/prices/reader.ts";
import { sleep } from "../../lib/retry.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import {
  ensureCexSource,
  knownAssetSymbols,
  lastCandleStart,
  lastRecordedTradeId,
  markSourceDegraded,
  markSourceOk,
  rollUpCandles,
  syncCexSource,
  type WatchedCexPair,
  watchedCexPairs,
  writeCandles1m,
  writeCexSpot,
} from "./cex.ts";
import {
  CANDLES_PER_PAGE,
  type CexClient,
  createExchange,
  ExchangeError,
  fetchCandles1m,
  fetchLastPrice,
  fetchTrades,
  knownMarkets,
  type RawTrade,
  spotMarkets,
  TRADES_PER_PAGE,
} from "./exchange.ts";
import type { MarketTrade, TradeSink } from "./trade.ts";

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;
/** How often an exchange's markets are read again (new listings, delistings). */
const MARKETS_REFRESH_MS = 3_600_000;
/** Longest wait between attempts of a failing exchange (unless its Retry-After asks for more). */
const MAX_BACKOFF_MS = 300_000;
/** Fills read when a pair's trades are first watched (the exchange's newest ones). */
const FIRST_TRADES = 100;

export interface ExchangePollerOptions {
  /** ccxt ids (EXCHANGE_SOURCES). */
  sources: string[];
  /** Base URL per exchange id (EXCHANGE_API_URLS). */
  apiUrls: Record<string, string>;
  pollMs: number;
  /** How often the fills of pairs with enable_trades are read (default: pollMs). */
  tradesPollMs?: number;
  timeoutMs: number;
  /** 0: backfill from the pair's listing; else at most this many days back. */
  backfillDays: number;
  /** The poller's clock (ms); default the wall clock. */
  now?: () => number;
}

export interface ExchangePollerDeps {
  pg: Pg;
  ch: Ch;
  log: Logger;
  metrics: Metrics;
  /** Where the fills of pairs with enable_trades go (the trade watcher); null: fills are not read. */
  sink?: TradeSink | null;
}

export type SourcePoll = "ok" | "degraded" | "waiting";

export interface ExchangePoller {
  /** One cycle of every exchange not backing off, concurrently. */
  pollOnce(): Promise<Record<string, SourcePoll>>;
  /** Runs each exchange's loop until stop(). */
  start(): void;
  stop(): Promise<void>;
}

interface SourceState {
  client: CexClient;
  /** When the markets were last read (0: never). */
  marketsAt: number;
  /** Listing time per pair symbol, from the markets. */
  listed: Map<string, number | null>;
  failures: number;
  /**
   * Failed cycles since the poller started (never reset). A cycle that sees it change while it runs
   * ended after a newer failure, so its success does not make the source healthy again.
   */
  failedCycles: number;
  /** Newest recorded fill id per pair symbol. */
  cursors: Map<string, string>;
  /** Whether the source has a pair with enable_trades (its loop then wakes every tradesPollMs). */
  trades: boolean;
  /** Earliest time of the next attempt (backoff). */
  nextAt: number;
}

export function createExchangePoller(
  deps: ExchangePollerDeps,
  options: ExchangePollerOptions,
): ExchangePoller {
  const now = options.now ?? Date.now;
  const log = deps.log.child({ component: "exchange-poller" });
  const states = options.sources.map(
    (id): SourceState => ({
      client: createExchange(id, { apiUrl: options.apiUrls[id], timeoutMs: options.timeoutMs }),
      marketsAt: 0,
      listed: new Map(),
      failures: 0,
      failedCycles: 0,
      cursors: new Map(),
      trades: false,
      nextAt: 0,
    }),
  );

  const refreshMarkets = async (s: SourceState) => {
    const all = await spotMarkets(s.client);
    const markets = knownMarkets(all, await knownAssetSymbols(deps.pg));
    await syncCexSource(deps.pg, { id: s.client.id, label: s.client.label }, markets);
    s.listed = new Map(all.map((m) => [m.symbol, m.listedAt]));
    s.marketsAt = now();
    log.info(
      { source: s.client.id, markets: all.length, available: markets.length },
      "Exchange markets read.",
    );
  };

  /** Backfills or catches up the 1m candles of a pair up to now, rolls them up, and writes its spot price. */
  const pollPair = async (s: SourceState, symbol: string) => {
    const id = s.client.id;
    const market = marketOf(id, symbol);
    const at = now();
    const current = Math.floor(at / MINUTE) * MINUTE;
    const last = await lastCandleStart(deps.ch, market);
    let from: number;
    if (last !== null) {
      // The newest stored candle may have been open: read it again.
      from = last;
    } else {
      const listed = s.listed.get(symbol) ?? null;
      const horizon = options.backfillDays > 0 ? current - options.backfillDays * DAY : null;
      from = Math.max(listed ?? horizon ?? current - (CANDLES_PER_PAGE - 1) * MINUTE, horizon ?? 0);
      from = Math.floor(from / MINUTE) * MINUTE;
    }
    const pages = Math.ceil((current - from + MINUTE) / (CANDLES_PER_PAGE * MINUTE));
    const backfill = pages > 1;
    if (backfill) {
      log.info(
        { source: id, pair: symbol, from: new Date(from).toISOString(), pages },
        "Backfilling exchange candles.",
      );
    }
    let written = 0;
    for (let page = 1; from <= current; page++) {
      const to = Math.min(from + (CANDLES_PER_PAGE - 1) * MINUTE, current);
      const candles = await fetchCandles1m(s.client, symbol, from, to, now());
      if (candles.length > 0) {
        await writeCandles1m(deps.ch, market, candles);
        await rollUpCandles(deps.ch, market, candles[0]!.t, candles[candles.length - 1]!.t);
        written += candles.length;
        deps.metrics.pipelineRows.inc({ stage: `exchange:${id}`, table: "candles" }, candles.length);
      }
      if (backfill) {
        log.info(
          { source: id, pair: symbol, page, pages, candles: written, to: new Date(to).toISOString() },
          "Exchange candles page written.",
        );
      }
      from = to + MINUTE;
    }
    const price = await fetchLastPrice(s.client, symbol);
    if (price !== null) await writeCexSpot(deps.ch, id, symbol, price, at);
  };

  /**
   * Hands the fills of a pair with enable_trades to the trade watcher: from the newest recorded one
   * on (the cursor is what the watcher recorded, so a crash re-reads and the watcher drops what it
   * has), or the exchange's newest FIRST_TRADES when the pair has none yet.
   */
  const pollTrades = async (s: SourceState, pair: WatchedCexPair, sink: TradeSink) => {
    const id = s.client.id;
    // The newest recorded fill: read from the watcher's record once, then kept (it is durable first).
    let cursor =
      s.cursors.get(pair.pair_symbol) ?? (await lastRecordedTradeId(deps.pg, id, pair.pair_symbol));
    for (;;) {
      const limit = cursor === null ? FIRST_TRADES : TRADES_PER_PAGE;
      const fills = await fetchTrades(s.client, pair.pair_symbol, cursor, limit);
      if (fills.length === 0) return;
      await sink.record(fills.map((f) => marketTradeOf(id, pair, f)));
      deps.metrics.pipelineRows.inc({ stage: `exchange:${id}`, table: "trades" }, fills.length);
      cursor = fills[fills.length - 1]!.id;
      s.cursors.set(pair.pair_symbol, cursor);
      if (fills.length < limit || limit === FIRST_TRADES) return;
    }
  };

  /**
   * One poll of a source: candles and spot prices of its pairs and/or the fills of those with
   * enable_trades. The two run in loops of their own (pollMs, tradesPollMs) so a long candle
   * backfill never delays fills; they share the source's health and backoff.
   */
  const cycle = async (s: SourceState, what = { candles: true, trades: true }): Promise<SourcePoll> => {
    const id = s.client.id;
    if (now() < s.nextAt) return "waiting";
    const failedBefore = s.failedCycles;
    try {
      if (s.marketsAt === 0 || now() - s.marketsAt >= MARKETS_REFRESH_MS) await refreshMarkets(s);
      const candlesDue = what.candles;
      const pairs = await watchedCexPairs(deps.pg, id);
      s.trades = deps.sink !== null && deps.sink !== undefined && pairs.some((p) => p.enable_trades);
      for (const pair of pairs) {
        // A pair the exchange no longer lists (delisted) is skipped: it must not stall the others.
        if (!s.listed.has(pair.pair_symbol)) {
          log.warn(
            { source: id, pair: pair.pair_symbol },
            "Configured pair is not a market of the exchange.",
          );
          continue;
        }
        if (candlesDue) await pollPair(s, pair.pair_symbol);
        if (what.trades && pair.enable_trades && deps.sink) await pollTrades(s, pair, deps.sink);
      }
      // The candle and trade loops share the source: a cycle whose requests were answered before the
      // other loop's cycle failed may finish (its writes) after that failure. It says nothing of the
      // exchange since, so the source stays degraded until a cycle begun after the failure succeeds.
      if (s.failedCycles !== failedBefore) return "degraded";
      const at = now();
      if (s.failures > 0) log.info({ source: id, failures: s.failures }, "Exchange recovered.");
      s.failures = 0;
      s.nextAt = 0;
      await markSourceOk(deps.pg, id, at);
      deps.metrics.priceSourceUp.set({ source: id }, 1);
      deps.metrics.priceSourceLastOk.set({ source: id }, at);
      return "ok";
    } catch (error) {
      s.failures += 1;
      s.failedCycles += 1;
      const retryAfter = error instanceof ExchangeError ? (error.retryAfterMs ?? 0) : 0;
      const backoff = Math.min(MAX_BACKOFF_MS, options.pollMs * 2 ** (s.failures - 1));
      const wait = Math.max(retryAfter, backoff);
      const at = now();
      s.nextAt = at + wait;
      const message = error instanceof Error ? error.message : String(error);
      log.warn(
        { source: id, failures: s.failures, retry_in_ms: wait, err: message },
        "Exchange poll failed.",
      );
      deps.metrics.priceSourceUp.set({ source: id }, 0);
      deps.metrics.priceSourceFailures.inc({ source: id });
      await markSourceDegraded(deps.pg, id, at, message).catch((e: unknown) =>
        log.error({ source: id, err: e }, "Could not record the exchange's state."),
      );
      return "degraded";
    }
  };

  const abort = new AbortController();
  const loops: Promise<void>[] = [];
  const run = async (s: SourceState) => {
    await ensureCexSource(deps.pg, s.client.id, s.client.label);
    const candles = async () => {
      while (!abort.signal.aborted) {
        await cycle(s, { candles: true, trades: false });
        await sleep(Math.max(options.pollMs, s.nextAt - now()), abort.signal);
      }
    };
    const trades = async () => {
      const every = options.tradesPollMs ?? options.pollMs;
      while (!abort.signal.aborted) {
        // Only a source with a pair with enable_trades reads fills (known after its first poll).
        if (s.trades) await cycle(s, { candles: false, trades: true });
        await sleep(Math.max(every, s.nextAt - now()), abort.signal);
      }
    };
    await Promise.all([candles(), trades()]);
  };

  return {
    async pollOnce() {
      const results = await Promise.all(
        states.map(async (s) => {
          await ensureCexSource(deps.pg, s.client.id, s.client.label);
          return [s.client.id, await cycle(s)] as const;
        }),
      );
      return Object.fromEntries(results);
    },
    start() {
      for (const s of states) {
        loops.push(
          run(s).catch((error: unknown) =>
            log.error({ source: s.client.id, err: error }, "Exchange loop stopped."),
          ),
        );
      }
    },
    async stop() {
      abort.abort();
      await Promise.all(loops);
    },
  };
}

/** An exchange fill as the trade watcher takes it. */
export function marketTradeOf(source: string, pair: WatchedCexPair, f: RawTrade): MarketTrade {
  const [base = "", quote = ""] = pair.pair_symbol.split("_");
  return {
    key: `cex:${source}:${pair.pair_symbol}:${f.id}`,
    category: "cex",
    source_id: source,
    pair_id: pair.id,
    pair_symbol: pair.pair_symbol,
    side: f.side,
    ts: f.ts,
    base_amount: f.amount,
    quote_amount: mulDecimal(f.amount, f.price),
    price: f.price,
    base_symbol: pair.base_asset ?? base,
    quote_symbol: pair.quote_asset ?? quote,
    base_token_id: pair.token_id ?? "",
  };
}
