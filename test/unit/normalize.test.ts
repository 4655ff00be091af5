/** Normalizer behaviour on hand-built RawBlock fixtures; expected values are derived from the fixture amounts. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID, eventId, type NormalizedEvent, type RawBlock } from "../../lib/chain/types.ts";
import { createStaticDappBook, KNOWN_DAPP_CONTRACTS } from "../../pipeline/normalize/dapps.ts";
import { type NormalizeContext, normalizeBlock } from "../../pipeline/normalize/normalize.ts";
import { createPoolBook } from "../../pipeline/normalize/pools.ts";

/** Actors of the fixtures (addresses printed by the fixture generator). */
const A = {
  alice: "161BjBLQ6tgTv2U8aubfv6HUSVPhzjxWeyKWW5kUs3RuJ",
  bob: "1278pe7uQZR5xnHwiBBoq2wHvUwYcrGhvqnAUhpAvsGnq",
  carol: "1A8iCa9U3w4RV4bNpgo2tJYUGBHGoo4NUT1F8PaK2sP74",
  miner: "12nZJRDkSme1Bbj7FYQybNeeSyb7JEwCPaY79FTp9d7T8",
  uncleMiner: "1KnacUsqscETZ1vFYv3rj9YDGaPvKo5JwgVosheacCC2",
  token: "25RVgk12UAMvhDAdCFiJz9aSU15rsX1kemsUtHuHakNKq",
  tokenId: "9f7af69b41d1ad1622ebe51ac81163848945101e7a78271ce81d8c8dfbe33c00",
  plain: "2AcXPsFAetd8CjhaR3t5jg18SXiLHs1dWBZiT9W3WJJ3q",
  parent: "233GTNZYBAi1gU8xQGCRjVP4GBH3rt7sAyCx8PGyPaue7",
  dead: "2AAXXw53bQr5NmaAWekHazVm9rwrZJZ32cQboduDXgKEF",
  pairP: "23TeWrAbqc3nRYSr5tKEvYpkBQHRhiLPDX961gErgdjH9",
  pairPId: "8250bc0a025f869987d89f56834a94c14d8238024e208e77bbf05b70cfd2d700",
  pairQ: "29uJKBRsMb8ZqSd8WdsV86YXqPhfUW3mSWebGohvESWAB",
  notPoolR: "256FP7BxgpXyfmanuajrAS6gwJ1R3dgVxpj5dBbEAhaud",
  tokenY: "475d51c44fb7256d2bc2ba1b610f8fa0b4ac308eb299620833e10379f8d69d00",
  tokenZ: "ae3358426bbc5c70dc39a2177d034f227b1f6a3bd414aa8f895f7722ae4f2a00",
  unknownU: "yYFDdFswALLZFiGKoavA14xUVN8frqzpCGgkdoGTwZt3",
  payerK: "25TtrHejTK7DqY9EYVLFwE9Cra9chqqkxsf3Mb3DEextX",
  // Mainnet contracts / tokens
  poolAlphUsdt: "2A5R8KZQ3rhKYrW7bAS4JTjY9FCFLJg6HjQpqSFZBqACX",
  poolAlphAyin: "25ywM8iGxKpZWuGA5z6DXKGcZCXtPBmnbQyJEsjvjjWTy",
  router: "vj1SmG6q4gMTA5dRB9TB4pJfyBXdTSNRFbJu2CC38Jw9",
  factory: "vyrkJHG49TXss6pGAz2dVxq5o7mBXNNXAV18nAeqVT1R",
  dia: "285zrkZTPpUCpjKg9E3z238VmpUBQEAbESGsJT6yX7Rod",
  furnace0: "21ekPmzVCwV3fH1XmajtCVWjnDsLxHt14PWdwodk16Zyh",
  usdt: "zSRgc7goAYUgYsEBYdAzogyyeKv3ne3uvWb3VDtxnaEK",
  usdtId: "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00",
  ayin: "vT49PY8ksoUL6NcXiZ1t2wAmC7tTPRfFfER8n3UCLvXy",
  ayinId: "1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800",
  createdG0: "tgx7VNFoP9DJiFMFgXXtafQZkUvyEdDHT9ryamHJZC9M",
  destroyedG0: "tgx7VNFoP9DJiFMFgXXtafQZkUvyEdDHT9ryamHJZC4w",
} as const;

const E18 = 10n ** 18n;

/** Fixture names in test/fixtures/normalize/. */
const FIXTURES = [
  "coinbase-only",
  "transfers",
  "genesis-mint",
  "ayin-swaps",
  "dex-pools",
  "contract-calls",
  "non-main-chain",
] as const;

function loadFixture(name: (typeof FIXTURES)[number]): RawBlock {
  const url = new URL(`../fixtures/normalize/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")) as RawBlock;
}

/** Seed dapps + a test-only dapp for the fixture's factory contract; seed pools; generous payload limit. */
function makeContext(overrides: Partial<NormalizeContext> = {}): NormalizeContext {
  return {
    dapps: createStaticDappBook([
      ...KNOWN_DAPP_CONTRACTS,
      { contract_address: A.parent, dapp_id: "testdapp", label: "fixture factory" },
    ]),
    pools: createPoolBook(),
    maxPayloadBytes: 100_000,
    ...overrides,
  };
}

/** gasAmount × gasPrice of a fixture tx: the `tx_fee` its main event carries. */
function feeOf(name: (typeof FIXTURES)[number], txIndex: number): string {
  const { unsigned } = loadFixture(name).block.transactions[txIndex]!;
  return (BigInt(unsigned.gasAmount) * BigInt(unsigned.gasPrice)).toString();
}

/** Events of one tx position. */
function ofTx(events: NormalizedEvent[], txIndex: number): NormalizedEvent[] {
  return events.filter((e) => e.tx_index === txIndex);
}

/** Compact view for readable assertions: category/sub_kind/type, `*` on the main event. */
function kinds(events: NormalizedEvent[]): string[] {
  return events.map((e) => `${e.category}/${e.sub_kind}/${e.type}${e.is_main ? "*" : ""}`);
}

function run(name: (typeof FIXTURES)[number], ctx: NormalizeContext = makeContext()): NormalizedEvent[] {
  return normalizeBlock(loadFixture(name), ctx).events;
}

describe("coinbase-only block", () => {
  const events = run("coinbase-only");

  it("emits the block reward as main event and the ghost-uncle reward", () => {
    expect(kinds(events)).toEqual(["mining/coinbase/reward*", "mining/uncle_reward/reward"]);
    const [reward, uncle] = events as [NormalizedEvent, NormalizedEvent];
    expect(reward).toMatchObject({
      id: "1718200000000-01-0002000001-00000-0000",
      chain_index: 1,
      block_height: 2000001,
      timestamp: 1718200000000,
      tx_index: 0,
      event_index: 0,
      dapp_id: "alephium",
      from: "",
      to: A.miner,
      token_id: ALPH_TOKEN_ID,
      token_address: "",
      amount: "2500000000000000000",
      contract_address: "",
      contract_event_index: null,
      payload_ref: null,
    });
    // lockTime = timestamp + 30,000,000 ms
    expect(reward.payload).toEqual({ lock_time: 1718230000000, uncle_count: 1 });
    expect(uncle).toMatchObject({ to: A.uncleMiner, amount: "1750000000000000000", event_index: 1 });
    expect(uncle.payload["uncle_miner"]).toBe(A.uncleMiner);
  });
});

describe("transfers block", () => {
  const events = run("transfers");

  it("sums ALPH outputs per recipient and excludes the change", () => {
    const tx0 = ofTx(events, 0);
    expect(kinds(tx0)).toEqual(["transfer/send/alph*", "transfer/send/alph"]);
    expect(tx0.map((e) => [e.from, e.to, e.amount])).toEqual([
      [A.alice, A.bob, (15n * E18).toString()], // 10 + 5 ALPH in two outputs
      [A.alice, A.carol, "2500000000000000000"],
    ]);
    expect(tx0[0]!.payload).toEqual({ output_count: 2, tx_fee: feeOf("transfers", 0) });
    expect(tx0[1]!.payload).toEqual({ output_count: 1 });
  });

  it("emits one event per (recipient, token); the first token transfer is main", () => {
    const tx1 = ofTx(events, 1);
    expect(kinds(tx1)).toEqual(["transfer/send/alph", "transfer/send/token*", "transfer/send/token"]);
    expect(tx1.map((e) => [e.to, e.token_id, e.token_address, e.amount])).toEqual([
      [A.carol, ALPH_TOKEN_ID, "", "1000000000000000"],
      [A.carol, A.usdtId, A.usdt, "1000000"],
      [A.carol, A.ayinId, A.ayin, (2n * E18).toString()],
    ]);
  });

  it("reports a tx paying only its signer as a self transfer", () => {
    const [self] = ofTx(events, 2);
    expect(self).toMatchObject({ category: "transfer", sub_kind: "self", is_main: true, from: A.alice });
    expect(self).toMatchObject({ to: A.alice, amount: (50n * E18).toString() });
  });

  it("skips the conflicted tx but keeps block positions as tx_index", () => {
    expect(ofTx(events, 3)).toEqual([]);
    expect([...new Set(events.map((e) => e.tx_index))]).toEqual([0, 1, 2, 4]);
    expect(kinds(ofTx(events, 4))).toEqual(["mining/coinbase/reward*"]);
  });

  it("turns transfers to / from a known exchange address into cex deposit / withdraw", () => {
    const deposit = run(
      "transfers",
      makeContext({ exchanges: { exchangeOf: (a) => (a === A.bob ? "cexA" : undefined) } }),
    );
    expect(kinds(ofTx(deposit, 0))).toEqual(["cex/deposit/alph*", "transfer/send/alph"]);
    expect(ofTx(deposit, 0)[0]).toMatchObject({ dapp_id: "cexA", to: A.bob, amount: (15n * E18).toString() });
    const withdraw = run(
      "transfers",
      makeContext({ exchanges: { exchangeOf: (a) => (a === A.alice ? "cexB" : undefined) } }),
    );
    expect(kinds(ofTx(withdraw, 1))).toEqual([
      "cex/withdraw/alph",
      "cex/withdraw/token*",
      "cex/withdraw/token",
    ]);
    expect(ofTx(withdraw, 1).every((e) => e.dapp_id === "cexB")).toBe(true);
  });
});

describe("genesis mint block", () => {
  const events = run("genesis-mint");

  it("emits contract creation + genesis mint (main) summing every output of the new token", () => {
    const tx0 = ofTx(events, 0);
    expect(kinds(tx0)).toEqual([
      "contract/created/system",
      "token/genesis_mint/mint*",
      "transfer/payout/alph",
    ]);
    const [created, mint, payout] = tx0 as [NormalizedEvent, NormalizedEvent, NormalizedEvent];
    expect(created).toMatchObject({
      from: A.alice,
      to: A.token,
      contract_address: A.createdG0,
      contract_event_index: -1,
      dapp_id: "alephium",
    });
    expect(created.payload).toEqual({
      contract_address: A.token,
      parent_address: "",
      std_interface_id: "0001",
    });
    expect(mint).toMatchObject({
      category: "token",
      sub_kind: "genesis_mint",
      from: A.alice,
      to: A.bob, // issueTo recipient; 400 stay in the contract, 600 go to Bob
      token_id: A.tokenId,
      token_address: A.token,
      amount: (1000n * E18).toString(),
      contract_event_index: -1,
    });
    expect(mint.payload["recipients"]).toEqual([{ address: A.bob, amount: (600n * E18).toString() }]);
    // The issued token is not reported twice; the dust ALPH paid out with it is.
    expect(payout).toMatchObject({
      from: A.token,
      to: A.bob,
      token_id: ALPH_TOKEN_ID,
      amount: "1000000000000000",
    });
  });

  it("attributes a plain deployment to its parent's dapp, and reports destruction", () => {
    expect(kinds(ofTx(events, 1))).toEqual(["contract/created/system*"]);
    expect(ofTx(events, 1)[0]).toMatchObject({ to: A.plain, with: A.parent, dapp_id: "testdapp" });
    expect(kinds(ofTx(events, 2))).toEqual(["contract/destroyed/system*"]);
    expect(ofTx(events, 2)[0]).toMatchObject({
      to: A.dead,
      contract_address: A.destroyedG0,
      contract_event_index: -2,
      dapp_id: "alephium",
    });
  });
});

describe("Ayin swaps block", () => {
  const events = run("ayin-swaps");

  it("classifies ALPH→USDT as a buy of the base token USDT with the price in ALPH", () => {
    const [buy] = ofTx(events, 0);
    expect(ofTx(events, 0)).toHaveLength(1); // the swapped USDT went back to the signer: no transfer
    expect(buy).toMatchObject({
      category: "dex",
      sub_kind: "buy",
      type: "swap",
      is_main: true,
      dapp_id: "ayin",
      from: A.alice,
      to: A.alice,
      with: A.poolAlphUsdt,
      token_id: A.usdtId,
      token_address: A.usdt,
      amount: "117658826",
      contract_address: A.poolAlphUsdt,
      contract_event_index: 2,
    });
    expect(buy!.payload).toMatchObject({
      token_in_id: ALPH_TOKEN_ID,
      token_out_id: A.usdtId,
      amount_in: "500000000000000000000",
      amount_out: "117658826",
      base_token_id: A.usdtId,
      quote_token_id: ALPH_TOKEN_ID,
      // 500e18 / 117658826, 18 fractional digits truncated (trailing zero trimmed)
      price: "4249574953263.59962150225772268",
      pool_inferred: false,
    });
  });

  it("classifies USDT→ALPH as a sell", () => {
    const [sell] = ofTx(events, 1);
    expect(sell).toMatchObject({ sub_kind: "sell", is_main: true, from: A.bob, amount: "50000000" });
    // 210e18 / 50e6
    expect(sell!.payload).toMatchObject({
      token_in_id: A.usdtId,
      token_out_id: ALPH_TOKEN_ID,
      price: "4200000000000",
    });
  });

  it("emits one event per hop plus a main multi-hop aggregate", () => {
    const tx2 = ofTx(events, 2);
    expect(kinds(tx2)).toEqual(["dex/sell/swap", "dex/buy/swap", "dex/swap/swap*"]);
    const [hop0, hop1, agg] = tx2 as [NormalizedEvent, NormalizedEvent, NormalizedEvent];
    // AYIN→ALPH in the ALPH/AYIN pool: AYIN is the base, 40 ALPH for 100 AYIN
    expect(hop0).toMatchObject({
      from: A.carol,
      to: A.router,
      token_id: A.ayinId,
      amount: (100n * E18).toString(),
    });
    expect(hop0.payload["price"]).toBe("0.4");
    expect(hop1).toMatchObject({ to: A.carol, token_id: A.usdtId, amount: "9400000" });
    expect(hop1.payload["price"]).toBe("4255319148936.170212765957446808");
    expect(agg).toMatchObject({
      from: A.carol,
      to: A.carol,
      token_id: A.usdtId,
      amount: "9400000",
      contract_address: "",
      contract_event_index: null,
      dapp_id: "ayin",
    });
    expect(agg.payload).toEqual({
      hops: 2,
      path: [A.poolAlphAyin, A.poolAlphUsdt],
      token_in_id: A.ayinId,
      token_out_id: A.usdtId,
      amount_in: (100n * E18).toString(),
      amount_out: "9400000",
      price: "10638297872340.425531914893617021", // 100e18 / 9.4e6
      tx_fee: feeOf("ayin-swaps", agg.tx_index),
    });
  });

  it("infers the pair tokens from the pool's contract output when no pool registry is given", () => {
    const inferred = run("ayin-swaps", makeContext({ pools: undefined }));
    expect(kinds(inferred)).toEqual(kinds(events));
    const [buy] = ofTx(inferred, 0);
    expect(buy).toMatchObject({ sub_kind: "buy", dapp_id: "ayin", token_id: A.usdtId, amount: "117658826" });
    expect(buy!.payload).toMatchObject({
      token0_id: ALPH_TOKEN_ID,
      token1_id: A.usdtId,
      pool_inferred: true,
    });
  });
});

describe("DEX pools block", () => {
  const events = run("dex-pools");

  it("decodes PairCreated (main) next to the pair's ContractCreated", () => {
    expect(kinds(ofTx(events, 0))).toEqual(["contract/created/system", "dex/pool_created/pair_created*"]);
    expect(ofTx(events, 0)[0]).toMatchObject({ to: A.pairP, with: A.factory, dapp_id: "ayin" });
    const created = ofTx(events, 0)[1]!;
    expect(created).toMatchObject({
      to: A.pairP,
      token_id: A.tokenY,
      contract_address: A.factory,
      dapp_id: "ayin",
    });
    expect(created.payload).toEqual({
      pool_address: A.pairP,
      token0_id: ALPH_TOKEN_ID,
      token1_id: A.tokenY,
      tx_fee: feeOf("dex-pools", 0),
    });
  });

  it("decodes Mint on a pool created earlier in the same block; amount = LP tokens", () => {
    const [mint] = ofTx(events, 1);
    expect(mint).toMatchObject({
      category: "dex",
      sub_kind: "add_liquidity",
      type: "mint",
      is_main: true,
      dapp_id: "ayin",
      token_id: A.pairPId,
      token_address: A.pairP,
      amount: (2236n * E18).toString(),
    });
    expect(mint!.payload).toMatchObject({
      amount0: (1000n * E18).toString(),
      amount1: (5000n * E18).toString(),
    });
  });

  it("infers an unregistered pool from its contract output (tokens minus its own LP token)", () => {
    const [sell] = ofTx(events, 2);
    expect(sell).toMatchObject({
      sub_kind: "sell",
      dapp_id: "unknown",
      token_id: A.tokenZ,
      amount: (20n * E18).toString(),
    });
    expect(sell!.payload).toMatchObject({
      token0_id: ALPH_TOKEN_ID,
      token1_id: A.tokenZ,
      price: "0.15",
      pool_inferred: true,
    });
  });

  it("falls back to a generic event when a Swap-shaped emitter has no pool evidence", () => {
    const [generic] = ofTx(events, 3);
    expect(ofTx(events, 3)).toHaveLength(1);
    expect(generic).toMatchObject({
      category: "contract",
      sub_kind: "event",
      type: "undecoded",
      is_main: true,
      dapp_id: "unknown",
      contract_address: A.notPoolR,
      contract_event_index: 2,
    });
    expect((generic!.payload["fields"] as unknown[]).length).toBe(6);
  });

  it("treats Mint on a pool nobody announced as an undecoded event", () => {
    const raw = loadFixture("dex-pools");
    raw.events = raw.events.filter((e) => e.eventIndex !== 0 || e.contractAddress !== A.factory);
    const [ev] = ofTx(normalizeBlock(raw, makeContext()).events, 1);
    expect(ev).toMatchObject({ category: "contract", sub_kind: "event", contract_event_index: 0 });
  });
});

describe("contract calls block", () => {
  const events = run("contract-calls");

  it("keeps undecoded events with their node fields, attributed by contract", () => {
    const tx0 = ofTx(events, 0);
    expect(kinds(tx0)).toEqual(["contract/event/undecoded*", "contract/event/undecoded"]);
    expect(tx0[0]).toMatchObject({ dapp_id: "dia-oracle", to: A.dia, contract_event_index: 1 });
    expect(tx0[1]).toMatchObject({
      dapp_id: "unknown",
      contract_address: A.unknownU,
      contract_event_index: 0,
    });
    expect(tx0[1]!.payload).toEqual({
      event_index: 0,
      fields: [
        { type: "U256", value: "7" },
        { type: "Bool", value: true },
      ],
    });
  });

  it("emits a contract call for a script tx without events", () => {
    const [call] = ofTx(events, 1);
    expect(call).toMatchObject({
      category: "contract",
      sub_kind: "call",
      is_main: true,
      dapp_id: "furnace",
    });
    expect(call).toMatchObject({ from: A.alice, to: A.furnace0 });
    // 45,000 gas × 1e11
    expect(call!.payload).toEqual({
      gas_amount: 45000,
      gas_price: "100000000000",
      fee: "4500000000000000",
      contracts: [A.furnace0],
      tx_fee: "4500000000000000",
    });
  });

  it("reports contract payouts to third parties; the token payout is main", () => {
    const tx2 = ofTx(events, 2);
    expect(kinds(tx2)).toEqual(["transfer/payout/alph", "transfer/payout/token*", "contract/call/script"]);
    expect(tx2.map((e) => [e.from, e.to, e.token_id, e.amount])).toEqual([
      [A.payerK, A.carol, ALPH_TOKEN_ID, "1000000000000000"],
      [A.payerK, A.carol, A.ayinId, (5n * E18).toString()],
      [A.alice, A.payerK, ALPH_TOKEN_ID, "0"],
    ]);
  });

  it("marks a failed script tx as main and still reports its fixed outputs", () => {
    const tx3 = ofTx(events, 3);
    expect(kinds(tx3)).toEqual(["contract/failed/script*", "transfer/send/alph"]);
    expect(tx3[0]!.payload).toEqual({
      gas_amount: 60000,
      gas_price: "100000000000",
      fee: "6000000000000000",
      tx_fee: "6000000000000000",
    });
    expect(tx3[1]).toMatchObject({ to: A.bob, amount: (2n * E18).toString() });
  });
});

describe("block-level rules", () => {
  it("yields nothing for a non-main-chain block", () => {
    expect(normalizeBlock(loadFixture("non-main-chain"), makeContext())).toEqual({
      events: [],
      offloaded: [],
    });
  });

  it("treats outputs of a genesis block as allocations, with no coinbase", () => {
    const raw = loadFixture("coinbase-only");
    raw.block.height = 0;
    const events = normalizeBlock(raw, makeContext()).events;
    expect(kinds(events)).toEqual(["transfer/genesis_allocation/alph*", "transfer/genesis_allocation/alph"]);
  });

  for (const name of FIXTURES.filter((f) => f !== "non-main-chain")) {
    it(`${name}: ids strictly increase, match eventId(), one main event per tx`, () => {
      const raw = loadFixture(name);
      const events = normalizeBlock(raw, makeContext()).events;
      const b = raw.block;
      events.forEach((e, i) => {
        expect(e.id).toBe(eventId(b.timestamp, raw.chainIndex, b.height, e.tx_index, e.event_index));
        if (i > 0) expect(e.id > events[i - 1]!.id).toBe(true);
        expect(e.amount).toMatch(/^\d+$/);
        expect(e.block_hash).toBe(b.hash);
        expect(e.tx_id).toBe(b.transactions[e.tx_index]!.unsigned.txId);
      });
      const conflicted = new Set(b.conflictedTxs ?? []);
      b.transactions.forEach((tx, txIndex) => {
        const mains = ofTx(events, txIndex).filter((e) => e.is_main);
        expect(mains).toHaveLength(conflicted.has(tx.unsigned.txId) ? 0 : 1);
        expect(ofTx(events, txIndex).map((e) => e.event_index)).toEqual(
          ofTx(events, txIndex).map((_, j) => j),
        );
      });
    });

    it(`${name}: deterministic and does not mutate its input`, () => {
      const raw = loadFixture(name);
      const before = JSON.stringify(raw);
      const first = normalizeBlock(raw, makeContext());
      expect(JSON.stringify(raw)).toBe(before);
      expect(normalizeBlock(structuredClone(raw), makeContext())).toEqual(first);
    });
  }
});

describe("payload offload", () => {
  // The DIA event's payload, as the normalizer builds it (the tx's main event: it carries the fee).
  const diaPayload = {
    event_index: 1,
    fields: [
      { type: "ByteVec", value: "4254432f555344" },
      { type: "U256", value: "6712345000000" },
      { type: "U256", value: "1718200075" },
    ],
    tx_fee: feeOf("contract-calls", 0),
  };
  const size = Buffer.byteLength(JSON.stringify(diaPayload));
  const diaOf = (max: number) => {
    const res = normalizeBlock(loadFixture("contract-calls"), makeContext({ maxPayloadBytes: max }));
    return { res, dia: ofTx(res.events, 0)[0]! };
  };

  it("keeps a payload exactly at the limit", () => {
    const { dia } = diaOf(size);
    expect(dia.payload).toEqual(diaPayload);
    expect(dia.payload_ref).toBeNull();
  });

  it("offloads a payload one byte over the limit under a deterministic ref", () => {
    const { res, dia } = diaOf(size - 1);
    expect(dia.payload).toEqual({});
    expect(dia.payload_ref).toBe(dia.id);
    expect(res.offloaded.find((o) => o.ref === dia.id)).toEqual({
      ref: dia.id,
      event_id: dia.id,
      payload: diaPayload,
    });
    // Smaller payloads of the same block stay inline.
    const coinbase = res.events[res.events.length - 1]!;
    expect(coinbase.payload_ref).toBeNull();
    expect(res.offloaded.every((o) => res.events.some((e) => e.payload_ref === o.ref))).toBe(true);
  });
});
