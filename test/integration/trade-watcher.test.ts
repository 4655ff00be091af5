// Test passes: embedded and server (guarantee 1 with market events, the pipeline over Kafka).
/**
 * The trade watcher under guarantee 1: 20 pollers follow /events/all?poll=1 while blocks are made
 * live and ingested, and the exchange double's fills of a pair with enable_trades are read through
 * ccxt and recorded as `cex` events; midway the exchange stalls (requests hang) and then recovers.
 * Every poller must receive every event, on-chain and market, exactly once and in id order; on-chain
 * events keep arriving while the exchange is stalled; the market events are exactly the double's
 * fills from the first one read, with their side, amounts, price and time.
 */
import { afterAll, describe, expect, it } from "vitest";
import { type ExchangeDouble, type GateTrade, startExchangeDouble } from "../../devnet/exchange.ts";
import { createProduction, runLive } from "../../devnet/live.ts";
import { idCeiling } from "../../lib/chain/types.ts";
import { readProgress } from "../../lib/events/reader.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { MARKET_CHAIN_INDEX } from "../../pipeline/trade-watcher/feed.ts";
import { createTradeWatcher, type TradeWatcher } from "../../pipeline/trade-watcher/watcher.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import { quietLog } from "../helpers/stores.ts";

const MINUTE = 60_000;
const DAY = 1440 * MINUTE;

interface Seen {
  id: string;
  chain_index: number;
  category: string;
  sub_kind: string;
  timestamp: number;
  payload: Record<string, unknown>;
}

describe("trade watcher events and pollers", () => {
  let p: TestPipeline | undefined;
  let gate: ExchangeDouble | undefined;
  let watcher: TradeWatcher | undefined;
  afterAll(async () => {
    await watcher?.stop();
    await gate?.close();
    await p?.close();
  });

  it("every poller receives every on-chain and market event once, in order, while the exchange stalls and recovers", async () => {
    // Chain time follows the wall clock (one block per chain every 2 s), as on mainnet once the index
    // is live: market event ids are times of recording, served once the chains reach them.
    const start = Date.now();
    p = await startTestPipeline({
      devnet: { startTimestamp: start - 40_000, blockIntervalMs: 2000 },
      blocks: 320,
      confirmations: 1,
    });
    const pipeline = p;
    const { pg, ch } = pipeline.deps;
    const listedAt = Math.floor((start - DAY) / MINUTE) * MINUTE;
    gate = await startExchangeDouble({
      seed: 11,
      pairs: [
        {
          id: "ALPH_USDT",
          base: "ALPH",
          quote: "USDT",
          listedAt,
          startPrice: 0.31,
          trend: 0.00001,
          precision: 5,
          amountPrecision: 2,
          tradesPerMinute: 400,
        },
      ],
    });
    const exchange = gate;
    const metrics = createMetrics();
    // The watcher as `start` and `exchanges` wire it (pipeline/trade-watcher): the exchange poller hands fills to the feed.
    watcher = createTradeWatcher(
      { pg, ch, log: quietLog, metrics },
      {
        feed: { heartbeatMs: 100 },
        exchanges: {
          sources: ["gate"],
          apiUrls: { gate: exchange.url },
          pollMs: 200,
          timeoutMs: 400,
          backfillDays: 1,
        },
      },
    );
    // The feed now; the loops after the pair is watched (the first poll is driven here).
    await watcher.start({ poll: false });
    const poller = watcher.exchanges!;
    expect(await poller.pollOnce()).toEqual({ gate: "ok" });
    const admin = pipeline.api.auth(pipeline.api.adminKey);
    const added = await pipeline.api.app.inject({
      method: "POST",
      url: "/price/source/gate/pair/add",
      headers: admin,
      payload: { pair_symbol: "ALPH_USDT" },
    });
    expect(added.statusCode, added.body).toBe(200);
    const pairId = added.json().id as number;
    const updated = await pipeline.api.app.inject({
      method: "POST",
      url: `/price/source/gate/pair/${pairId}/update`,
      headers: admin,
      payload: { enable_trades: true },
    });
    expect(updated.statusCode, updated.body).toBe(200);

    pipeline.ingestor.start();
    // Anchored at the test's start, not at this line: however long the set-up took on a loaded machine,
    // chain time catches up with the wall clock (the blocks due are made at once) and then follows it.
    const stopLive = runLive(
      createProduction(pipeline.chain, { pace: { wallAnchor: start, chainAnchor: start, speed: 1 } }),
    );
    poller.start();
    const pollers = Array.from({ length: 20 }, () => ({ seen: [] as Seen[], after: "0" }));
    const pollOnce = async (x: { seen: Seen[]; after: string }) => {
      const r = await pipeline.api.app.inject({
        url: `/events/all?poll=1&after_id=${x.after}&limit=200`,
      });
      expect(r.statusCode).toBe(200);
      const events = r.json().events as Seen[];
      x.seen.push(...events);
      if (events.length > 0) x.after = events[events.length - 1]!.id;
      return events.length;
    };
    let running = true;
    const loops = pollers.map(async (x) => {
      while (running) {
        await pollOnce(x);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const first = pollers[0]!;
    const market = () => first.seen.filter((e) => e.chain_index === MARKET_CHAIN_INDEX).length;
    const onChain = () => first.seen.filter((e) => e.chain_index !== MARKET_CHAIN_INDEX).length;
    const status = async () =>
      (
        (await pipeline.api.app.inject({ url: "/status" })).json().price_sources as {
          id: string;
          status: string;
        }[]
      ).find((s) => s.id === "gate")?.status;
    let end = 0;
    try {
      await waitFor("market events served to pollers", async () => market() >= 20, 90_000);

      // The exchange stalls: requests hang until they time out, the source is degraded, and the
      // on-chain events go on reaching the pollers.
      exchange.failure = { kind: "stall" };
      await waitFor(
        "the stalled exchange to be degraded",
        async () => (await status()) === "degraded",
        30_000,
      );
      const chainBefore = onChain();
      await waitFor("on-chain events during the stall", async () => onChain() >= chainBefore + 30, 60_000);
      expect(await status()).toBe("degraded");

      // It recovers; its clock then stops, so its fills are a fixed set.
      exchange.failure = { kind: "none" };
      exchange.releaseStalled();
      end = Date.now();
      exchange.setNow(() => end);
      const total = async () =>
        Number(
          (
            await pg.query<{ n: string }>(
              "t",
              "SELECT count(*) AS n FROM market_trades WHERE pair_symbol = 'ALPH_USDT'",
            )
          )[0]!.n,
        );
      let recordedAt = 0;
      await waitFor(
        "every fill up to the exchange's last minute recorded",
        async () => {
          const [row] = await pg.query<{ id: string | null }>(
            "t",
            "SELECT max(venue_trade_id::bigint)::text AS id FROM market_trades WHERE pair_symbol = 'ALPH_USDT'",
          );
          const newest = exchange.trades(exchange.pair("ALPH_USDT")!, null, 1)[0]!;
          recordedAt = Date.now();
          return row?.id === newest.id;
        },
        60_000,
      );
      expect(await total()).toBeGreaterThan(20);
      // A request the stall held when it ended failed; the next poll reports the source healthy again.
      await waitFor("the recovered exchange to be ok", async () => (await status()) === "ok", 30_000);
      // The chains (and the feed) pass the time of the last recording: every market event is served.
      await waitFor(
        "the watermark past the last recorded fill",
        async () => (await readProgress(ch)).watermark > recordedAt + 1000,
        120_000,
      );
      stopLive();
      await poller.stop();
      // Drain: the pipeline reaches the simulated tip (minus the confirmation) on every chain, so the
      // watermark stops moving; then the pollers catch up.
      await waitFor(
        "the pipeline to reach the simulated tip",
        async () => {
          const progress = await readProgress(ch);
          return (
            progress.chains.length === 16 &&
            progress.chains.every((c) => c.height === pipeline.chain.height(c.chain_index) - 1)
          );
        },
        120_000,
      );
    } finally {
      stopLive();
      running = false;
      await Promise.all(loops);
    }
    for (const x of pollers) while ((await pollOnce(x)) > 0);

    const { watermark } = await readProgress(ch);
    const expected = (
      await ch.query<{ id: string }>(
        "t",
        "SELECT id FROM events FINAL WHERE main_chain AND id < {c:String} ORDER BY id",
        { c: idCeiling(watermark) },
      )
    ).map((r) => r.id);
    for (const x of pollers) {
      const ids = x.seen.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual([...ids].sort());
      expect(ids).toEqual(expected);
    }

    // The market events are the double's fills from the first one read to its last, field for field.
    const served = first.seen.filter((e) => e.chain_index === MARKET_CHAIN_INDEX);
    const keys = served.map((e) => String(e.payload.trade_key));
    const firstId = Math.min(...keys.map((k) => Number(k.split(":").pop())));
    const fills: GateTrade[] = [];
    const spec = exchange.pair("ALPH_USDT")!;
    for (let i = Math.floor(firstId / 1000) - 1; spec.listedAt + i * MINUTE <= end; i++) {
      for (const f of exchange.tradesOfMinute(spec, i, end)) if (Number(f.id) >= firstId) fills.push(f);
    }
    expect(served.length).toBe(fills.length);
    const byKey = new Map(served.map((e) => [String(e.payload.trade_key), e]));
    for (const f of fills) {
      const e = byKey.get(`cex:gate:ALPH_USDT:${f.id}`);
      expect(e, `fill ${f.id}`).toBeDefined();
      expect(e).toMatchObject({ category: "cex", sub_kind: f.side, timestamp: Number(f.create_time_ms) });
      expect(e!.payload).toMatchObject({ base_amount: f.amount, price: f.price, pair_id: pairId });
    }
  }, 300_000);
});
