// Test passes: embedded (figures computed from the stored events, whatever batches the bus made; the guarantees run over Kafka elsewhere).
/**
 * Exchange wallets on the simulated network: a wallet added through the admin route turns the
 * transfers to / from it into `cex` deposit / withdraw events of blocks after the change, while the
 * blocks already normalized keep their events; re-delivering every block changes nothing; backdating
 * the wallet and reprocessing brings it to history; removing it closes its range the same way.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createExchangeWalletsRepo, exchangeBookAt } from "../../lib/labels/exchange-wallets.ts";
import { reprocessRange } from "../../pipeline/reprocess.ts";
import { eventsStateHash, startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

interface Row {
  id: string;
  category: string;
  sub_kind: string;
  dapp_id: string;
  from: string;
  to: string;
  ts: string;
}

describe("exchange wallets", () => {
  let p: TestPipeline | undefined;
  afterAll(async () => p?.close());

  it("classifies the transfers of new blocks, keeps old ones, and reaches history through a reprocess", async () => {
    // History ends at the clock, so the blocks made next are newer than the change.
    p = await startTestPipeline({ devnet: { startTimestamp: Date.now() - 150_000 }, blocks: 300 });
    const pipeline = p;
    await pipeline.catchUp();
    const events = async (where: string) =>
      pipeline.ch.ch.query<Row>(
        "t",
        `SELECT id, category, sub_kind, dapp_id, from, to, toString(toUnixTimestamp64Milli(timestamp)) AS ts
         FROM events FINAL WHERE main_chain AND ${where} ORDER BY id`,
      );
    // The address most often at either end of a transfer.
    const [busiest] = await pipeline.ch.ch.query<{ a: string }>(
      "t",
      `SELECT a FROM (SELECT arrayJoin([from, to]) AS a FROM events FINAL
         WHERE main_chain AND category = 'transfer' AND sub_kind = 'send') WHERE a != ''
       GROUP BY a ORDER BY count() DESC, a LIMIT 1`,
    );
    const wallet = busiest!.a;
    const involving = `(from = '${wallet}' OR to = '${wallet}')`;
    const before = await events(`category = 'transfer' AND sub_kind = 'send' AND ${involving}`);
    expect(before.length).toBeGreaterThan(0);

    const admin = pipeline.api.auth(pipeline.api.adminKey);
    const add = async (payload: object) =>
      pipeline.api.app.inject({
        method: "POST",
        url: "/addresses/exchange-wallets/add",
        headers: admin,
        payload,
      });
    expect((await add({ address: "not-an-address", exchange_id: "gate" })).statusCode).toBe(400);
    const bad = await add({ address: wallet, exchange_id: "Gate!" });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json().errors)).toContain("exchange_id");
    const added = await add({ address: wallet, exchange_id: "gate", label: "Gate hot wallet" });
    expect(added.statusCode, added.body).toBe(200);
    const from = added.json().wallet.applies_from as number;
    const newestBlock = Math.max(...before.map((e) => Number(e.ts)));
    expect(from).toBeGreaterThan(newestBlock);
    const listed = await pipeline.api.app.inject({ url: "/addresses/exchange-wallets" });
    expect(listed.json().wallets).toEqual([
      expect.objectContaining({ address: wallet, exchange_id: "gate", applies_until: null, source: "admin" }),
    ]);

    // New blocks: their transfers to / from the wallet are cex events; the old ones stay as they were.
    pipeline.chain.advance(400);
    await pipeline.catchUp();
    const cex = await events(`category = 'cex'`);
    expect(cex.length).toBeGreaterThan(0);
    for (const e of cex) {
      expect(Number(e.ts)).toBeGreaterThanOrEqual(from);
      expect(e.dapp_id).toBe("gate");
      expect(e.sub_kind).toBe(e.to === wallet ? "deposit" : "withdraw");
      expect([e.from, e.to]).toContain(wallet);
    }
    const stillTransfers = await events(`category = 'transfer' AND sub_kind = 'send' AND ${involving}`);
    for (const e of stillTransfers) expect(Number(e.ts)).toBeLessThan(from);
    // (New blocks of chains behind the newest published block are older than the change: they too stay.)
    expect(stillTransfers.map((e) => e.id)).toEqual(expect.arrayContaining(before.map((e) => e.id)));

    // Re-delivering every block gives the same events (the wallet's range depends on block time only).
    const state = await eventsStateHash(pipeline.ch);
    await reprocessRange(pipeline.deps, 0, Number.MAX_SAFE_INTEGER);
    await pipeline.catchUp();
    expect(await eventsStateHash(pipeline.ch)).toEqual(state);

    // Backdated and reprocessed: the older transfers become cex events too.
    const backdated = await createExchangeWalletsRepo(pipeline.pg.pg).backdate({ address: wallet }, 0);
    expect(backdated).toHaveLength(1);
    await reprocessRange(pipeline.deps, 0, Number.MAX_SAFE_INTEGER);
    await pipeline.catchUp();
    expect(await events(`category = 'transfer' AND sub_kind = 'send' AND ${involving}`)).toEqual([]);
    const history = await events(`category = 'cex'`);
    expect(history.length).toBe(cex.length + stillTransfers.length);

    // Removed: blocks after the change are transfers again; what was normalized stays.
    const del = await pipeline.api.app.inject({
      method: "POST",
      url: "/addresses/exchange-wallets/del",
      headers: admin,
      payload: { address: wallet },
    });
    expect(del.statusCode, del.body).toBe(200);
    const until = del.json().wallet.applies_until as number;
    const again = await pipeline.api.app.inject({
      method: "POST",
      url: "/addresses/exchange-wallets/del",
      headers: admin,
      payload: { address: wallet },
    });
    expect(again.statusCode).toBe(404);
    pipeline.chain.advance(400);
    await pipeline.catchUp();
    expect((await events(`category = 'cex'`)).every((e) => Number(e.ts) < until)).toBe(true);
    expect(
      (await events(`category = 'transfer' AND sub_kind = 'send' AND ${involving}`)).every(
        (e) => Number(e.ts) >= until,
      ),
    ).toBe(true);
  }, 240_000);

  it("applies a wallet to a block when applies_from <= block time < applies_until", () => {
    const wallets = new Map([
      ["A", [{ exchange_id: "gate", from: 100, until: 200 }]],
      ["B", [{ exchange_id: "mexc", from: 0, until: Number.POSITIVE_INFINITY }]],
    ]);
    expect(exchangeBookAt(wallets, 99).exchangeOf("A")).toBeUndefined();
    expect(exchangeBookAt(wallets, 100).exchangeOf("A")).toBe("gate");
    expect(exchangeBookAt(wallets, 199).exchangeOf("A")).toBe("gate");
    expect(exchangeBookAt(wallets, 200).exchangeOf("A")).toBeUndefined();
    expect(exchangeBookAt(wallets, 5).exchangeOf("B")).toBe("mexc");
    expect(exchangeBookAt(wallets, 5).exchangeOf("C")).toBeUndefined();
  });
});
