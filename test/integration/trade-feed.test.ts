// Test passes: embedded and server (a crash between the PostgreSQL outbox and ClickHouse, on a PostgreSQL server).
/**
 * The trade watcher's feed on real stores (PGlite or PostgreSQL, chDB): ids above the announced
 * position and the chains' watermark, each trade recorded once by its key, a crash between the
 * outbox and ClickHouse repaired by the next start, the position bounding the watermark only while
 * the feed is active, and the served events equal to the trades.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID, idFloor } from "../../lib/chain/types.ts";
import { readProgress } from "../../lib/events/reader.ts";
import {
  createTradeFeed,
  MARKET_CHAIN_INDEX,
  marketEvent,
  retireTradeFeed,
} from "../../pipeline/trade-watcher/feed.ts";
import type { MarketTrade } from "../../pipeline/trade-watcher/trade.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
let clock = T0;
const now = () => clock;

function trade(n: number, over: Partial<MarketTrade> = {}): MarketTrade {
  return {
    key: `cex:gate:ALPH_USDT:${1000 + n}`,
    category: "cex",
    source_id: "gate",
    pair_id: 1,
    pair_symbol: "ALPH_USDT",
    side: n % 2 === 0 ? "buy" : "sell",
    ts: T0 - 5_000 + n,
    base_amount: `${100 + n}.25`,
    quote_amount: `${(100 + n) * 0.3}`,
    price: "0.3",
    base_symbol: "ALPH",
    quote_symbol: "USDT",
    base_token_id: ALPH_TOKEN_ID,
    ...over,
  };
}

describe("trade watcher feed", () => {
  let pg: TestPg;
  let ch: TestCh;
  let api: TestApp;
  const deps = () => ({ pg: pg.pg, ch: ch.ch, log: quietLog });
  const marketEvents = async () =>
    ch.ch.query<{ id: string; doc: string }>(
      "t",
      `SELECT id, doc FROM events FINAL WHERE chain_index = ${MARKET_CHAIN_INDEX} ORDER BY id`,
    );
  /** Writes a position for all 16 chains at `ts`. */
  const chainsAt = async (ts: number) =>
    ch.ch.insert(
      "t",
      "chain_progress",
      Array.from({ length: 16 }, (_, c) => ({
        chain_index: c,
        height: 1,
        block_hash: "ab".repeat(32),
        block_ts: ts,
        version: ts,
      })),
    );

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    api = await createTestApp({ stores: { pg, ch }, env: { PUBLIC_RPM: "1000000" } });
  });
  afterAll(async () => {
    await api?.close();
    await pg?.close();
    await ch?.close();
  });

  it("assigns ids above the chains' watermark and its position, records each key once, and serves the events", async () => {
    // The chains are ahead of the watcher's clock: ids must still land above what readers served.
    const t0 = clock;
    await chainsAt(t0 + 10_000);
    const feed = createTradeFeed(deps(), { heartbeatMs: 60_000, now });
    await feed.start();
    let progress = await readProgress(ch.ch);
    expect(progress.feed).toMatchObject({ active: true, position: clock });
    expect(progress.watermark).toBe(clock);

    const first = [trade(1), trade(2), trade(3)];
    await feed.record([...first, trade(1)]);
    const events = await marketEvents();
    expect(events).toHaveLength(3);
    for (const e of events) expect(e.id > idFloor(clock + 10_000)).toBe(true);
    expect(events.map((e) => JSON.parse(e.doc).payload.trade_key)).toEqual(first.map((t) => t.key));
    // The position covers them: served, in id order, by /events/all.
    progress = await readProgress(ch.ch);
    expect(progress.feed!.position).toBe(clock + 10_001);
    expect(progress.watermark).toBe(clock + 10_000);

    // Handing the same trades again (a re-read after a crash) records nothing.
    clock += 1_000;
    await feed.record(first);
    expect(await marketEvents()).toHaveLength(3);
    expect(feed.stats().recorded).toBe(3);

    // A later batch gets later ids even when the clock is behind the position.
    await feed.record([trade(4)]);
    const after = await marketEvents();
    expect(after).toHaveLength(4);
    expect(after[3]!.id > after[2]!.id).toBe(true);
    expect(after[3]!.id.slice(0, 13)).toBe(String(t0 + 10_002));

    // The heartbeat moves the position with the clock.
    clock += 60_000;
    await feed.beat();
    expect((await readProgress(ch.ch)).feed!.position).toBe(clock);

    // A clean stop pauses the feed: the watermark is the chains' again.
    await feed.stop();
    progress = await readProgress(ch.ch);
    expect(progress.feed!.active).toBe(false);
    expect(progress.watermark).toBe(t0 + 10_000);
    // /status and the metrics show the paused feed and its lag.
    const status = await api.app.inject({ url: "/status" });
    expect(status.json().trade_feed).toMatchObject({ active: false, position: clock });
    const metrics = await api.app.inject({ url: "/metrics" });
    expect(metrics.body).toMatch(/alephium_trade_feed_lag_ms\{active="false"\} -?\d+/);
  });

  it("serves market events with their fields through /events/all", async () => {
    await chainsAt(clock + 100_000);
    const r = await api.app.inject({ url: "/events/all?category=cex&limit=10" });
    expect(r.statusCode, r.body).toBe(200);
    const served = r.json().events as Record<string, unknown>[];
    expect(served).toHaveLength(4);
    const t = trade(4);
    expect(served[0]).toMatchObject({
      chain_index: MARKET_CHAIN_INDEX,
      timestamp: t.ts,
      category: "cex",
      sub_kind: "buy",
      type: "trade",
      dapp_id: "gate",
      with: "ALPH_USDT",
      token_id: ALPH_TOKEN_ID,
      amount: "104250000000000000000",
      is_main: true,
      tx_id: "",
    });
    expect(served[0]!.payload).toMatchObject({
      source: "gate",
      pair_symbol: "ALPH_USDT",
      base_amount: "104.25",
      price: "0.3",
      trade_key: t.key,
    });
  });

  it("serves an EVM pool swap's event by its EVM transaction hash", async () => {
    const feed = createTradeFeed(deps(), { heartbeatMs: 60_000, now });
    await feed.start();
    const hash = `0x${"Ab".repeat(32)}`;
    await feed.record([
      trade(20, {
        key: `evm:1:${hash}:3`,
        category: "dex",
        source_id: "uniswap",
        pair_symbol: `0x${"12".repeat(20)}`,
        evm: {
          chain_id: 1,
          tx_hash: hash,
          block_number: 19_000_000,
          log_index: 3,
          taker: `0x${"34".repeat(20)}`,
        },
      }),
    ]);
    await feed.stop();
    await chainsAt(clock + 1_000_000);
    const r = await api.app.inject({
      url: `/transaction/${hash}/events`,
      headers: api.auth(api.userKey),
    });
    expect(r.statusCode, r.body).toBe(200);
    const events = r.json().events as Record<string, unknown>[];
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      category: "dex",
      type: "evm_swap",
      tx_id: hash.toLowerCase(),
      block_height: 19_000_000,
      to: `0x${"34".repeat(20)}`,
      with: `0x${"12".repeat(20)}`,
      dapp_id: "uniswap",
    });
    expect(events[0]!.payload).toMatchObject({ evm_chain_id: 1, evm_log_index: 3 });
    const bad = await api.app.inject({ url: "/transaction/0x12/events", headers: api.auth(api.userKey) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/Invalid txid "0x12"/);
  });

  it("writes on start what a crash left between the outbox and ClickHouse", async () => {
    // A watcher recorded a trade and died before writing its event: its row is in the outbox only.
    const at = clock + 200_000;
    const lost = trade(9, { key: "cex:gate:ALPH_USDT:99999" });
    const event = marketEvent(lost, `${String(at)}-16-0000000099-00000-0000`, 99, null);
    await pg.pg.query(
      "t",
      `INSERT INTO market_trades (key, event_id, recorded_at, source_id, pair_id, pair_symbol,
         venue_trade_id, trade, event) VALUES ($1, $2, $3, 'gate', 1, 'ALPH_USDT', '99999', $4, $5)`,
      [lost.key, event.id, at, JSON.stringify(lost), JSON.stringify(event)],
    );
    expect((await marketEvents()).some((e) => e.id === event.id)).toBe(false);
    // Where no watcher runs, retiring the feed writes it and leaves the feed paused.
    expect(await retireTradeFeed(deps())).toBe(true);
    const events = await marketEvents();
    expect(events.some((e) => e.id === event.id)).toBe(true);
    const progress = await readProgress(ch.ch);
    expect(progress.feed!.active).toBe(false);
    expect(progress.feed!.position).toBeGreaterThanOrEqual(at);

    // The next watcher continues the sequence above it.
    const feed = createTradeFeed(deps(), { heartbeatMs: 60_000, now });
    await feed.start();
    await feed.record([trade(10)]);
    const last = (await marketEvents()).at(-1)!;
    expect(last.id > event.id).toBe(true);
    expect(last.id.slice(17, 27)).toBe("0000000100");
    await feed.stop();
  });
});
