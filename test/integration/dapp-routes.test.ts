// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * The five dapp groups' routes over hand-made normalized events (shaped as the decoders write them, see
 * lib/chain/TAXONOMY.md): filters, order, figures against references computed here with plain loops,
 * nextKey paging (also by 20 pagers while events keep arriving), refused cursors and the alphbanx key.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { addressFromContractId } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { MAINNET_LOAN_MANAGER } from "../../lib/dapps/alphbanx.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { blockMessage, type EventSpec, hex32, liftWatermark, writeMessages } from "../helpers/dapp-events.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

const T0 = 1_750_000_000_000;
const addr = () => addressFromContractId(hex32());
const FURNACE = addr();
const burners = [addr(), addr(), addr()];
const tokens = [hex32(), hex32()];

interface BurnRef {
  burner: string;
  token: string;
  amount: bigint;
  nft: boolean;
  ts: number;
}

const burn = (b: BurnRef): EventSpec => ({
  dapp_id: "furnace",
  category: "token",
  sub_kind: "burn",
  type: "furnace_burn",
  from: b.burner,
  to: FURNACE,
  with: b.nft ? addr() : "",
  token_id: b.token,
  amount: b.amount.toString(),
  contract_address: FURNACE,
  contract_event_index: 0,
  payload: {
    burner: b.burner,
    token_id: b.token,
    amount: b.amount.toString(),
    nft: b.nft,
    nft_address: b.nft ? addr() : "",
    burn_timestamp: b.ts,
    group: 0,
    token_burned_encoding: "text",
  },
});

/** A Chain Reaction round as the test plays it: joins in order, then (maybe) its end. */
interface PlayedRound {
  version: 1 | 2;
  game: string;
  chain: string;
  token: string;
  joins: { player: string; fee: bigint }[];
  ended: boolean;
}
const players = [addr(), addr(), addr()];
const GAME_TOKEN = hex32();
const rounds: PlayedRound[] = [
  {
    version: 2,
    game: hex32(),
    chain: "1",
    token: ALPH_TOKEN_ID,
    joins: [0, 1, 2].map((i) => ({ player: players[i]!, fee: 100n + BigInt(i) })),
    ended: true,
  },
  {
    version: 2,
    game: hex32(),
    chain: "1",
    token: GAME_TOKEN,
    joins: [1, 0].map((i) => ({ player: players[i]!, fee: 50n })),
    ended: true,
  },
  {
    version: 1,
    game: hex32(),
    chain: "4",
    token: ALPH_TOKEN_ID,
    joins: [2, 0].map((i) => ({ player: players[i]!, fee: 70n })),
    ended: true,
  },
  {
    version: 2,
    game: hex32(),
    chain: "2",
    token: ALPH_TOKEN_ID,
    joins: [0, 1].map((i) => ({ player: players[i]!, fee: 10n })),
    ended: false,
  },
];
const payoutOf = (r: PlayedRound) => (r.joins.reduce((a, j) => a + j.fee, 0n) * 9n) / 10n;

function roundEvents(r: PlayedRound): EventSpec[][] {
  const type = r.version === 2 ? "chain_reaction" : "chain_reaction_v1";
  const base = { dapp_id: "chainreaction", category: "game", type };
  const common = (token: string) => ({
    version: r.version,
    game_id: r.game,
    chain_id: r.chain,
    token_id: token,
  });
  let pot = 0n;
  const txs: EventSpec[][] = [
    [
      {
        ...base,
        sub_kind: "chain_started",
        token_id: r.token,
        payload: { ...common(r.token), start_block: "1", fees_bps: 100 },
      },
    ],
  ];
  r.joins.forEach((j, i) => {
    pot += j.fee;
    txs.push([
      {
        ...base,
        sub_kind: "player_joined",
        to: j.player,
        token_id: r.token,
        amount: j.fee.toString(),
        payload: {
          ...common(r.token),
          player: j.player,
          entry_fee: j.fee.toString(),
          pot: pot.toString(),
          position: String(i + 1),
          amount_burned: "1",
        },
      },
    ]);
  });
  if (r.ended) {
    const winner = r.joins[r.joins.length - 1]!.player;
    // V2's ChainEnded names no token: the routes take the round's from its start and joins.
    const token = r.version === 2 ? ALPH_TOKEN_ID : r.token;
    txs.push([
      {
        ...base,
        sub_kind: "chain_ended",
        to: winner,
        token_id: token,
        amount: payoutOf(r).toString(),
        payload: {
          ...common(r.version === 2 ? "" : r.token),
          winner,
          payout: payoutOf(r).toString(),
          total_burned: "2",
          fees_amount: "0",
        },
      },
    ]);
  }
  return txs;
}

/** Elexium: a stable pool of two tokens; swaps and liquidity as the decoder writes them. */
const POOL = addr();
const [TA, TB] = [hex32(), hex32()].sort() as [string, string];
interface PoolMove {
  kind: "add" | "remove" | "swap";
  a0: bigint;
  a1: bigint;
  /** For swaps: token 0 in (true) or token 1 in. */
  zeroIn?: boolean;
  trader: string;
}
const traders = [addr(), addr()];
const poolMoves: PoolMove[] = [
  { kind: "add", a0: 1_000_000n, a1: 2_000_000n, trader: traders[0]! },
  { kind: "swap", a0: 1_000n, a1: 1_990n, zeroIn: true, trader: traders[1]! },
  { kind: "swap", a0: 480n, a1: 1_000n, zeroIn: false, trader: traders[0]! },
  { kind: "remove", a0: 10_000n, a1: 20_000n, trader: traders[0]! },
  { kind: "swap", a0: 5_000n, a1: 9_900n, zeroIn: true, trader: traders[1]! },
];

function poolEvents(): EventSpec[][] {
  const base = { dapp_id: "elexium", category: "dex", with: POOL, contract_address: POOL };
  const pool = { pool_address: POOL, token0_id: TA, token1_id: TB, stable: true };
  const txs: EventSpec[][] = [
    [{ ...base, sub_kind: "pool_created", type: "pair_created", to: POOL, token_id: TA, payload: pool }],
  ];
  for (const m of poolMoves) {
    if (m.kind === "swap") {
      // Base = token0 (neither leg is ALPH): token0 out is a buy.
      const [tIn, tOut, aIn, aOut] = m.zeroIn ? [TA, TB, m.a0, m.a1] : [TB, TA, m.a1, m.a0];
      const buy = tOut === TA;
      txs.push([
        {
          ...base,
          sub_kind: buy ? "buy" : "sell",
          type: "swap",
          from: m.trader,
          token_id: TA,
          amount: m.a0.toString(),
          payload: {
            ...pool,
            token_in_id: tIn,
            token_out_id: tOut,
            amount_in: aIn.toString(),
            amount_out: aOut.toString(),
            base_token_id: TA,
            quote_token_id: TB,
            base_amount: m.a0.toString(),
            quote_amount: m.a1.toString(),
            price: (Number(m.a1) / Number(m.a0)).toString(),
          },
        },
      ]);
    } else {
      txs.push([
        {
          ...base,
          sub_kind: m.kind === "add" ? "add_liquidity" : "remove_liquidity",
          type: m.kind === "add" ? "mint" : "burn",
          from: m.trader,
          payload: { ...pool, amount0: m.a0.toString(), amount1: m.a1.toString(), liquidity: "0" },
        },
      ]);
    }
  }
  return txs;
}

const FEEDS = { "ALPH/USD": [60_000_000n, 61_000_000n], "BTC/USD": [6_500_000_000_000n] } as const;
const ORACLE = addr();
function oracleEvents(at: number): EventSpec[][] {
  const txs: EventSpec[][] = [];
  for (const [key, values] of Object.entries(FEEDS))
    for (const value of values)
      txs.push([
        {
          dapp_id: "dia-oracle",
          category: "oracle",
          sub_kind: "price_update",
          type: "oracle_update",
          to: ORACLE,
          contract_address: ORACLE,
          payload: {
            key,
            key_hex: Buffer.from(key).toString("hex"),
            value: value.toString(),
            decimals: 8,
            oracle_timestamp: at,
          },
        },
      ]);
  for (let round = 1000; round < 1005; round++)
    txs.push([
      {
        dapp_id: "dia-oracle",
        category: "oracle",
        sub_kind: "randomness",
        type: "oracle_update",
        to: ORACLE,
        contract_address: ORACLE,
        payload: { round: String(round), randomness: hex32(), signature: hex32() },
      },
    ]);
  return txs;
}

describe("dapp group routes", () => {
  let t: TestApp;
  let stores: { pg: TestPg; ch: TestCh };
  const get = async (url: string, key?: string) => {
    const res = await t.app.inject({ url, headers: key ? t.auth(key) : {} });
    return { status: res.statusCode, body: res.json() };
  };
  /** Every row of a list, page by page (limit `n`), checking each page's size. */
  async function walk<R>(url: string, field: string, n: number, key?: string): Promise<R[]> {
    const rows: R[] = [];
    let next: string | null = null;
    for (let i = 0; i < 1000; i++) {
      const sep = url.includes("?") ? "&" : "?";
      const page = await get(
        `${url}${sep}limit=${n}${next ? `&nextKey=${encodeURIComponent(next)}` : ""}`,
        key,
      );
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      rows.push(...(page.body[field] as R[]));
      next = page.body.nextKey;
      if (!next) return rows;
      expect(page.body[field]).toHaveLength(n);
    }
    throw new Error("paging did not end");
  }

  const burns: BurnRef[] = [];
  let ts = T0;

  beforeAll(async () => {
    stores = { pg: await openTestPg(), ch: await openTestCh() };
    t = await createTestApp({ stores });
    // 30 burns over 10 blocks of chain 0, round-robin over burners and tokens, every fourth with an NFT.
    for (let h = 1; h <= 10; h++) {
      ts += 8_000;
      const txs: EventSpec[][] = [];
      for (let k = 0; k < 3; k++) {
        const i = burns.length;
        const b = {
          burner: burners[i % 3]!,
          token: tokens[i % 2]!,
          amount: BigInt(1000 + i * 7),
          nft: i % 4 === 0,
          ts,
        };
        burns.push(b);
        txs.push([burn(b)]);
      }
      await writeMessages(t.deps.ch!, [blockMessage(0, h, ts, txs)]);
    }
    // Chain Reaction rounds on chain 1, one block per round.
    let h1 = 1;
    for (const r of rounds)
      await writeMessages(t.deps.ch!, [blockMessage(1, h1++, T0 + h1 * 1000, roundEvents(r))]);
    await writeMessages(t.deps.ch!, [
      blockMessage(2, 1, T0 + 1000, poolEvents()),
      blockMessage(3, 1, T0 + 2000, oracleEvents(T0)),
    ]);
    await liftWatermark(t.deps.ch!, ts);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await stores?.pg.close();
    await stores?.ch.close();
  });

  describe("dapps:furnace", () => {
    it("lists burns newest first with filters", async () => {
      const all = await walk<{ id: string; burner: string; token_id: string; amount: string; nft: boolean }>(
        "/dapps/furnace/burns",
        "burns",
        7,
      );
      expect(all).toHaveLength(burns.length);
      expect(all.map((b) => b.id)).toEqual([...all.map((b) => b.id)].sort().reverse());
      const byToken = (await get(`/dapps/furnace/burns?limit=200&token_id=${tokens[1]}`)).body.burns;
      expect(byToken).toHaveLength(burns.filter((b) => b.token === tokens[1]).length);
      const byBurner = (await get(`/dapps/furnace/burns?limit=200&burner=${burners[2]}`)).body.burns;
      expect(byBurner.map((b: { amount: string }) => b.amount)).toEqual(
        burns
          .filter((b) => b.burner === burners[2])
          .reverse()
          .map((b) => b.amount.toString()),
      );
      const nfts = (await get("/dapps/furnace/nfts?limit=200")).body.nfts;
      expect(nfts).toHaveLength(burns.filter((b) => b.nft).length);
      const window = (await get(`/dapps/furnace/burns?limit=200&from_ts=${T0 + 16_000}&to_ts=${T0 + 24_000}`))
        .body.burns;
      expect(window).toHaveLength(burns.filter((b) => b.ts >= T0 + 16_000 && b.ts <= T0 + 24_000).length);
      expect((await get(`/dapps/furnace/burns?from_ts=${T0 + 9}&to_ts=${T0}`)).status).toBe(400);
    });

    it("totals per token and top burners equal a reference from the burns", async () => {
      const ref = new Map<string, { burned: bigint; burns: number; burners: Set<string> }>();
      for (const b of burns) {
        const r = ref.get(b.token) ?? { burned: 0n, burns: 0, burners: new Set<string>() };
        r.burned += b.amount;
        r.burns += 1;
        r.burners.add(b.burner);
        ref.set(b.token, r);
      }
      const rows = await walk<{ token_id: string; burned: string; burns: number; burners: number }>(
        "/dapps/furnace/tokens",
        "tokens",
        1,
      );
      expect(rows).toHaveLength(ref.size);
      for (const row of rows) {
        const r = ref.get(row.token_id)!;
        expect(row).toMatchObject({ burned: r.burned.toString(), burns: r.burns, burners: r.burners.size });
      }
      expect(rows.map((r) => r.burns)).toEqual([...rows.map((r) => r.burns)].sort((a, b) => b - a));
      const one = await get(`/dapps/furnace/tokens/${tokens[0]}`);
      expect(one.body.burned).toBe(ref.get(tokens[0]!)!.burned.toString());
      expect((await get(`/dapps/furnace/tokens/${"e".repeat(64)}`)).status).toBe(404);

      const byAmount = await walk<{ address: string; burned: string }>(
        `/dapps/furnace/burners?token_id=${tokens[0]}&sort=burned`,
        "burners",
        1,
      );
      const expected = new Map<string, bigint>();
      for (const b of burns.filter((x) => x.token === tokens[0]))
        expected.set(b.burner, (expected.get(b.burner) ?? 0n) + b.amount);
      expect(byAmount.map((r) => [r.address, r.burned])).toEqual(
        [...expected]
          .sort((a, b) => (a[1] === b[1] ? (a[0] < b[0] ? -1 : 1) : a[1] > b[1] ? -1 : 1))
          .map(([a, v]) => [a, v.toString()]),
      );
      const noToken = await get("/dapps/furnace/burners?sort=burned");
      expect(noToken.status).toBe(400);
      expect(noToken.body.detail).toContain("token_id");
    });

    it("refuses forged, edited and foreign cursors with a 400 naming nextKey", async () => {
      const first = await get("/dapps/furnace/burns?limit=2");
      const key: string = first.body.nextKey;
      expect(key).toBeTruthy();
      const forged = await get("/dapps/furnace/burns?limit=2&nextKey=abc.def");
      expect(forged.status).toBe(400);
      expect(forged.body.code).toBe("invalid_cursor");
      expect(forged.body.detail).toContain("nextKey");
      const [body, sig] = key.split(".");
      const edited = `${body!.slice(0, -2)}${body!.endsWith("A") ? "B" : "A"}${body!.slice(-1)}.${sig}`;
      expect((await get(`/dapps/furnace/burns?limit=2&nextKey=${edited}`)).status).toBe(400);
      const otherFilters = await get(`/dapps/furnace/burns?limit=2&token_id=${tokens[0]}&nextKey=${key}`);
      expect(otherFilters.status).toBe(400);
      expect(otherFilters.body.detail).toContain("other filters");
      expect((await get(`/dapps/furnace/tokens?limit=2&nextKey=${key}`)).status).toBe(400);
      expect((await get(`/dapps/furnace/burns?limit=2&nextKey=${"x".repeat(3000)}`)).status).toBe(400);
    });

    it("20 pagers (lists and rankings) see a stable snapshot while burns keep arriving", async () => {
      const before = (await get("/dapps/furnace/burns?limit=200")).body.burns.map(
        (b: { id: string }) => b.id,
      );
      // The burner ranked last (equal counts rank by address) keeps burning: a ranking that read each page
      // at the moment would lift it above the cursor of an earlier page and never serve it.
      const last = [...burners].sort().reverse()[0]!;
      let writing = true;
      const writer = (async () => {
        let h = 100;
        while (writing) {
          ts += 8_000;
          const b = { burner: last, token: tokens[0]!, amount: 5n, nft: false, ts };
          await writeMessages(t.deps.ch!, [blockMessage(0, h++, ts, [[burn(b)]])]);
          await liftWatermark(t.deps.ch!, ts);
        }
      })();
      // A ranking pages through its first page's snapshot too: the burner who keeps burning neither
      // repeats nor goes missing, and the counts never rise down the list.
      const [pagers, rankings] = await Promise.all([
        Promise.all(
          Array.from({ length: 10 }, () =>
            walk<{ id: string }>("/dapps/furnace/burns", "burns", 3).then((rows) => rows.map((r) => r.id)),
          ),
        ),
        Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            await new Promise((r) => setTimeout(r, i * 40));
            return walk<{ address: string; burns: number }>("/dapps/furnace/burners", "burners", 1);
          }),
        ),
      ]);
      writing = false;
      await writer;
      for (const rows of rankings) {
        expect(rows.map((r) => r.address).sort()).toEqual([...burners].sort());
        expect(rows.map((r) => r.burns)).toEqual([...rows.map((r) => r.burns)].sort((a, b) => b - a));
      }
      for (const ids of pagers) {
        expect(new Set(ids).size, "no duplicates").toBe(ids.length);
        // Each pager's snapshot: everything stored when it started, in order, without gaps.
        expect(ids.slice(ids.length - before.length)).toEqual(before);
        expect(ids).toEqual([...ids].sort().reverse());
      }
      // The burns written meanwhile are served once their snapshot has been read (the request that starts that
      // read may still get the previous snapshot: DAPP_PAGE_STALE_MS).
      await vi.waitFor(
        async () =>
          expect((await get("/dapps/furnace/burns?limit=200")).body.burns.length).toBeGreaterThan(
            before.length,
          ),
        { timeout: 10_000, interval: 50 },
      );
    }, 120_000);
  });

  describe("dapps:chainreaction", () => {
    type ApiRound = {
      game_id: string;
      chain_id: string;
      state: string;
      players: number;
      token_id: string;
      winner: string | null;
      payout: string | null;
      pot: string;
    };
    it("lists rounds with state, token, pot and winner, and filters them", async () => {
      const all = await walk<ApiRound>("/dapps/chainreaction/games", "games", 1);
      expect(all).toHaveLength(rounds.length);
      for (const r of rounds) {
        const row = all.find((x) => x.game_id === r.game && x.chain_id === r.chain)!;
        expect(row).toMatchObject({
          state: r.ended ? "ended" : "active",
          players: r.joins.length,
          token_id: r.token,
          pot: r.joins.reduce((a, j) => a + j.fee, 0n).toString(),
          winner: r.ended ? r.joins[r.joins.length - 1]!.player : null,
          payout: r.ended ? payoutOf(r).toString() : null,
        });
      }
      const active = (await get("/dapps/chainreaction/games?state=active")).body.games as ApiRound[];
      expect(active.map((g) => g.game_id)).toEqual(rounds.filter((r) => !r.ended).map((r) => r.game));
      const staked = (await get(`/dapps/chainreaction/games?token_id=${GAME_TOKEN}`)).body
        .games as ApiRound[];
      expect(staked.map((g) => g.game_id)).toEqual([rounds[1]!.game]);
      const one = await get(`/dapps/chainreaction/games/${rounds[0]!.game}/1`);
      expect(one.body.players).toBe(3);
      expect((await get(`/dapps/chainreaction/games/${rounds[0]!.game}/9`)).status).toBe(404);
    });

    it("serves a round's players in join order", async () => {
      const r = rounds[0]!;
      const list = await walk<{ position: number; player: string; entry_fee: string }>(
        `/dapps/chainreaction/games/${r.game}/${r.chain}/players`,
        "players",
        2,
      );
      expect(list.map((p) => [p.position, p.player, p.entry_fee])).toEqual(
        r.joins.map((j, i) => [i + 1, j.player, j.fee.toString()]),
      );
    });

    it("ranks players per staked token as a reference computed from the rounds", async () => {
      for (const token of [ALPH_TOKEN_ID, GAME_TOKEN]) {
        const ref = new Map<string, { wins: number; payout: bigint; games: number; spent: bigint }>();
        const at = (a: string) => {
          const v = ref.get(a) ?? { wins: 0, payout: 0n, games: 0, spent: 0n };
          ref.set(a, v);
          return v;
        };
        for (const r of rounds.filter((x) => x.token === token)) {
          for (const p of new Set(r.joins.map((j) => j.player))) at(p).games += 1;
          for (const j of r.joins) at(j.player).spent += j.fee;
          if (r.ended) {
            const w = at(r.joins[r.joins.length - 1]!.player);
            w.wins += 1;
            w.payout += payoutOf(r);
          }
        }
        for (const sort of ["wins", "payout", "games", "spent"] as const) {
          const rows = await walk<{
            address: string;
            wins: number;
            payout: string;
            games: number;
            spent: string;
          }>(`/dapps/chainreaction/leaderboard?token_id=${token}&sort=${sort}`, "entries", 1);
          expect(rows).toHaveLength(ref.size);
          for (const row of rows) {
            const e = ref.get(row.address)!;
            expect(row).toEqual({
              address: row.address,
              wins: e.wins,
              payout: e.payout.toString(),
              games: e.games,
              spent: e.spent.toString(),
            });
          }
          const metric = (a: string) => BigInt(String(ref.get(a)![sort]));
          const order = [...ref.keys()].sort((a, b) =>
            metric(a) === metric(b) ? (a < b ? -1 : 1) : metric(a) > metric(b) ? -1 : 1,
          );
          expect(
            rows.map((r) => r.address),
            sort,
          ).toEqual(order);
        }
      }
    });

    it("serves a player's history newest first", async () => {
      const p = players[0]!;
      const events = await walk<{ kind: string; game_id: string }>(
        `/dapps/chainreaction/players/${p}/history`,
        "events",
        2,
      );
      const joins = rounds.flatMap((r) => r.joins.filter((j) => j.player === p)).length;
      const wins = rounds.filter((r) => r.ended && r.joins[r.joins.length - 1]!.player === p).length;
      expect(events.filter((e) => e.kind === "player_joined")).toHaveLength(joins);
      expect(events.filter((e) => e.kind === "chain_ended")).toHaveLength(wins);
    });
  });

  describe("dapps:elexium", () => {
    it("serves the pool with reserves summed from its events, its swaps and liquidity", async () => {
      let [r0, r1] = [0n, 0n];
      for (const m of poolMoves) {
        if (m.kind === "add") [r0, r1] = [r0 + m.a0, r1 + m.a1];
        else if (m.kind === "remove") [r0, r1] = [r0 - m.a0, r1 - m.a1];
        else if (m.zeroIn) [r0, r1] = [r0 + m.a0, r1 - m.a1];
        else [r0, r1] = [r0 - m.a0, r1 + m.a1];
      }
      const pools = (await get("/dapps/elexium/pools")).body.pools;
      expect(pools).toHaveLength(1);
      expect(pools[0]).toMatchObject({
        pool_address: POOL,
        token0_id: TA,
        token1_id: TB,
        stable: true,
        fee_bps: 5,
        reserve0: r0.toString(),
        reserve1: r1.toString(),
        swaps: poolMoves.filter((m) => m.kind === "swap").length,
      });
      expect((await get(`/dapps/elexium/pools/${addr()}`)).status).toBe(404);
      const swaps = await walk<{ trader: string; side: string }>(
        `/dapps/elexium/swaps?pool=${POOL}`,
        "swaps",
        2,
      );
      expect(swaps.map((x) => x.trader)).toEqual(
        poolMoves
          .filter((m) => m.kind === "swap")
          .map((m) => m.trader)
          .reverse(),
      );
      const mine = (await get(`/dapps/elexium/swaps?address=${traders[1]}`)).body.swaps;
      expect(mine).toHaveLength(poolMoves.filter((m) => m.kind === "swap" && m.trader === traders[1]).length);
      const liq = (await get(`/dapps/elexium/liquidity?pool=${POOL}`)).body.events;
      expect(liq.map((e: { kind: string }) => e.kind)).toEqual(["remove", "add"]);
    });

    it("sums volume and fees per day, and serves CoinGecko's tickers and historical trades", async () => {
      const daily = (await get(`/dapps/elexium/pools/${POOL}/daily`)).body;
      const swaps = poolMoves.filter((m) => m.kind === "swap");
      const in0 = swaps.filter((m) => m.zeroIn).reduce((a, m) => a + m.a0, 0n);
      expect(daily.days).toHaveLength(1);
      expect(daily.days[0]).toMatchObject({
        swaps: swaps.length,
        volume0: swaps.reduce((a, m) => a + m.a0, 0n).toString(),
        volume1: swaps.reduce((a, m) => a + m.a1, 0n).toString(),
        fees0: ((in0 * 5n) / 10_000n).toString(),
      });
      const tickers = (await get("/dapps/elexium/tickers")).body;
      expect(tickers).toHaveLength(1);
      expect(tickers[0]).toMatchObject({
        ticker_id: `${TA}_${TB}`,
        pool_id: POOL,
        base_currency: TA,
        target_currency: TB,
      });
      const trades = (await get(`/dapps/elexium/historical_trades?ticker_id=${TA}_${TB}`)).body;
      expect(trades.buy.length + trades.sell.length).toBe(swaps.length);
      expect(
        Object.keys((await get(`/dapps/elexium/historical_trades?ticker_id=${TA}_${TB}&type=buy`)).body),
      ).toEqual(["buy"]);
      const bad = await get("/dapps/elexium/historical_trades?ticker_id=nope");
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain("ticker_id");
    });
  });

  describe("dapps:dia-oracle", () => {
    it("serves each feed's newest value with its staleness, and a feed's history", async () => {
      const { feeds, heartbeat_ms } = (await get("/dapps/dia-oracle/feeds")).body;
      expect(heartbeat_ms).toBe(600_000);
      expect(feeds.map((f: { key: string }) => f.key)).toEqual(Object.keys(FEEDS).sort());
      for (const f of feeds) {
        const values = FEEDS[f.key as keyof typeof FEEDS];
        expect(f).toMatchObject({
          value: values[values.length - 1]!.toString(),
          decimals: 8,
          updates: values.length,
          stale: true,
        });
      }
      const history = await walk<{ value: string }>("/dapps/dia-oracle/history?key=ALPH/USD", "values", 1);
      expect(history.map((v) => v.value)).toEqual([...FEEDS["ALPH/USD"]].reverse().map(String));
      expect((await get("/dapps/dia-oracle/history?key=nokey")).status).toBe(400);
    });

    it("serves randomness rounds newest first and by number", async () => {
      const rounds = await walk<{ round: string }>("/dapps/dia-oracle/randomness", "rounds", 2);
      expect(rounds.map((r) => r.round)).toEqual(["1004", "1003", "1002", "1001", "1000"]);
      expect((await get("/dapps/dia-oracle/randomness/1002")).body.round).toBe("1002");
      expect((await get("/dapps/dia-oracle/randomness/7")).status).toBe(404);
    });
  });

  describe("dapps:alphbanx", () => {
    const borrower = addr();
    const LOAN = hex32();
    let node: Server;
    let withNode: TestApp;

    beforeAll(async () => {
      // A double of the full node's call-contract (the node cannot run here), answering as the devnet does.
      node = createServer((req, res) => {
        let body = "";
        req.on("data", (c) => {
          body += c;
        });
        req.on("end", () => {
          const call = JSON.parse(body) as {
            address: string;
            methodIndex: number;
            args?: { value: string }[];
          };
          const val = (v: { type: string; value: string }[]) => ({
            type: "CallContractSucceeded",
            returns: v,
            gasUsed: 5000,
            contracts: [],
            txInputs: [],
            txOutputs: [],
            events: [],
            debugMessages: [],
          });
          let out: object = { type: "CallContractFailed", error: "VM execution error" };
          if (call.address === MAINNET_LOAN_MANAGER && call.methodIndex === 23)
            out = val([{ type: "ByteVec", value: call.args?.[0]?.value === borrower ? LOAN : "" }]);
          else if (call.address === MAINNET_LOAN_MANAGER && call.methodIndex === 16)
            out = val([{ type: "U256", value: "5000000000000000000000" }]);
          else if (call.address === MAINNET_LOAN_MANAGER && call.methodIndex === 17)
            out = val([{ type: "U256", value: "900000000000" }]);
          else if (call.address === addressFromContractId(LOAN) && call.methodIndex === 16)
            out = val([{ type: "U256", value: "1000000000000000000000" }]);
          else if (call.address === addressFromContractId(LOAN) && call.methodIndex === 17)
            out = val([{ type: "U256", value: "200000000000" }]);
          res.setHeader("content-type", "application/json");
          res.end(JSON.stringify(out));
        });
      });
      await new Promise<void>((r) => node.listen(0, "127.0.0.1", r));
      const port = (node.address() as AddressInfo).port;
      withNode = await createTestApp({ stores, env: { NODE_URL: `http://127.0.0.1:${port}` } });
    });
    afterAll(async () => {
      await withNode?.close();
      node?.close();
    });

    it("needs a user key", async () => {
      for (const url of [
        "/dapps/alphbanx/operations",
        "/dapps/alphbanx/totals",
        `/dapps/alphbanx/positions/${burners[0]}`,
      ]) {
        expect((await get(url)).status, url).toBe(401);
      }
      expect((await get("/dapps/alphbanx/operations", t.userKey)).status).toBe(200);
    });

    it("answers 502 naming the node when the node is unreachable", async () => {
      const res = await get(`/dapps/alphbanx/positions/${burners[0]}`, t.userKey);
      expect(res.status).toBe(502);
      expect(res.body.code).toBe("upstream_unavailable");
    });

    it("reads a position from contract state, with its ratio and liquidation price from DIA's ALPH/USD", async () => {
      const res = await withNode.app.inject({
        url: `/dapps/alphbanx/positions/${borrower}`,
        headers: withNode.auth(withNode.userKey),
      });
      expect(res.statusCode, res.body).toBe(200);
      const alphUsd = Number(FEEDS["ALPH/USD"][1]) / 1e8;
      const p = res.json();
      expect(p).toMatchObject({
        loan_id: LOAN,
        collateral: "1000000000000000000000",
        debt: "200000000000",
        alph_usd: alphUsd,
      });
      // 1,000 ALPH against 200 ABD: ratio = 1000 × price / 200; liquidation at 200 % = 200 × 2 / 1000.
      expect(p.collateral_ratio).toBeCloseTo((1000 * alphUsd) / 200, 9);
      expect(p.liquidation_price_usd).toBeCloseTo(0.4, 9);
      expect(p.liquidatable).toBe(false);
      const none = await withNode.app.inject({
        url: `/dapps/alphbanx/positions/${addr()}`,
        headers: withNode.auth(withNode.userKey),
      });
      expect(none.statusCode).toBe(404);
      const totals = (
        await withNode.app.inject({ url: "/dapps/alphbanx/totals", headers: withNode.auth(withNode.userKey) })
      ).json();
      expect(totals).toMatchObject({
        loan_manager: MAINNET_LOAN_MANAGER,
        total_collateral: "5000000000000000000000",
        total_debt: "900000000000",
      });
    });
  });
});
