/**
 * Every deployed contract generation the mainnet has, at its real address, through the pure normalizer with the
 * built-in contract list: the three Token Furnace generations, Chain Reaction's V3 game copies and their factory's
 * re-emits (counted once), the v1 factory, the guessing rooms' map entries, MyOnion's other contracts and
 * upgrade events, and Linx lending. Blocks are shaped like the node's JSON (test/fixtures/normalize/dapp-blocks.ts);
 * expectations are computed from the inputs each case chose.
 */
import { binToHex, contractIdFromAddress } from "@alephium/web3";
import { describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID, type NormalizedEvent, type RawBlock } from "../../lib/chain/types.ts";
import {
  createDappBook,
  createDecoderBook,
  extractContractDapps,
  extractContractKinds,
  KNOWN_DAPP_CONTRACTS,
} from "../../pipeline/normalize/dapps.ts";
import { createMarketBook, extractMarkets } from "../../pipeline/normalize/markets.ts";
import { normalizeBlock } from "../../pipeline/normalize/normalize.ts";
import { createPoolBook } from "../../pipeline/normalize/pools.ts";
import { addr, block, CREATED_G0, caddr, cid, ev, tx } from "../fixtures/normalize/dapp-blocks.ts";

const ALICE = addr("alice");
const BOB = addr("bob");
const idOf = (address: string) => binToHex(contractIdFromAddress(address));
const hex = (s: string) => Buffer.from(s, "utf8").toString("hex");

/** Normalizes blocks in order as the normalize processor does: what a block makes known comes first. */
function runAll(blocks: RawBlock[]): NormalizedEvent[] {
  const dapps = createDappBook(KNOWN_DAPP_CONTRACTS);
  const decoders = createDecoderBook(KNOWN_DAPP_CONTRACTS);
  const markets = createMarketBook();
  const out: NormalizedEvent[] = [];
  for (const raw of blocks) {
    dapps.add(extractContractDapps(raw, dapps, decoders));
    decoders.add(extractContractKinds(raw, decoders));
    out.push(
      ...normalizeBlock(raw, {
        dapps,
        decoders,
        markets,
        pools: createPoolBook(),
        maxPayloadBytes: 100_000,
      }).events,
    );
    // What the processor does after a block: its markets are known to later blocks.
    markets.add(extractMarkets(raw, decoders));
  }
  return out;
}
const triple = (e: NormalizedEvent) => `${e.category}/${e.sub_kind}/${e.type}`;
const ofTx = (events: NormalizedEvent[], t: ReturnType<typeof tx>) =>
  events.filter((e) => e.tx_id === t.unsigned.txId);
const decoded = (events: NormalizedEvent[]) =>
  events.filter((e) => e.contract_event_index !== null && e.contract_event_index >= 0);

describe("the built-in list", () => {
  const rows = KNOWN_DAPP_CONTRACTS;

  it("holds every deployed address of DAPPS §3 once, each code hash 32 bytes", () => {
    const addresses = rows.map((r) => r.contract_address);
    expect(new Set(addresses).size).toBe(addresses.length);
    for (const r of rows)
      if (r.code_hash !== undefined) expect(r.code_hash, r.label).toMatch(/^[0-9a-f]{64}$/);
    const byKind = (kind: string) => rows.filter((r) => r.decoder === kind).map((r) => r.contract_address);
    // Furnace generations 1 (2024-12), 2 (2025-01) and 3, four groups each.
    expect(byKind("furnace")).toEqual([
      "2B79zGi87FUaSKpVGJuh86AwoTEXFPVi7yYMUHcEdt5s5",
      "27AS79Wh4LRAJrSW7PuosCDLTPdKHAyrnZi85ogS5KPRA",
      "23jbXcoQnEpDM9boLPviMcNGdkumaR6K4o74j9vzNNHi1",
      "29sbr7cD11Xw29QA9GkPK3jdsfHMVaK18MES7V1bCryCE",
      "27DE37cfLqs7Ejb4dAFK2sPdk9xvZdkTNGv7GtV9rtmB5",
      "vFkEpbPEEAgdVBxNjkDgCeD32jN9EhzAoYWFGankvKWG",
      "tjAf88iRu5wyELRRFoPQjwxxLMsbM6qHgboJzKR6TV45",
      "wVbuh9X3eQTRBjNbXp2Uo6aL672R1hgMS3CNH5WJgJUz",
      "21ekPmzVCwV3fH1XmajtCVWjnDsLxHt14PWdwodk16Zyh",
      "21toXY23zRXeTKZnEKtfVMCzM3h8kZhrrJV3fMf31VoiY",
      "28xL678QAegTFSLJNPmCYuZ9cs2ra22mHYoKyTHCXQAVF",
      "26MPtth6JVpNMV4EWFUDyrBPMQWpVfSUWPZNE9Kqvymw8",
    ]);
    // The current generation's contract ids (§2.1), in group order: the id's last byte is the group.
    expect(byKind("furnace").slice(8).map(idOf)).toEqual([
      "6771655b9d0e0aecdbd0d886a5dffd903c174e01693e3deaf3631d87e671ac00",
      "6b0b1214c73dc7678e08bf89c755446426a3c35c984ed7258e5ba068acd84f01",
      "d3f42d7825e7870a176a038f588e97f366b7c002b7ed18c7ba737a002fd99d02",
      "ad49c79625073aceba4519532e2eecbefc8547e2722e6cd56e072af45622fd03",
    ]);
    expect(new Set(rows.filter((r) => r.decoder === "furnace").map((r) => r.code_hash)).size).toBe(3);
    expect(byKind("chainreaction-v1-factory")).toEqual(["ygkPHaAVFB7jVwDZjb3VZgPTuC24rto5YRfHR84SKFEP"]);
    expect(byKind("chainreaction-v2")).toEqual(["27td2f29Ub5z6hJcUwhXwqsfVVpoit6cWkz8SkksqGNYo"]);
    expect(byKind("linx-lending")).toEqual(["vQcfta4Mm32L7Xsb7tYF2rrR76JWxjNv3oia8GPK6x71"]);
    // Ten Wormhole contracts, every one with its artifact's code hash.
    const wormhole = rows.filter((r) => r.dapp_id === "wormhole");
    expect(wormhole.length).toBeGreaterThanOrEqual(10);
    for (const r of wormhole) expect(r.code_hash, r.label).toBeDefined();
    // Nine MyOnion contracts.
    expect(rows.filter((r) => r.dapp_id === "myonion")).toHaveLength(9);
  });
});

describe("Token Furnace generations", () => {
  const token = cid("burned-token");
  const gen1 = "27AS79Wh4LRAJrSW7PuosCDLTPdKHAyrnZi85ogS5KPRA";
  const gen2 = "vFkEpbPEEAgdVBxNjkDgCeD32jN9EhzAoYWFGankvKWG";
  const t1 = tx("gen1-burn", { from: "alice", script: true });
  const t2 = tx("gen2-burn", { from: "alice", script: true });
  const burned = (t: ReturnType<typeof tx>, furnace: string, id: string) =>
    ev(t, furnace, 0, [
      ["Address", ALICE],
      ["ByteVec", id],
      ["U256", "42"],
      ["Bool", false],
      ["U256", "1735000000000"],
    ]);
  const events = runAll([block("gens", [t1, t2], [burned(t1, gen1, token), burned(t2, gen2, hex(token))])]);

  it("decodes generation 1's raw id and generation 2's hex text as the same burn, of dapp furnace", () => {
    for (const [t, encoding, furnace] of [
      [t1, "raw", gen1],
      [t2, "text", gen2],
    ] as const) {
      const [e] = decoded(ofTx(events, t));
      expect(triple(e!)).toBe("token/burn/furnace_burn");
      expect(e).toMatchObject({ dapp_id: "furnace", token_id: token, amount: "42", to: furnace });
      expect(e!.payload).toMatchObject({ token_burned_encoding: encoding, group: 1 });
    }
  });
});

describe("Chain Reaction V3 games, the v1 factory and the guessing rooms", () => {
  const factory = "27td2f29Ub5z6hJcUwhXwqsfVVpoit6cWkz8SkksqGNYo";
  const v1Factory = "ygkPHaAVFB7jVwDZjb3VZgPTuC24rto5YRfHR84SKFEP";
  const hub = "23k3Jcc83wAW8G5nmwG3tcMmrEyxKmvSa7thxb24XWiy5";
  const game = caddr("v3-game-1");
  const gameId = idOf(game);
  const token = cid("staked-token");
  const room = caddr("room-1");
  const entry = caddr("room-1-entry-alice");
  const tCreate = tx("cr-create", { from: "alice", script: true });
  const tBoth = tx("cr-join", { from: "bob", script: true });
  const tCopy = tx("cr-copy-only", { from: "alice", script: true });
  const tFactory = tx("cr-factory-only", { from: "alice", script: true });
  const tBad = tx("cr-copy-bad", { from: "alice", script: true });
  const tV1 = tx("cr-v1-factory", { from: "bob", script: true });
  const tRoom = tx("room-create", { from: "alice", script: true });
  const tJoin = tx("room-join", { from: "alice", script: true });
  const tEnd = tx("room-end", { from: "alice", script: true });
  const joined = [
    ["U256", "3"],
    ["Address", BOB],
    ["U256", "1000"],
    ["U256", "5000"],
    ["U256", "2"],
    ["U256", "10"],
    ["ByteVec", token],
  ] as [string, string][];
  const events = runAll([
    block(
      "cr-1",
      [tCreate],
      [
        // copyCreateContract: the game's ContractCreated has no parent; the factory's NewGameCreated names it.
        ev(tCreate, CREATED_G0, -1, [
          ["Address", game],
          ["ByteVec", ""],
        ]),
        ev(tCreate, factory, 0, [
          ["ByteVec", gameId],
          ["U256", "7"],
          ["Bool", true],
          ["ByteVec", token],
        ]),
      ],
    ),
    block(
      "cr-2",
      [tBoth, tCopy, tFactory, tBad, tV1, tRoom, tJoin, tEnd],
      [
        ev(tBoth, game, 1, joined),
        ev(tBoth, factory, 2, [["ByteVec", gameId], ...joined]),
        ev(tCopy, game, 4, [
          ["Address", ALICE],
          ["U256", "99"],
        ]),
        ev(tFactory, factory, 5, [
          ["ByteVec", gameId],
          ["Address", ALICE],
          ["U256", "98"],
        ]),
        ev(tBad, game, 1, joined.slice(0, 6)),
        ev(tV1, v1Factory, 2, [
          ["ByteVec", cid("v1-game")],
          ["U256", "1"],
          ["Address", BOB],
          ["U256", "300"],
          ["U256", "900"],
          ["U256", "3"],
          ["U256", "0"],
        ]),
        ev(tRoom, CREATED_G0, -1, [
          ["Address", room],
          ["Address", hub],
        ]),
        ev(tJoin, CREATED_G0, -1, [
          ["Address", entry],
          ["Address", room],
        ]),
        ev(tJoin, room, 0, [
          ["ByteVec", idOf(room)],
          ["Address", ALICE],
          ["U256", "17"],
        ]),
        ev(tEnd, CREATED_G0, -2, [["Address", entry]]),
      ],
    ),
  ]);

  it("learns a V3 game from its factory's NewGameCreated: its dapp and its kind", () => {
    const dapps = createDappBook(KNOWN_DAPP_CONTRACTS);
    const decoders = createDecoderBook(KNOWN_DAPP_CONTRACTS);
    const raw = block(
      "learn",
      [tCreate],
      [
        ev(tCreate, factory, 0, [
          ["ByteVec", gameId],
          ["U256", "7"],
          ["Bool", true],
          ["ByteVec", token],
        ]),
      ],
    );
    expect(extractContractKinds(raw, decoders)).toEqual([
      { contract_address: game, decoder: "chainreaction-v3-game" },
    ]);
    expect(extractContractDapps(raw, dapps, decoders)).toEqual([
      { contract_address: game, dapp_id: "chainreaction" },
    ]);
  });

  it("counts a game event once when the copy emits it and the factory re-emits it", () => {
    const games = ofTx(events, tBoth).filter((e) => e.category === "game");
    expect(games).toHaveLength(1);
    expect(games[0]).toMatchObject({
      contract_address: factory,
      sub_kind: "player_joined",
      to: BOB,
      token_id: token,
      amount: "1000",
    });
    expect(games[0]!.payload).toMatchObject({ emitter: "factory_v2", game_id: gameId, chain_id: "3" });
    // Neither is left as a generic event.
    expect(ofTx(events, tBoth).filter((e) => e.type === "undecoded")).toEqual([]);
  });

  it("decodes a copy's event the factory did not re-emit, and the factory's alone, once each", () => {
    const [copy] = ofTx(events, tCopy).filter((e) => e.category === "game");
    expect(copy).toMatchObject({
      contract_address: game,
      contract_event_index: 4,
      sub_kind: "pot_boosted",
      dapp_id: "chainreaction",
      amount: "99",
    });
    expect(copy!.payload).toMatchObject({ emitter: "game_v3", game_id: gameId, version: 2 });
    const factoryOnly = ofTx(events, tFactory).filter((e) => e.category === "game");
    expect(factoryOnly).toHaveLength(1);
    expect(factoryOnly[0]).toMatchObject({ sub_kind: "pot_boosted", amount: "98" });
  });

  it("refuses a copy's event of the wrong layout, naming the copy's own event index", () => {
    const [bad] = decoded(ofTx(events, tBad));
    expect(triple(bad!)).toBe("contract/event/undecoded");
    expect(bad!.payload).toMatchObject({ decoder: "chainreaction-v3-game" });
    expect(String(bad!.payload.decode_error)).toContain("PlayerJoined (event 1) expects 7 fields");
  });

  it("decodes the v1 factory's layouts (no fees, no token)", () => {
    const [e] = ofTx(events, tV1).filter((x) => x.category === "game");
    expect(e).toMatchObject({ sub_kind: "player_joined", to: BOB, amount: "300", dapp_id: "chainreaction" });
    expect(e!.payload).toMatchObject({
      emitter: "factory_v1",
      version: 1,
      game_id: cid("v1-game"),
      pot: "900",
    });
  });

  it("gives a room's map entries the room's dapp, created and destroyed", () => {
    const created = ofTx(events, tJoin).find((e) => e.sub_kind === "created");
    expect(created).toMatchObject({ dapp_id: "chainreaction", to: entry, with: room });
    expect(ofTx(events, tJoin).find((e) => e.sub_kind === "room_joined")).toMatchObject({
      dapp_id: "chainreaction",
    });
    expect(ofTx(events, tEnd).find((e) => e.sub_kind === "destroyed")).toMatchObject({
      dapp_id: "chainreaction",
      to: entry,
    });
  });
});

describe("MyOnion's other contracts and upgrade events", () => {
  const router = "29c4EEH1aZr5HDumULCFp1eJN1bWftojCGepqTpovyQhd";
  const launcher = "28P3FfodKZqBQ9zGhgnd86WUfDqd4WLqSyZBmXFHgJFZq";
  const fees = "25L8T5dLwEuhbKEjEz3bRs4KEZ3Dv8WogncQAe5WSYQto";
  const comments = "262sFbZfqxaUDWnsv4xQUndXrkEPNc24dwoLCi9adBJS3";
  const profiles = "28C1nUP4vy3pJRHQzL8R6FrFBJ45RHrA3TRK2Rrm4gJxX";
  const token = cid("onion-meme");
  const ts = ["migrate", "meta", "fee", "comment", "profile", "bad"].map((l) =>
    tx(`mo-${l}`, { from: "alice", script: true }),
  );
  const [tMigrate, tMeta, tFee, tComment, tProfile, tBad] = ts as [
    ReturnType<typeof tx>,
    ...ReturnType<typeof tx>[],
  ];
  const events = runAll([
    block("mo", ts, [
      ev(tMigrate, router, 3, [
        ["Address", ALICE],
        ["ByteVec", "0102"],
      ]),
      ev(tMeta!, launcher, 7, [
        ["ByteVec", token],
        ["Address", ALICE],
        ["ByteVec", hex("ipfs://logo")],
        ["ByteVec", hex("a meme")],
        ["ByteVec", hex("{}")],
      ]),
      ev(tFee!, fees, 0, [
        ["Address", router],
        ["Address", BOB],
        ["Address", ALICE],
        ["U256", "1234"],
      ]),
      ev(tComment!, comments, 5, [
        ["ByteVec", token],
        ["Address", ALICE],
        ["U256", "9"],
        ["ByteVec", hex("gm")],
      ]),
      ev(tProfile!, profiles, 5, [
        ["Address", ALICE],
        ["ByteVec", ""],
        ["ByteVec", hex("alice")],
        ["ByteVec", hex("hi")],
        ["U256", "0"],
        ["Address", BOB],
        ["ByteVec", ""],
        ["ByteVec", ""],
      ]),
      ev(tBad!, profiles, 5, [["Address", ALICE]]),
    ]),
  ]);

  it("decodes each with its exact layout, every field in the payload by name", () => {
    const one = (t: ReturnType<typeof tx>) => decoded(ofTx(events, t))[0]!;
    expect(triple(one(tMigrate))).toBe("contract/migration/upgrade");
    expect(one(tMigrate).payload).toMatchObject({
      event: "MigrateApply",
      stage: "apply",
      owner: ALICE,
      changeCode: "0102",
    });
    expect(triple(one(tMeta!))).toBe("launchpad/token_updated/launch");
    expect(one(tMeta!)).toMatchObject({ token_id: token, dapp_id: "myonion" });
    expect(one(tMeta!).payload).toMatchObject({ description_text: "a meme", logo_text: "ipfs://logo" });
    expect(one(tFee!)).toMatchObject({ sub_kind: "fee_deposited", amount: "1234", to: router });
    expect(one(tComment!).payload).toMatchObject({ comment_text: "gm", commentId: "9" });
    expect(one(tProfile!)).toMatchObject({ sub_kind: "profile_created", to: BOB });
    expect(one(tProfile!).payload).toMatchObject({ name_text: "alice", referrer: BOB });
  });

  it("refuses another layout with a decode error, never a guess", () => {
    const bad = decoded(ofTx(events, tBad!))[0]!;
    expect(triple(bad)).toBe("contract/event/undecoded");
    expect(bad.payload).toMatchObject({ decoder: "myonion-profiles" });
    expect(String(bad.payload.decode_error)).toContain("CreateProfile (event 5) expects 8 fields");
  });
});

describe("Linx lending", () => {
  const linx = "vQcfta4Mm32L7Xsb7tYF2rrR76JWxjNv3oia8GPK6x71";
  const market = cid("linx-market-1");
  const loan = cid("loan-token");
  const collateral = cid("collateral");
  const ts = ["supply-before", "market", "supply", "liquidate", "bad"].map((l) =>
    tx(`linx-${l}`, { from: "alice", script: true }),
  );
  const [tEarly, tMarket, tSupply, tLiq, tBad] = ts as ReturnType<typeof tx>[];
  const later = ["borrow", "collateral", "interest", "unknown"].map((l) =>
    tx(`linx-${l}`, { from: "alice", script: true }),
  );
  const [tBorrow, tColl, tInterest, tUnknown] = later as ReturnType<typeof tx>[];
  const supply = (t: ReturnType<typeof tx>, id: string) =>
    ev(t, linx, 10, [
      ["ByteVec", id],
      ["Address", ALICE],
      ["Address", BOB],
      ["U256", "5000"],
      ["U256", "4990"],
    ]);
  const events = runAll([
    block("linx", ts, [
      // A supply of the market in a tx before the one that creates it: the market is not known to it yet.
      supply(tEarly!, market),
      ev(tMarket!, linx, 4, [
        ["ByteVec", market],
        ["ByteVec", cid("market-contract")],
        ["ByteVec", loan],
        ["ByteVec", collateral],
        ["ByteVec", cid("oracle")],
        ["ByteVec", cid("irm")],
        ["U256", "800000000000000000"],
      ]),
      supply(tSupply!, market),
      ev(tLiq!, linx, 16, [
        ["ByteVec", market],
        ["Address", ALICE],
        ["Address", BOB],
        ["U256", "10"],
        ["U256", "9"],
        ["U256", "12"],
        ["U256", "0"],
        ["U256", "0"],
      ]),
      ev(tBad!, linx, 10, [
        ["ByteVec", market],
        ["Address", ALICE],
      ]),
    ]),
    block("linx-later", later, [
      ev(tBorrow!, linx, 12, [
        ["ByteVec", market],
        ["Address", ALICE],
        ["Address", ALICE],
        ["Address", BOB],
        ["U256", "700"],
        ["U256", "690"],
      ]),
      ev(tColl!, linx, 14, [
        ["ByteVec", market],
        ["Address", ALICE],
        ["Address", ALICE],
        ["U256", "9000"],
      ]),
      ev(tInterest!, linx, 17, [
        ["ByteVec", market],
        ["U256", "3"],
        ["U256", "41"],
        ["U256", "2"],
      ]),
      supply(tUnknown!, cid("linx-market-never-created")),
    ]),
  ]);
  const one = (t: ReturnType<typeof tx>) => decoded(ofTx(events, t))[0]!;

  it("decodes markets, supplies and liquidations with the market's loan token and the amounts", () => {
    expect(triple(one(tMarket!))).toBe("lending/market_created/linx_lending");
    expect(one(tMarket!)).toMatchObject({ token_id: loan, dapp_id: "linx" });
    expect(one(tMarket!).payload).toMatchObject({ market_id: market, collateral_token_id: collateral });
    expect(triple(one(tSupply!))).toBe("lending/supply/linx_lending");
    expect(one(tSupply!)).toMatchObject({ from: ALICE, to: BOB, token_id: loan, amount: "5000" });
    expect(one(tSupply!).payload).toMatchObject({ market_id: market, assets: "5000", shares: "4990" });
    expect(one(tSupply!).payload).not.toHaveProperty("market_unknown");
    expect(one(tLiq!)).toMatchObject({ to: BOB, token_id: loan, amount: "10" });
    expect(one(tLiq!).payload).toMatchObject({
      borrower: BOB,
      repaidAssets: "10",
      seizedAssets: "12",
      seized_token_id: collateral,
    });
    expect(one(tLiq!).is_main).toBe(true);
  });

  it("gives a later block's events their market's loan or collateral token", () => {
    expect(one(tBorrow!)).toMatchObject({ to: BOB, token_id: loan, amount: "700" });
    expect(triple(one(tColl!))).toBe("lending/add_collateral/linx_lending");
    expect(one(tColl!)).toMatchObject({ to: ALICE, token_id: collateral, amount: "9000" });
    expect(one(tInterest!)).toMatchObject({ token_id: loan, amount: "41" });
  });

  it("attributes no amount to an event of a market it never saw created", () => {
    for (const t of [tEarly!, tUnknown!]) {
      expect(one(t)).toMatchObject({ token_id: ALPH_TOKEN_ID, amount: "0", to: BOB });
      expect(one(t).payload).toMatchObject({ market_unknown: true, assets: "5000" });
    }
  });

  it("refuses a supply of two fields", () => {
    const bad = decoded(ofTx(events, tBad!))[0]!;
    expect(bad.payload).toMatchObject({ decoder: "linx-lending" });
    expect(String(bad.payload.decode_error)).toContain("Supply (event 10) expects 5 fields");
  });
});
