/**
 * The trade watcher's events feed: trades made off the Alephium chain (exchange fills, EVM pool swaps
 * of pairs with `enable_trades`) become normalized events in `events`, served by `/events/all` like
 * the on-chain ones. They have no block position, so:
 *
 * - **Ids** sort by when the watcher recorded the trade: `<record ms>-16-<feed seq>-00000-0000`
 *   (chain index 16 = the market feed; the event's `timestamp` is the venue's trade time). One
 *   writer assigns them, each above the feed's announced position.
 * - **Position**: after the events of a batch are written the watcher announces the position
 *   (`market_feed_progress`); with no trades it moves the position to its clock every
 *   `heartbeatMs`. The poll watermark is min(the 16 chains, position) while the feed is active, so a
 *   trade event becomes visible only once every id below it is written (guarantee 1), and because
 *   the position follows the watcher's clock rather than the exchanges, a stalled exchange never holds
 *   back on-chain events.
 * - **Once**: a trade is recorded under its stable key in Postgres (`market_trades`, the outbox) with
 *   the event it gets, before that event is written to ClickHouse. Handing the same trade again (a
 *   poller re-reading after a crash) records nothing new; a crash between the two writes is repaired
 *   by the next start, which writes every recorded event above the announced position first.
 * - **Stop and start**: a clean stop announces the position as paused (the watermark then ignores
 *   the feed); a start writes the feed active, then reads the chains' watermark and assigns ids only
 *   above both, so no id can land below what a reader served meanwhile.
 */
import { ALPH_TOKEN_ID, eventId, type NormalizedEvent } from "../../lib/chain/types.ts";
import { eventDoc } from "../../lib/events/writer.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import type { MarketTrade, TradeSink } from "./trade.ts";

/** `chain_index` of market events (the 16 Alephium chains are 0..15). */
export const MARKET_CHAIN_INDEX = 16;
const FEED = "trades";
/** `type` of a market event by its category. */
export const MARKET_EVENT_TYPE = { cex: "trade", dex: "evm_swap" } as const;

export interface TradeFeedDeps {
  pg: Pg;
  ch: Ch;
  log: Logger;
  metrics?: Metrics;
}

export interface TradeFeedOptions {
  /** How often the position follows the clock when no trade arrives (ms). */
  heartbeatMs: number;
  /** The watcher's clock (ms); default the wall clock. */
  now?: () => number;
}

export interface TradeFeed extends TradeSink {
  /** Repairs what a crash left, announces the feed active and starts the heartbeat. */
  start(): Promise<void>;
  /** One heartbeat: moves the position to the clock (tests; the timer calls it). */
  beat(): Promise<void>;
  /** Stops the heartbeat and announces the position paused. */
  stop(): Promise<void>;
  /** Trades recorded by this instance, and the announced position. */
  stats(): { recorded: number; position: number };
}

interface StoredFeed {
  position: number;
  version: number;
}

async function readFeed(ch: Ch): Promise<StoredFeed | null> {
  const rows = await ch.query<{ position: string; version: string }>(
    "market_feed_read",
    `SELECT toUnixTimestamp64Milli(position) AS position, version
     FROM market_feed_progress FINAL WHERE feed = {feed:String}`,
    { feed: FEED },
  );
  const r = rows[0];
  return r ? { position: Number(r.position), version: Number(r.version) } : null;
}

/** The chains' low watermark alone (0 until all 16 have a position). */
async function chainsWatermark(ch: Ch): Promise<number> {
  const rows = await ch.query<{ n: string; low: string }>(
    "market_feed_chains",
    `SELECT count() AS n, toUnixTimestamp64Milli(min(block_ts)) AS low
     FROM (SELECT chain_index, max(block_ts) AS block_ts FROM chain_progress GROUP BY chain_index)`,
  );
  const r = rows[0];
  return r && Number(r.n) === 16 ? Number(r.low) : 0;
}

/** Whole-unit decimal string → smallest units (truncated), or "0" when it does not parse. */
export function toSmallestUnits(amount: string, decimals: number): string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(amount);
  if (!m) return "0";
  const whole = m[1] as string;
  const frac = (m[2] ?? "").slice(0, decimals).padEnd(decimals, "0");
  return BigInt(whole + frac).toString();
}

interface BaseToken {
  contract_address: string;
  decimals: number | null;
}

/** The normalized event of a market trade (pure). */
export function marketEvent(
  t: MarketTrade,
  id: string,
  seq: number,
  base: BaseToken | null,
): NormalizedEvent {
  const evm = t.evm;
  return {
    id,
    chain_index: MARKET_CHAIN_INDEX,
    block_hash: "",
    block_height: evm ? evm.block_number : 0,
    timestamp: t.ts,
    tx_id: evm ? evm.tx_hash.toLowerCase() : "",
    tx_index: 0,
    event_index: 0,
    dapp_id: t.source_id,
    category: t.category,
    sub_kind: t.side,
    type: MARKET_EVENT_TYPE[t.category],
    is_main: true,
    from: "",
    to: evm ? evm.taker : "",
    with: t.pair_symbol,
    token_address: t.base_token_id === ALPH_TOKEN_ID ? "" : (base?.contract_address ?? ""),
    token_id: t.base_token_id,
    amount:
      base?.decimals !== null && base?.decimals !== undefined
        ? toSmallestUnits(t.base_amount, base.decimals)
        : "0",
    contract_address: "",
    contract_event_index: null,
    payload: {
      source: t.source_id,
      pair_id: t.pair_id,
      pair_symbol: t.pair_symbol,
      side: t.side,
      base_symbol: t.base_symbol,
      quote_symbol: t.quote_symbol,
      base_amount: t.base_amount,
      quote_amount: t.quote_amount,
      price: t.price,
      trade_key: t.key,
      feed_seq: seq,
      ...(evm
        ? {
            evm_chain_id: evm.chain_id,
            evm_tx_hash: evm.tx_hash.toLowerCase(),
            evm_block_number: evm.block_number,
            evm_log_index: evm.log_index,
          }
        : {}),
    },
    payload_ref: null,
  };
}

/** The `events` row of a stored market event. */
function eventRow(e: NormalizedEvent, seq: number) {
  const row = { ...e, payload: JSON.stringify(e.payload) };
  return { ...row, main_chain: true, doc: eventDoc(row), version: seq };
}

/** The feed sequence of an event id (its height part). */
const seqOf = (id: string) => Number(id.slice(17, 27));

export function createTradeFeed(deps: TradeFeedDeps, options: TradeFeedOptions): TradeFeed {
  const now = options.now ?? Date.now;
  const log = deps.log.child({ component: "trade-watcher" });
  const { pg, ch } = deps;
  let started: Promise<void> | null = null;
  let stopped = false;
  /** Announced position: ids at or below it are written. */
  let position = 0;
  /** Lowest time new ids may take (above the position and above what readers may have served). */
  let floor = 0;
  let seq = 0;
  let version = 0;
  let recorded = 0;
  let timer: NodeJS.Timeout | null = null;
  // One writer: every step runs after the previous one.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = queue.then(fn, fn);
    queue = run.catch(() => undefined);
    return run;
  };

  const announce = async (at: number, active: boolean) => {
    version += 1;
    await ch.insert("market_feed_write", "market_feed_progress", [
      { feed: FEED, position: at, active, version },
    ]);
    position = at;
  };

  const baseTokens = async (ids: string[]): Promise<Map<string, BaseToken>> => {
    const wanted = [...new Set(ids.filter((id) => /^[0-9a-f]{64}$/.test(id)))];
    if (wanted.length === 0) return new Map();
    const rows = await pg.query<{ id: string; contract_address: string; decimals: number | null }>(
      "market_feed_tokens",
      "SELECT id, contract_address, decimals FROM tokens WHERE id = ANY($1::text[])",
      [wanted],
    );
    const out = new Map<string, BaseToken>(rows.map((r) => [r.id, r]));
    if (!out.has(ALPH_TOKEN_ID) && wanted.includes(ALPH_TOKEN_ID)) {
      out.set(ALPH_TOKEN_ID, { contract_address: "", decimals: 18 });
    }
    return out;
  };

  const begin = async () => {
    const stored = await readFeed(ch);
    version = stored?.version ?? 0;
    const announced = stored?.position ?? 0;
    const last = await pg.query<{ event_id: string | null; recorded_at: string | null }>(
      "market_feed_last",
      "SELECT max(event_id) AS event_id, max(recorded_at) AS recorded_at FROM market_trades",
    );
    const lastId = last[0]?.event_id ?? null;
    seq = lastId ? seqOf(lastId) : 0;
    // Recorded but maybe not written (a crash between the outbox and ClickHouse): write them again.
    const pending = await pg.query<{ event: NormalizedEvent }>(
      "market_feed_pending",
      "SELECT event FROM market_trades WHERE recorded_at > $1 ORDER BY event_id",
      [announced],
    );
    if (pending.length > 0) {
      await ch.insert(
        "events_insert",
        "events",
        pending.map((r) => eventRow(r.event, seqOf(r.event.id))),
      );
      log.info({ events: pending.length }, "Market events recorded before a crash written.");
    }
    const lastRecorded = Number(last[0]?.recorded_at ?? 0);
    await announce(Math.max(now(), announced, lastRecorded), true);
    // Readers that saw the feed paused served up to the chains' watermark: stay above it.
    floor = Math.max(position, await chainsWatermark(ch));
    log.info({ position, floor, seq }, "Trade watcher feed active.");
  };

  const recordNow = async (trades: readonly MarketTrade[]) => {
    const unique = new Map<string, MarketTrade>();
    for (const t of trades) if (!unique.has(t.key)) unique.set(t.key, t);
    if (unique.size === 0) return;
    const known = await pg.query<{ key: string }>(
      "market_trades_known",
      "SELECT key FROM market_trades WHERE key = ANY($1::text[])",
      [[...unique.keys()]],
    );
    for (const k of known) unique.delete(k.key);
    if (unique.size === 0) return;
    const at = Math.max(now(), floor + 1, position + 1);
    const bases = await baseTokens([...unique.values()].map((t) => t.base_token_id));
    const ordered = [...unique.values()].sort((a, b) =>
      a.ts !== b.ts ? a.ts - b.ts : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
    );
    const records = ordered.map((t) => {
      seq += 1;
      const id = eventId(at, MARKET_CHAIN_INDEX, seq, 0, 0);
      return { trade: t, seq, event: marketEvent(t, id, seq, bases.get(t.base_token_id) ?? null) };
    });
    const inserted = await pg.query<{ event_id: string }>(
      "market_trades_insert",
      `INSERT INTO market_trades (key, event_id, recorded_at, source_id, pair_id, pair_symbol,
                                  venue_trade_id, trade, event)
       SELECT x.key, x.event_id, x.recorded_at, x.source_id, x.pair_id, x.pair_symbol,
              x.venue_trade_id, x.trade, x.event
       FROM jsonb_to_recordset($1::jsonb) AS x(key text, event_id text, recorded_at bigint,
            source_id text, pair_id integer, pair_symbol text, venue_trade_id text, trade jsonb, event jsonb)
       ON CONFLICT (key) DO NOTHING
       RETURNING event_id`,
      [
        JSON.stringify(
          records.map((r) => ({
            key: r.trade.key,
            event_id: r.event.id,
            recorded_at: at,
            source_id: r.trade.source_id,
            pair_id: r.trade.pair_id,
            pair_symbol: r.trade.pair_symbol,
            venue_trade_id: r.trade.category === "cex" ? r.trade.key.split(":").pop() : null,
            trade: r.trade,
            event: r.event,
          })),
        ),
      ],
    );
    const fresh = new Set(inserted.map((r) => r.event_id));
    const rows = records.filter((r) => fresh.has(r.event.id)).map((r) => eventRow(r.event, r.seq));
    await ch.insert("events_insert", "events", rows);
    await announce(at, true);
    recorded += rows.length;
    deps.metrics?.pipelineRows.inc({ stage: "trade-watcher", table: "events" }, rows.length);
  };

  const beatNow = async () => {
    const at = now();
    if (at > position) await announce(at, true);
  };

  const ensureStarted = () => {
    if (!started) throw new Error("The trade watcher feed is not started");
    return started;
  };

  return {
    start() {
      if (!started) {
        started = serial(begin);
        timer = setInterval(() => {
          serial(beatNow).catch((error: unknown) =>
            log.warn({ err: error instanceof Error ? error.message : String(error) }, "Heartbeat failed."),
          );
        }, options.heartbeatMs);
        timer.unref();
      }
      return started;
    },
    async record(trades) {
      await ensureStarted();
      if (stopped) throw new Error("The trade watcher feed is stopped");
      await serial(() => recordNow(trades));
    },
    async beat() {
      await ensureStarted();
      await serial(beatNow);
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      if (!started || stopped) return;
      stopped = true;
      await started.catch(() => undefined);
      await serial(() => announce(position, false));
      log.info({ position, recorded }, "Trade watcher feed paused.");
    },
    stats: () => ({ recorded, position }),
  };
}

/**
 * Leaves the feed paused after writing what a crashed watcher recorded but did not write: run where
 * no watcher will run (so a feed left active by a crash does not hold the watermark).
 */
export async function retireTradeFeed(deps: TradeFeedDeps): Promise<boolean> {
  const stored = await readFeed(deps.ch);
  if (!stored) return false;
  const feed = createTradeFeed(deps, { heartbeatMs: 60_000 });
  await feed.start();
  await feed.stop();
  return true;
}
