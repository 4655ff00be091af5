// Test passes: embedded (the exchange double through ccxt; Postgres holds the registry rows).
/**
 * MEXC (ccxt `mexc`, spot API v3) as an exchange source, on real stores, against the exchange double
 * answering MEXC's endpoints: its markets become the available list, a watched pair's 1m candles and
 * spot equal the exchange's, and with enable_trades its fills (MEXC gives no trade ids) reach the
 * trade watcher once each across polls, with side, amount, price and time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ExchangeDouble, startExchangeDouble } from "../../devnet/exchange.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { createExchangePoller, type ExchangePoller } from "../../pipeline/trade-watcher/exchange-poller.ts";
import type { MarketTrade, TradeSink } from "../../pipeline/trade-watcher/trade.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 2, 2, 10, 0, 20);
let now = T0;
const clock = () => now;

describe("MEXC through ccxt", () => {
  let pg: TestPg;
  let ch: TestCh;
  let api: TestApp;
  let mexc: ExchangeDouble;
  let poller: ExchangePoller;
  const recorded: MarketTrade[] = [];
  // The trade watcher's side of the contract: keeps each key once (the feed has its own test).
  const sink: TradeSink = {
    async record(trades) {
      for (const t of trades) if (!recorded.some((r) => r.key === t.key)) recorded.push(t);
    },
  };
  const get = async (url: string) => {
    const r = await api.app.inject({ url, headers: api.auth(api.userKey) });
    expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
    return r.json();
  };

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    api = await createTestApp({ stores: { pg, ch } });
    mexc = await startExchangeDouble({
      dialect: "mexc",
      seed: 5,
      now: clock,
      pairs: [
        {
          id: "ALPH_USDT",
          base: "ALPH",
          quote: "USDT",
          listedAt: Math.floor(T0 / MINUTE) * MINUTE - 90 * MINUTE,
          startPrice: 0.3,
          trend: 0.0001,
          precision: 5,
          amountPrecision: 2,
          tradesPerMinute: 40,
        },
      ],
    });
    poller = createExchangePoller(
      { pg: pg.pg, ch: ch.ch, log: quietLog, metrics: createMetrics(), sink },
      {
        sources: ["mexc"],
        apiUrls: { mexc: mexc.url },
        pollMs: 50,
        timeoutMs: 1000,
        backfillDays: 1,
        now: clock,
      },
    );
  });
  afterAll(async () => {
    await poller?.stop();
    await api?.close();
    await mexc?.close();
    await pg?.close();
    await ch?.close();
  });

  it("lists MEXC's markets, serves a watched pair's candles and spot, and hands its fills to the watcher once each", async () => {
    expect(await poller.pollOnce()).toEqual({ mexc: "ok" });
    const available = (await get("/price/source/mexc/pair/available")).available as { pair_symbol: string }[];
    expect(available.map((a) => a.pair_symbol)).toEqual(["ALPHUSDT"]);
    const added = await api.app.inject({
      method: "POST",
      url: "/price/source/mexc/pair/add",
      headers: api.auth(api.adminKey),
      payload: { pair_symbol: "ALPHUSDT" },
    });
    expect(added.statusCode, added.body).toBe(200);
    const id = added.json().id as number;
    const update = await api.app.inject({
      method: "POST",
      url: `/price/source/mexc/pair/${id}/update`,
      headers: api.auth(api.adminKey),
      payload: { enable_trades: true },
    });
    expect(update.statusCode, update.body).toBe(200);
    expect(await poller.pollOnce()).toEqual({ mexc: "ok" });

    const spec = mexc.pair("ALPH_USDT")!;
    const expected = mexc
      .candles(spec, spec.listedAt, now)
      .map((r) => ({
        t: Number(r[0]) * 1000,
        o: Number(r[5]),
        h: Number(r[3]),
        l: Number(r[4]),
        c: Number(r[2]),
        v: Number(r[6]),
      }))
      .reverse();
    const served = (await get(`/price/pair/${id}/ohlcv?scale=1m&pageSize=1000`)).ohlcv;
    expect(served).toEqual(expected);
    expect(served).toHaveLength(91);
    expect((await get(`/price/pair/${id}/spot`)).price).toBe(Number(mexc.ticker(spec).last));

    // The first read takes the newest 100 fills; later polls take what came since, once each.
    expect(recorded).toHaveLength(100);
    now += 3 * MINUTE + 7_000;
    expect(await poller.pollOnce()).toEqual({ mexc: "ok" });
    expect(await poller.pollOnce()).toEqual({ mexc: "ok" });
    const fills = [];
    for (let i = 0; spec.listedAt + i * MINUTE <= now; i++) fills.push(...mexc.tradesOfMinute(spec, i, now));
    const newest = fills.slice(-recorded.length);
    expect(recorded.length).toBeGreaterThan(100);
    expect(new Set(recorded.map((r) => r.key)).size).toBe(recorded.length);
    expect(recorded.map((r) => [r.ts, r.side, r.base_amount, r.price])).toEqual(
      newest.map((f) => [Number(f.create_time_ms.split(".")[0]), f.side, f.amount, f.price]),
    );
    expect(recorded[0]).toMatchObject({
      category: "cex",
      source_id: "mexc",
      pair_symbol: "ALPHUSDT",
      pair_id: id,
    });
    expect(recorded[0]!.key).toMatch(/^cex:mexc:ALPHUSDT:\d{13}-\d{4}$/);
  });
});
