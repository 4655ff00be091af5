// Test passes: embedded and server (reprocessed history equal to a clean pass by hash, with chains on different Kafka partitions).
/**
 * The dapp decoders and groups end to end on the simulated network: ingest → normalize (decoders) → events →
 * the groups' routes, with their figures against references computed here with plain loops from the chain's
 * own blocks; and history ingested with the decoders off, then reprocessed with them on, equal (by hash) to a
 * clean pass with them on.
 */
import { addressFromContractId } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { type DevnetServer, startDevnetServer } from "../../devnet/server.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { reprocessRange } from "../../pipeline/reprocess.ts";
import { eventsStateHash, startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { openTestCh, openTestPg } from "../helpers/stores.ts";

const BLOCKS = 1500;

interface Ev {
  contractAddress: string;
  eventIndex: number;
  fields: { type: string; value: unknown }[];
  ts: number;
}

/** Every contract event of the main chains' blocks up to `until` (ms), in block order per chain. */
function eventsUpTo(chain: DevnetChain, until: number): Ev[] {
  const out: Ev[] = [];
  for (let c = 0; c < 16; c++)
    for (const b of chain.mainChain(c)) {
      if (b.block.height === 0 || b.block.timestamp > until) continue;
      const conflicted = new Set(b.block.conflictedTxs ?? []);
      for (const e of b.events)
        if (!conflicted.has(e.txId))
          out.push({
            contractAddress: e.contractAddress,
            eventIndex: e.eventIndex,
            fields: e.fields,
            ts: b.block.timestamp,
          });
    }
  return out;
}
const str = (e: Ev, i: number) => String(e.fields[i]?.value);

describe("dapp groups on the simulated network", () => {
  let chain: DevnetChain;
  let server: DevnetServer;
  let p: TestPipeline;
  let until: number;
  const get = async (url: string) => (await p.api.app.inject({ url })).json();
  async function walk<R>(url: string, field: string): Promise<R[]> {
    const rows: R[] = [];
    let next: string | null = null;
    do {
      const sep = url.includes("?") ? "&" : "?";
      const body = await get(`${url}${sep}limit=7${next ? `&nextKey=${encodeURIComponent(next)}` : ""}`);
      rows.push(...(body[field] as R[]));
      next = body.nextKey;
    } while (next);
    return rows;
  }

  beforeAll(async () => {
    chain = createDevnetChain({ seed: 7 });
    chain.advance(BLOCKS);
    server = await startDevnetServer(chain, { port: 0 });
    p = await startTestPipeline({ chain, server, confirmations: 2 });
    await p.catchUp();
    until = await p.api.deps.events!.watermark();
  }, 600_000);
  afterAll(async () => {
    await p?.close();
    await server?.close();
  });

  it("serves the Furnace's burns and totals per token as the chain's Burned events say", async () => {
    const furnaces = new Set(chain.plan().furnaces.map((f) => f.address));
    const ref = new Map<string, { burned: bigint; burns: number }>();
    for (const e of eventsUpTo(chain, until)) {
      if (!furnaces.has(e.contractAddress) || e.eventIndex !== 0) continue;
      // Group 0's furnace writes the raw id (as mainnet's generation 1), the others its hex text.
      const written = str(e, 1);
      const token = written.length === 64 ? written : Buffer.from(written, "hex").toString("utf8");
      const r = ref.get(token) ?? { burned: 0n, burns: 0 };
      r.burned += BigInt(str(e, 2));
      r.burns += 1;
      ref.set(token, r);
    }
    expect(ref.size).toBeGreaterThan(0);
    const rows = await walk<{ token_id: string; burned: string; burns: number }>(
      "/dapps/furnace/tokens",
      "tokens",
    );
    expect(new Map(rows.map((r) => [r.token_id, { burned: BigInt(r.burned), burns: r.burns }]))).toEqual(ref);
    const burns = await walk<{ id: string }>("/dapps/furnace/burns", "burns");
    expect(burns).toHaveLength([...ref.values()].reduce((a, r) => a + r.burns, 0));
  });

  it("ranks Chain Reaction players as the factory's and V1's events say", async () => {
    const { factoryV2, v1 } = chain.plan().chainReaction;
    // Rounds by (game, chain id): their token from ChainStarted / PlayerJoined, then joins and ends.
    const token = new Map<string, string>();
    const ref = new Map<string, { wins: number; payout: bigint; games: Set<string>; spent: bigint }>();
    const at = (a: string) => {
      const v = ref.get(a) ?? { wins: 0, payout: 0n, games: new Set<string>(), spent: 0n };
      ref.set(a, v);
      return v;
    };
    const evs = eventsUpTo(chain, until).sort((a, b) => a.ts - b.ts);
    const joins: { round: string; player: string; fee: bigint }[] = [];
    const ends: { round: string; winner: string; payout: bigint }[] = [];
    for (const e of evs) {
      if (e.contractAddress === factoryV2.address) {
        const round = `${str(e, 0)}/${str(e, 1)}`;
        if (e.eventIndex === 1) token.set(round, str(e, 4));
        if (e.eventIndex === 2) {
          token.set(round, str(e, 7));
          joins.push({ round, player: str(e, 2), fee: BigInt(str(e, 3)) });
        }
        if (e.eventIndex === 3) ends.push({ round, winner: str(e, 2), payout: BigInt(str(e, 3)) });
      } else if (e.contractAddress === v1.address) {
        // PotBoosted (4) names no round.
        if (e.eventIndex > 3) continue;
        const round = `v1/${str(e, 0)}`;
        token.set(round, ALPH_TOKEN_ID);
        if (e.eventIndex === 1) joins.push({ round, player: str(e, 1), fee: BigInt(str(e, 2)) });
        if (e.eventIndex === 2) ends.push({ round, winner: str(e, 1), payout: BigInt(str(e, 2)) });
      }
    }
    for (const j of joins.filter((x) => token.get(x.round) === ALPH_TOKEN_ID)) {
      at(j.player).games.add(j.round);
      at(j.player).spent += j.fee;
    }
    for (const w of ends.filter((x) => token.get(x.round) === ALPH_TOKEN_ID)) {
      at(w.winner).wins += 1;
      at(w.winner).payout += w.payout;
    }
    expect(ends.length).toBeGreaterThan(0);
    const rows = await walk<{ address: string; wins: number; payout: string; games: number; spent: string }>(
      "/dapps/chainreaction/leaderboard?sort=payout",
      "entries",
    );
    expect(
      new Map(
        rows.map((r) => [r.address, { wins: r.wins, payout: r.payout, games: r.games, spent: r.spent }]),
      ),
    ).toEqual(
      new Map(
        [...ref].map(([a, v]) => [
          a,
          { wins: v.wins, payout: v.payout.toString(), games: v.games.size, spent: v.spent.toString() },
        ]),
      ),
    );
    const games = await walk<{ state: string }>("/dapps/chainreaction/games", "games");
    expect(games.length).toBe(token.size);
    expect(games.filter((g) => g.state === "ended")).toHaveLength(ends.length);
    const rooms = await walk<{ room_id: string }>("/dapps/chainreaction/rooms", "rooms");
    const hub = chain.plan().chainReaction.hub.address;
    expect(rooms).toHaveLength(
      eventsUpTo(chain, until).filter((e) => e.contractAddress === hub && e.eventIndex === 0).length,
    );
  });

  it("serves every randomness round and the price feeds of the oracles", async () => {
    const rand = chain.plan().randomness.address;
    const rounds = eventsUpTo(chain, until)
      .filter((e) => e.contractAddress === rand && e.eventIndex === 1)
      .map((e) => str(e, 0))
      .sort((a, b) => Number(b) - Number(a));
    expect(rounds.length).toBeGreaterThan(0);
    const served = await walk<{ round: string }>("/dapps/dia-oracle/randomness", "rounds");
    expect(served.map((r) => r.round)).toEqual(rounds);
    const feeds = (await get("/dapps/dia-oracle/feeds")).feeds as { key: string }[];
    expect(feeds.map((f) => f.key).sort()).toEqual([...chain.oracle().keys].sort());
  });

  it("sums Elexium volumes per pool and day as the pools' Swap events say", async () => {
    const { pools } = chain.plan().elexium;
    expect(pools).toHaveLength(2);
    for (const pool of pools) {
      const days = new Map<string, { swaps: number; v0: bigint; v1: bigint }>();
      for (const e of eventsUpTo(chain, until)) {
        if (e.contractAddress !== pool.address || e.eventIndex !== 3) continue;
        const day = new Date(e.ts).toISOString().slice(0, 10);
        const d = days.get(day) ?? { swaps: 0, v0: 0n, v1: 0n };
        d.swaps += 1;
        d.v0 += BigInt(str(e, 1)) + BigInt(str(e, 3));
        d.v1 += BigInt(str(e, 2)) + BigInt(str(e, 4));
        days.set(day, d);
      }
      expect(days.size).toBeGreaterThan(0);
      const served = (await get(`/dapps/elexium/pools/${pool.address}/daily`)).days as {
        day: string;
        swaps: number;
        volume0: string;
        volume1: string;
      }[];
      expect(
        new Map(served.map((d) => [d.day, { swaps: d.swaps, v0: BigInt(d.volume0), v1: BigInt(d.volume1) }])),
      ).toEqual(days);
      const row = await get(`/dapps/elexium/pools/${pool.address}`);
      expect(row.stable).toBe(pool.stable);
    }
  });

  it("reads AlphBanX positions from the node's contract state, with the ratio against DIA's ALPH/USD", async () => {
    const headers = p.api.auth(p.api.userKey);
    const ops = (
      await p.api.app.inject({ url: "/dapps/alphbanx/operations?op=open_loan&limit=200", headers })
    ).json().operations as { address: string }[];
    expect(ops.length).toBeGreaterThan(0);
    const { loanManager } = chain.plan().alphbanx;
    const alphUsd = (await get("/dapps/dia-oracle/feeds")).feeds.find(
      (f: { key: string }) => f.key === "ALPH/USD",
    ).price;
    let open = 0;
    for (const address of new Set(ops.map((o) => o.address))) {
      // The simulated network's own state (what its call-contract answers), read here without the API.
      const loan = chain.dappCall(loanManager.address, 23, [{ type: "Address", value: address }])?.[0]?.value;
      const res = await p.api.app.inject({ url: `/dapps/alphbanx/positions/${address}`, headers });
      if (!loan) {
        expect(res.statusCode).toBe(404);
        continue;
      }
      open += 1;
      const loanAddress = addressFromContractId(String(loan));
      const collateral = BigInt(String(chain.dappCall(loanAddress, 16, [])?.[0]?.value));
      const debt = BigInt(String(chain.dappCall(loanAddress, 17, [])?.[0]?.value));
      const position = res.json();
      expect(position).toMatchObject({
        loan_id: loan,
        collateral: collateral.toString(),
        debt: debt.toString(),
      });
      if (debt > 0n)
        expect(position.collateral_ratio).toBeCloseTo(
          ((Number(collateral) / 1e18) * alphUsd) / (Number(debt) / 1e9),
          6,
        );
    }
    expect(open).toBeGreaterThan(0);
  });

  it("decodes every dapp of the simulated network, with no layout refused", async () => {
    const rows = await p.ch.ch.query<{ dapp_id: string; category: string; n: string }>(
      "t",
      `SELECT dapp_id, category, count() AS n FROM events FINAL WHERE main_chain GROUP BY dapp_id, category`,
    );
    const count = (dapp: string, category: string) =>
      Number(rows.find((r) => r.dapp_id === dapp && r.category === category)?.n ?? 0);
    for (const [dapp, category] of [
      ["furnace", "token"],
      ["chainreaction", "game"],
      ["elexium", "dex"],
      ["alphbanx", "lending"],
      ["dia-oracle", "oracle"],
      ["deadrare", "nft"],
      ["myonion", "launchpad"],
      ["wormhole", "bridge"],
    ] as const)
      expect(count(dapp, category), `${dapp} ${category}`).toBeGreaterThan(0);
    const [refused] = await p.ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM events FINAL WHERE main_chain AND JSONHas(payload, 'decode_error')",
    );
    expect(Number(refused?.n)).toBe(0);
  });

  it("gives a room's map entries (created on each join, destroyed with the room) the room's dapp", async () => {
    const rooms = new Set(
      eventsUpTo(chain, until)
        .filter((e) => e.eventIndex === -1 && str(e, 1) === chain.plan().chainReaction.hub.address)
        .map((e) => str(e, 0)),
    );
    const entries = new Set(
      eventsUpTo(chain, until)
        .filter((e) => e.eventIndex === -1 && rooms.has(str(e, 1)))
        .map((e) => str(e, 0)),
    );
    expect(entries.size).toBeGreaterThan(0);
    const rows = await p.ch.ch.query<{ to: string; with: string; sub_kind: string; dapp_id: string }>(
      "t",
      `SELECT to, with, sub_kind, dapp_id FROM events FINAL
       WHERE main_chain AND category = 'contract' AND sub_kind IN ('created', 'destroyed') AND to IN {e:Array(String)}`,
      { e: [...entries] },
    );
    expect(rows.filter((r) => r.sub_kind === "created").length).toBe(entries.size);
    expect(rows.some((r) => r.sub_kind === "destroyed")).toBe(true);
    for (const r of rows) expect(r.dapp_id, `${r.sub_kind} ${r.to}`).toBe("chainreaction");
  });

  it("decodes history ingested with the decoders off once it is reprocessed with them on", async () => {
    const clean = await eventsStateHash(p.ch);
    // History normalized by an indexer without the decoders.
    // chDB holds one data directory per process: the second database lives beside the first.
    const stores = { pg: await openTestPg(), ch: await openTestCh({ dataDir: p.ch.dataDir }) };
    const off = await startTestPipeline({
      chain,
      server,
      stores,
      confirmations: 2,
      env: { DAPP_DECODERS: "false" },
    });
    let on: TestPipeline | undefined;
    try {
      await off.catchUp();
      const before = await eventsStateHash(off.ch);
      expect(before.hash).not.toBe(clean.hash);
      const [burns] = await off.ch.ch.query<{ n: string }>(
        "t",
        "SELECT count() AS n FROM events FINAL WHERE main_chain AND sub_kind = 'burn'",
      );
      expect(Number(burns?.n)).toBe(0);
      // The upgraded indexer on the same stores, then reprocess: the same events as a clean pass with decoders.
      for (const proc of off.processors.values()) await proc.stop();
      on = await startTestPipeline({ chain, server, confirmations: 2, stores });
      await reprocessRange(on.deps, 0, Date.now() + 86_400_000);
      await on.catchUp();
      expect(await eventsStateHash(off.ch)).toEqual(clean);
    } finally {
      await on?.close();
      await off.close();
      await stores.pg.close();
      await stores.ch.close();
    }
  }, 600_000);
});
