/**
 * Dapp decoders of the normalizer on blocks shaped like the node's JSON (test/fixtures/normalize/dapp-blocks.ts).
 * Expected values are computed here from the inputs each test chose, never taken from the decoder's output.
 */
import { binToHex, bs58, codec, contractIdFromAddress, subContractId } from "@alephium/web3";
import { describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID, type NormalizedEvent, type RawBlock } from "../../lib/chain/types.ts";
import {
  createDecoderBook,
  createStaticDappBook,
  extractContractKinds,
  KNOWN_DAPP_CONTRACTS,
} from "../../pipeline/normalize/dapps.ts";
import { scriptInstrs } from "../../pipeline/normalize/decoders/alphbanx.ts";
import { type NormalizeContext, normalizeBlock } from "../../pipeline/normalize/normalize.ts";
import { createPoolBook, KNOWN_FACTORIES } from "../../pipeline/normalize/pools.ts";
import {
  addr,
  addressConst,
  block,
  bytesConst,
  CREATED_G0,
  caddr,
  cid,
  encodeScript,
  ev,
  genAsset,
  genContract,
  tx,
} from "../fixtures/normalize/dapp-blocks.ts";

const E18 = 10n ** 18n;
const ALICE = addr("alice");
const BOB = addr("bob");
const CAROL = addr("carol");
const M = {
  diaPrice: "285zrkZTPpUCpjKg9E3z238VmpUBQEAbESGsJT6yX7Rod",
  diaRandom: "v1v4cBXP9L7M9ryZZCx7tuXuNb9pnDLGb3JJkPBpbR1Z",
  furnace0: "21ekPmzVCwV3fH1XmajtCVWjnDsLxHt14PWdwodk16Zyh",
  furnace1: "21toXY23zRXeTKZnEKtfVMCzM3h8kZhrrJV3fMf31VoiY",
  crV1: "xGsqXrYMRGgamWuMLRKadr3Vpay5thcGDK5e5QvZ432f",
  crV2: "27td2f29Ub5z6hJcUwhXwqsfVVpoit6cWkz8SkksqGNYo",
  hub: "23k3Jcc83wAW8G5nmwG3tcMmrEyxKmvSa7thxb24XWiy5",
  elexium: "22oTtDJEMjNc9QAdmcZarnEzgkAooJp9gZy7RYBisniR5",
  deadrare: "xtUinNqtQyEnZHWqgbWVpvdJbZZTbywh6BM6iNkvEgCF",
  launcher: "28P3FfodKZqBQ9zGhgnd86WUfDqd4WLqSyZBmXFHgJFZq",
  router: "29c4EEH1aZr5HDumULCFp1eJN1bWftojCGepqTpovyQhd",
  governance: "uvVP76UfwQ1fmPTZWojUGYY2tKyuKe7Br76KDecfMbjM",
  bridge: "23Fj7xr1pxWfYLixz3aBC3u5dUJVpAjXArbpiYWxeGjQT",
  bridgeId: "7f42f8e21128e70c7a30098a32c5c388de7eb4ffc6ef7dd86f72e8e11acc4800",
  borrower: "28QGP95rnmZYKRBEsBeGBTdLHetoSE9nxEatVrtuN2bEF",
  loanManager: "tpxjsWJSaUh5i7XzNAsTWMRtD9QvDTV9zmMNeHHS6jQB",
  stake: "28Mhs2tczfKJDUq7seTzaRctZXUhqkMzikrehxAHy2kVu",
  auction: "29YL53teVrvK2o4P2cVej8aCGN7iQS8mE86bgxA2oFWa3",
  abd: "c7d1dab489ee40ca4e6554efc64a64e73a9f0ddfdec9e544c82c1c6742ccc500",
  abx: "9b3070a93fd5127d8c39561870432fdbc79f598ca8dbf2a3398fc100dfd45f00",
  usdtEth: "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00",
} as const;
const idOfAddress = (label: string) => cid(label);
const utf8Hex = (s: string) => Buffer.from(s, "utf8").toString("hex");

function context(over: Partial<NormalizeContext> = {}): NormalizeContext {
  return {
    dapps: createStaticDappBook(KNOWN_DAPP_CONTRACTS),
    decoders: createDecoderBook(KNOWN_DAPP_CONTRACTS),
    pools: createPoolBook(),
    maxPayloadBytes: 100_000,
    ...over,
  };
}

function run(raw: RawBlock, ctx = context()): NormalizedEvent[] {
  return normalizeBlock(raw, ctx).events;
}

/** The events of one tx (by builder label order: tx index). */
const ofTx = (events: NormalizedEvent[], txIndex: number) => events.filter((e) => e.tx_index === txIndex);
const triple = (e: NormalizedEvent) => `${e.category}/${e.sub_kind}/${e.type}`;
const mainOf = (events: NormalizedEvent[], txIndex: number) => ofTx(events, txIndex).find((e) => e.is_main)!;
const byContract = (events: NormalizedEvent[], address: string) =>
  events.filter(
    (e) => e.contract_address === address && e.contract_event_index !== null && e.contract_event_index >= 0,
  );

/** Asserts the generic event of a refused layout. */
function expectDecodeError(e: NormalizedEvent | undefined, decoder: string, mentions: string) {
  expect(e).toBeDefined();
  expect(triple(e!)).toBe("contract/event/undecoded");
  expect(e!.payload.decoder).toBe(decoder);
  expect(String(e!.payload.decode_error)).toContain(mentions);
  expect(Array.isArray(e!.payload.fields)).toBe(true);
}

describe("DIA oracles", () => {
  const t0 = tx("dia-price", { from: "alice", script: true, gen: [genContract(M.diaPrice, E18)] });
  const t1 = tx("dia-random", { from: "bob", script: true, gen: [genContract(M.diaRandom, E18)] });
  const t2 = tx("dia-admin", { from: "alice", script: true });
  const t3 = tx("dia-bad", { from: "alice", script: true });
  const randomness = "ab".repeat(32);
  const signature = "cd".repeat(48);
  const raw = block(
    "dia",
    [t0, t1, t2, t3],
    [
      ev(t0, M.diaPrice, 1, [
        ["ByteVec", utf8Hex("BTC/USD")],
        ["U256", "6712345000000"],
        ["U256", "1718200075"],
      ]),
      ev(t1, M.diaRandom, 1, [
        ["U256", "4242"],
        ["ByteVec", randomness],
        ["ByteVec", signature],
      ]),
      ev(t2, M.diaPrice, 0, [["Address", CAROL]]),
      ev(t3, M.diaPrice, 1, [
        ["ByteVec", utf8Hex("ETH/USD")],
        ["U256", "1"],
      ]),
      ev(t3, M.diaRandom, 1, [
        ["ByteVec", "00"],
        ["ByteVec", randomness],
        ["ByteVec", signature],
      ]),
      ev(t3, M.diaPrice, 7, [["U256", "1"]]),
    ],
  );
  const events = run(raw);

  it("decodes a price update (key text, value, 8 decimals, time in ms) as the tx's main event", () => {
    const e = mainOf(events, 0);
    expect(triple(e)).toBe("oracle/price_update/oracle_update");
    expect(e).toMatchObject({
      dapp_id: "dia-oracle",
      from: ALICE,
      to: M.diaPrice,
      token_id: ALPH_TOKEN_ID,
      amount: "0",
    });
    expect(e.contract_event_index).toBe(1);
    expect(e.payload).toMatchObject({
      key: "BTC/USD",
      key_hex: utf8Hex("BTC/USD"),
      value: "6712345000000",
      decimals: 8,
      oracle_timestamp: 1718200075 * 1000,
    });
  });

  it("decodes a randomness round and an admin change", () => {
    const r = mainOf(events, 1);
    expect(triple(r)).toBe("oracle/randomness/oracle_update");
    expect(r.payload).toMatchObject({ round: "4242", randomness, signature });
    const a = mainOf(events, 2);
    expect(triple(a)).toBe("oracle/admin_changed/oracle_update");
    expect(a.to).toBe(CAROL);
  });

  it("keeps mismatched layouts generic with decode_error, unknown indexes generic without", () => {
    const [price, random, unknown] = byContract(ofTx(events, 3), M.diaPrice)
      .concat(byContract(ofTx(events, 3), M.diaRandom))
      .sort((a, b) => a.event_index - b.event_index);
    expectDecodeError(price, "dia-price", "OracleUpdate");
    expect(String(price!.payload.decode_error)).toContain("3 fields [ByteVec, U256, U256] but got 2 fields");
    expectDecodeError(random, "dia-random", "[U256, ByteVec, ByteVec]");
    expect(triple(unknown!)).toBe("contract/event/undecoded");
    expect(unknown!.payload.decode_error).toBeUndefined();
  });
});

describe("Token Furnace", () => {
  const token = cid("burned-token");
  const nft = caddr("burner-nft-1", 1);
  // Text form: the ASCII of the 64-char hex id, 128 hex chars on the wire.
  const t0 = tx("burn-text", { from: "alice", script: true });
  const t1 = tx("burn-raw-nft", { from: "bob", script: true });
  const t2 = tx("burn-bad", { from: "alice", script: true });
  const raw = block(
    "furnace",
    [t0, t1, t2],
    [
      ev(t0, M.furnace0, 0, [
        ["Address", ALICE],
        ["ByteVec", utf8Hex(token)],
        ["U256", "777000"],
        ["Bool", false],
        ["U256", "1718299999123"],
      ]),
      ev(t1, CREATED_G0, -1, [
        ["Address", nft],
        ["Address", M.furnace1],
        ["ByteVec", ""],
      ]),
      ev(t1, M.furnace1, 0, [
        ["Address", BOB],
        ["ByteVec", token],
        ["U256", "5"],
        ["Bool", true],
        ["U256", "1718299999456"],
      ]),
      ev(t2, M.furnace0, 0, [
        ["Address", ALICE],
        ["ByteVec", "abcd"],
        ["U256", "5"],
        ["Bool", false],
        ["U256", "1"],
      ]),
      ev(t2, M.furnace0, 0, [
        ["Address", ALICE],
        ["ByteVec", token],
        ["U256", "5"],
        ["Bool", false],
      ]),
    ],
  );
  const events = run(raw);

  it("decodes the text form without NFT", () => {
    const e = mainOf(events, 0);
    expect(triple(e)).toBe("token/burn/furnace_burn");
    expect(e).toMatchObject({
      dapp_id: "furnace",
      from: ALICE,
      to: M.furnace0,
      with: "",
      token_id: token,
      amount: "777000",
    });
    expect(e.payload).toEqual({
      burner: ALICE,
      token_id: token,
      amount: "777000",
      nft: false,
      nft_address: "",
      burn_timestamp: 1718299999123,
      group: 0,
      token_burned_encoding: "text",
      tx_fee: (50000n * 100000000000n).toString(),
    });
  });

  it("decodes the raw form with the burner NFT created in the same tx (group of the furnace)", () => {
    const e = mainOf(events, 1);
    expect(triple(e)).toBe("token/burn/furnace_burn");
    expect(e).toMatchObject({ from: BOB, with: nft, token_id: token, amount: "5" });
    expect(e.payload).toMatchObject({ nft: true, nft_address: nft, group: 1, token_burned_encoding: "raw" });
    expect(extractContractKinds(raw, createDecoderBook(KNOWN_DAPP_CONTRACTS))).toEqual([
      { contract_address: nft, decoder: "furnace-nft" },
    ]);
  });

  it("refuses a tokenBurned in neither form and a short layout", () => {
    const [neither, short] = byContract(ofTx(events, 2), M.furnace0);
    expectDecodeError(neither, "furnace", "tokenBurned");
    expectDecodeError(short, "furnace", "but got 4 fields");
  });
});

describe("Chain Reaction", () => {
  const gameId = cid("cr-game-7");
  const token = cid("cr-token");
  const t0 = tx("cr-v2", { from: "alice", script: true });
  const t1 = tx("cr-v1", { from: "bob", script: true });
  const t2 = tx("cr-bad", { from: "bob", script: true });
  const raw = block(
    "cr",
    [t0, t1, t2],
    [
      ev(t0, M.crV2, 0, [
        ["ByteVec", gameId],
        ["U256", "7"],
        ["Bool", true],
        ["ByteVec", token],
      ]),
      ev(t0, M.crV2, 1, [
        ["ByteVec", gameId],
        ["U256", "3"],
        ["U256", "4100000"],
        ["U256", "250"],
        ["ByteVec", token],
      ]),
      ev(t0, M.crV2, 2, [
        ["ByteVec", gameId],
        ["U256", "3"],
        ["Address", BOB],
        ["U256", "1000"],
        ["U256", "5000"],
        ["U256", "4"],
        ["U256", "10"],
        ["ByteVec", token],
      ]),
      ev(t0, M.crV2, 3, [
        ["ByteVec", gameId],
        ["U256", "3"],
        ["Address", BOB],
        ["U256", "4500"],
        ["U256", "40"],
        ["U256", "450"],
      ]),
      ev(t0, M.crV2, 4, [
        ["ByteVec", gameId],
        ["U256", "4"],
        ["Address", CAROL],
      ]),
      ev(t0, M.crV2, 5, [
        ["ByteVec", gameId],
        ["Address", CAROL],
        ["U256", "99"],
      ]),
      ev(t1, M.crV1, 0, [
        ["U256", "12"],
        ["U256", "4100001"],
      ]),
      ev(t1, M.crV1, 1, [
        ["U256", "12"],
        ["Address", ALICE],
        ["U256", "2000"],
        ["U256", "8000"],
        ["U256", "2"],
        ["U256", "20"],
      ]),
      ev(t1, M.crV1, 2, [
        ["U256", "12"],
        ["Address", ALICE],
        ["U256", "7000"],
        ["U256", "60"],
      ]),
      ev(t1, M.crV1, 3, [
        ["U256", "12"],
        ["Address", CAROL],
      ]),
      ev(t1, M.crV1, 4, [
        ["Address", CAROL],
        ["U256", "55"],
      ]),
      ev(t2, M.crV2, 2, [
        ["ByteVec", gameId],
        ["U256", "3"],
        ["Address", BOB],
        ["U256", "1000"],
      ]),
      ev(t2, M.crV1, 1, [
        ["U256", "12"],
        ["U256", "1"],
        ["U256", "2000"],
        ["U256", "8000"],
        ["U256", "2"],
        ["U256", "20"],
      ]),
    ],
  );
  const events = run(raw);
  const v2 = byContract(ofTx(events, 0), M.crV2);
  const v1 = byContract(ofTx(events, 1), M.crV1);

  it("decodes the six V2 factory events with the game id and the token where the event names one", () => {
    expect(v2.map(triple)).toEqual([
      "game/game_created/chain_reaction",
      "game/chain_started/chain_reaction",
      "game/player_joined/chain_reaction",
      "game/chain_ended/chain_reaction",
      "game/chain_timeout/chain_reaction",
      "game/pot_boosted/chain_reaction",
    ]);
    for (const e of v2) expect(e.payload).toMatchObject({ version: 2, game_id: gameId });
    for (const e of v2) expect(e).toMatchObject({ dapp_id: "chainreaction", with: M.crV2, from: ALICE });
    expect(v2[0]!.payload).toMatchObject({
      chain_id: "",
      token_id: token,
      factory_game_index: "7",
      fixed_token: true,
    });
    expect(v2[1]!.payload).toMatchObject({
      chain_id: "3",
      start_block: "4100000",
      fees_bps: "250",
      token_id: token,
    });
    expect(v2[2]).toMatchObject({ to: BOB, token_id: token, amount: "1000" });
    expect(v2[2]!.payload).toMatchObject({
      player: BOB,
      entry_fee: "1000",
      pot: "5000",
      position: "4",
      amount_burned: "10",
    });
    expect(v2[3]).toMatchObject({ to: BOB, token_id: ALPH_TOKEN_ID, amount: "4500" });
    expect(v2[3]!.payload).toMatchObject({
      token_id: "",
      winner: BOB,
      payout: "4500",
      total_burned: "40",
      fees_amount: "450",
    });
    expect(v2[4]).toMatchObject({ to: CAROL, amount: "0" });
    expect(v2[4]!.payload).toMatchObject({ chain_id: "4", player: CAROL, token_id: "" });
    expect(v2[5]).toMatchObject({ to: CAROL, amount: "99" });
    expect(v2[5]!.payload).toMatchObject({ chain_id: "", caller: CAROL, amount: "99" });
    // The round's end outranks the other game events of the tx.
    expect(mainOf(events, 0).sub_kind).toBe("chain_ended");
  });

  it("decodes the five V1 events: game id = the V1 contract's id, ALPH, no fees", () => {
    const v1Id = "3543f971b21c8767c2e1f00ac93b599db08c1a7e4639669017b58790153bc400";
    expect(v1.map(triple)).toEqual([
      "game/chain_started/chain_reaction_v1",
      "game/player_joined/chain_reaction_v1",
      "game/chain_ended/chain_reaction_v1",
      "game/chain_timeout/chain_reaction_v1",
      "game/pot_boosted/chain_reaction_v1",
    ]);
    for (const e of v1)
      expect(e.payload).toMatchObject({ version: 1, game_id: v1Id, token_id: ALPH_TOKEN_ID });
    expect(v1[0]!.payload).toMatchObject({ chain_id: "12", start_block: "4100001", fees_bps: null });
    expect(v1[1]).toMatchObject({ to: ALICE, amount: "2000", with: M.crV1 });
    expect(v1[2]!.payload).toMatchObject({
      winner: ALICE,
      payout: "7000",
      total_burned: "60",
      fees_amount: "0",
    });
    expect(v1[4]!.payload).toMatchObject({ chain_id: "", caller: CAROL, amount: "55" });
  });

  it("refuses V2 and V1 events of the wrong layout", () => {
    const bad = ofTx(events, 2).filter((e) => e.contract_event_index !== null);
    expectDecodeError(bad[0], "chainreaction-v2", "PlayerJoined");
    expectDecodeError(bad[1], "chainreaction-v1", "but got 6 fields [U256, U256, U256");
  });
});

describe("Number Guessing War", () => {
  const room = caddr("room-1");
  const roomId = cid("room-1");
  const t0 = tx("room-create", { from: "alice", script: true });
  const t1 = tx("room-play", { from: "bob", script: true });
  const t2 = tx("room-bad", { from: "bob", script: true });
  const r = (i: number, fields: [string, string][]) => ev(t1, room, i, [["ByteVec", roomId], ...fields]);
  const raw = block(
    "guess",
    [t0, t1, t2],
    [
      ev(t0, CREATED_G0, -1, [
        ["Address", room],
        ["Address", M.hub],
        ["ByteVec", ""],
      ]),
      ev(t0, M.hub, 0, [
        ["ByteVec", roomId],
        ["Address", ALICE],
        ["U256", "300"],
        ["U256", "8"],
        ["U256", "100"],
        ["U256", "1718400000000"],
      ]),
      r(0, [
        ["Address", BOB],
        ["U256", "42"],
      ]),
      r(1, [["U256", "1000"]]),
      r(2, [["U256", "37"]]),
      r(3, [
        ["Address", BOB],
        ["U256", "2400"],
      ]),
      r(4, [
        ["Address", CAROL],
        ["U256", "100"],
        ["Address", ALICE],
      ]),
      r(5, [
        ["Address", CAROL],
        ["U256", "300"],
      ]),
      r(6, [["U256", "24"]]),
      r(7, []),
      r(8, [
        ["Address", ALICE],
        ["U256", "50"],
        ["U256", "2450"],
      ]),
      ev(t2, room, 3, [
        ["ByteVec", roomId],
        ["U256", "1"],
        ["U256", "2400"],
      ]),
    ],
  );

  it("learns the room from the hub's ContractCreated (same block) and decodes hub and room events", () => {
    expect(extractContractKinds(raw, createDecoderBook(KNOWN_DAPP_CONTRACTS))).toEqual([
      { contract_address: room, decoder: "guessing-room" },
    ]);
    const events = run(raw);
    const created = byContract(ofTx(events, 0), M.hub)[0]!;
    expect(triple(created)).toBe("game/room_created/guessing_war");
    expect(created).toMatchObject({ to: ALICE, amount: "300", is_main: true });
    expect(created.payload).toMatchObject({
      room_id: roomId,
      creator: ALICE,
      entry_fee: "300",
      max_players: "8",
      number_range_max: "100",
      expires_at: "1718400000000",
    });
    const play = byContract(ofTx(events, 1), room);
    expect(play.map((e) => e.sub_kind)).toEqual([
      "room_joined",
      "room_locked",
      "room_claimable",
      "room_claimed",
      "room_claimed",
      "room_refunded",
      "room_destroyed",
      "room_expired",
      "room_boosted",
    ]);
    for (const e of play) expect(e.payload.room_id).toBe(roomId);
    expect(play[0]!.payload).toMatchObject({ player: BOB, number: "42" });
    expect(play[1]!.payload).toMatchObject({ locked_at_round: "1000", randomness_round: "1003" });
    expect(play[2]!.payload).toMatchObject({ target: "37" });
    expect(play[3]).toMatchObject({ to: BOB, amount: "2400" });
    expect(play[4]!.payload).toMatchObject({ player: CAROL, payout: "100", caller: ALICE, forced: true });
    expect(play[5]).toMatchObject({ to: CAROL, amount: "300" });
    expect(play[6]!.payload).toMatchObject({ creator_cut: "24" });
    expect(play[8]!.payload).toMatchObject({ booster: ALICE, amount: "50", pot: "2450" });
    // First claim (92) is the tx's main event.
    expect(mainOf(events, 1)).toBe(play[3]);
    expectDecodeError(byContract(ofTx(events, 2), room)[0], "guessing-room", "Claimed");
  });

  it("without the hub's ContractCreated the room's events stay generic", () => {
    const alone = block(
      "guess-alone",
      [t1],
      raw.events.filter((e) => e.txId === t1.unsigned.txId),
    );
    expect(
      run(alone)
        .filter((e) => e.contract_address === room)
        .every((e) => e.type === "undecoded"),
    ).toBe(true);
  });
});

describe("Elexium pools", () => {
  const tokenY = cid("elx-y");
  const tokenZ = cid("elx-z");
  const stablePool = caddr("elx-stable");
  const volatilePool = caddr("elx-volatile");
  const t0 = tx("elx-create", { from: "alice", script: true });
  const t1 = tx("elx-swap", { from: "bob", script: true });
  const t2 = tx("elx-mint", { from: "alice", script: true });
  const t3 = tx("elx-burn", { from: "alice", script: true });
  const t4 = tx("elx-bad", { from: "alice", script: true });
  const raw = block(
    "elx",
    [t0, t1, t2, t3, t4],
    [
      ev(t0, M.elexium, 0, [
        ["ByteVec", ALPH_TOKEN_ID],
        ["ByteVec", tokenY],
        ["Bool", false],
        ["ByteVec", idOfAddress("elx-volatile")],
        ["U256", "11"],
      ]),
      ev(t0, M.elexium, 0, [
        ["ByteVec", tokenY],
        ["ByteVec", tokenZ],
        ["Bool", true],
        ["ByteVec", idOfAddress("elx-stable")],
        ["U256", "12"],
      ]),
      ev(t1, volatilePool, 3, [
        ["Address", BOB],
        ["U256", "2000"],
        ["U256", "0"],
        ["U256", "0"],
        ["U256", "500"],
        ["Address", BOB],
      ]),
      ev(t2, stablePool, 1, [
        ["Address", ALICE],
        ["U256", "700"],
        ["U256", "800"],
      ]),
      ev(t3, stablePool, 2, [
        ["Address", ALICE],
        ["Address", CAROL],
        ["U256", "70"],
        ["U256", "80"],
      ]),
      ev(t4, stablePool, 1, [
        ["Address", ALICE],
        ["U256", "700"],
        ["U256", "800"],
        ["U256", "999"],
      ]),
      ev(t4, volatilePool, 0, [
        ["Address", ALICE],
        ["U256", "3"],
        ["U256", "4"],
      ]),
      ev(t4, M.elexium, 0, [
        ["ByteVec", tokenY],
        ["ByteVec", tokenZ],
        ["U256", "1"],
        ["ByteVec", idOfAddress("elx-x")],
        ["U256", "13"],
      ]),
    ],
  );
  const events = run(raw);

  it("announces stable and volatile pools with their flag", () => {
    const created = byContract(ofTx(events, 0), M.elexium);
    expect(created.map(triple)).toEqual(["dex/pool_created/pair_created", "dex/pool_created/pair_created"]);
    expect(created[0]!.payload).toMatchObject({
      pool_address: volatilePool,
      stable: false,
      token1_id: tokenY,
    });
    expect(created[1]!.payload).toMatchObject({ pool_address: stablePool, stable: true });
    expect(created[0]!.dapp_id).toBe("elexium");
  });

  it("decodes Swap 3, Mint 1 (no liquidity) and Burn 2 (sender, to, amounts) on the velodrome layout", () => {
    const swap = mainOf(events, 1);
    // amount0In > 0: ALPH in, token Y out = a buy of the base Y.
    expect(triple(swap)).toBe("dex/buy/swap");
    expect(swap).toMatchObject({ token_id: tokenY, amount: "500", with: volatilePool });
    expect(swap.payload).toMatchObject({ stable: false, amount_in: "2000", amount_out: "500", price: "4" });
    const mint = mainOf(events, 2);
    expect(triple(mint)).toBe("dex/add_liquidity/mint");
    expect(mint).toMatchObject({ amount: "0", token_id: idOfAddress("elx-stable") });
    expect(mint.payload).toMatchObject({
      amount0: "700",
      amount1: "800",
      liquidity: "0",
      stable: true,
      sender: ALICE,
    });
    const burn = mainOf(events, 3);
    expect(triple(burn)).toBe("dex/remove_liquidity/burn");
    expect(burn.payload).toMatchObject({ amount0: "70", amount1: "80", liquidity: "0", stable: true });
  });

  it("refuses an Ayin-shaped Mint and a pool creation whose stable flag is not a Bool", () => {
    const bad = ofTx(events, 4).filter((e) => e.contract_event_index !== null);
    expectDecodeError(bad[0], "elexium-factory", "Mint (event 1) expects 3 fields [Address, U256, U256]");
    // A pool event at an index outside Swap / Mint / Burn (Velodrome's Fees 0) stays generic, silently.
    expect(triple(bad[1]!)).toBe("contract/event/undecoded");
    expect(bad[1]!.payload.decode_error).toBeUndefined();
    expectDecodeError(bad[2], "elexium-factory", "stable flag in field 2");
  });

  it("gives the built-in Elexium factory its layout, and Ayin's stays ayin", () => {
    const [ayin, elexium] = KNOWN_FACTORIES;
    expect(elexium).toMatchObject({
      stable_field: 2,
      liquidity_layout: "velodrome",
      swap_event_index: 3,
      mint_event_index: 1,
      burn_event_index: 2,
    });
    expect(ayin).toMatchObject({ stable_field: null, liquidity_layout: "ayin" });
  });
});

describe("DeadRare", () => {
  const nft = cid("dr-nft");
  const collection = cid("dr-collection");
  const listing = cid("dr-listing");
  const t0 = tx("dr", { from: "alice", script: true });
  const t1 = tx("dr-bad", { from: "alice", script: true });
  const raw = block(
    "dr",
    [t0, t1],
    [
      ev(t0, M.deadrare, 0, [
        ["U256", "1500"],
        ["U256", "31"],
        ["ByteVec", nft],
        ["ByteVec", collection],
        ["Address", ALICE],
        ["ByteVec", listing],
      ]),
      ev(t0, M.deadrare, 3, [
        ["U256", "31"],
        ["ByteVec", nft],
        ["ByteVec", collection],
        ["U256", "1500"],
        ["U256", "1200"],
      ]),
      ev(t0, M.deadrare, 1, [
        ["U256", "1200"],
        ["U256", "31"],
        ["ByteVec", nft],
        ["ByteVec", collection],
        ["Address", ALICE],
        ["Address", BOB],
      ]),
      ev(t0, M.deadrare, 2, [
        ["U256", "32"],
        ["ByteVec", nft],
        ["ByteVec", collection],
        ["Address", BOB],
      ]),
      ev(t1, M.deadrare, 1, [
        ["U256", "1200"],
        ["U256", "31"],
        ["ByteVec", nft],
        ["ByteVec", collection],
        ["Address", ALICE],
      ]),
    ],
  );
  const events = run(raw);

  it("decodes listed, price updated, sold and cancelled; the sale is main", () => {
    const d = byContract(ofTx(events, 0), M.deadrare);
    expect(d.map(triple)).toEqual([
      "nft/listed/marketplace",
      "nft/price_updated/marketplace",
      "nft/sold/marketplace",
      "nft/cancelled/marketplace",
    ]);
    for (const e of d)
      expect(e).toMatchObject({ token_id: nft, amount: "1", with: M.deadrare, dapp_id: "deadrare" });
    expect(d[0]!.payload).toEqual({
      listing_id: "31",
      nft_token_id: nft,
      collection_id: collection,
      price: "1500",
      seller: ALICE,
      listing_contract_id: listing,
    });
    expect(d[1]!.payload).toEqual({
      listing_id: "31",
      nft_token_id: nft,
      collection_id: collection,
      old_price: "1500",
      new_price: "1200",
    });
    expect(d[2]).toMatchObject({ to: BOB, is_main: true });
    expect(d[2]!.payload).toMatchObject({ price: "1200", seller: ALICE, buyer: BOB });
    expect(d[3]!.payload).toMatchObject({ listing_id: "32", seller: BOB });
  });

  it("refuses a sold event with five fields", () => {
    expectDecodeError(byContract(ofTx(events, 1), M.deadrare)[0], "deadrare", "but got 5 fields");
  });
});

describe("MyOnion.fun", () => {
  const token = cid("onion-token");
  const curve = cid("onion-curve");
  const pair = cid("onion-pair");
  const t0 = tx("onion-create", { from: "alice", script: true });
  const t1 = tx("onion-buy", { from: "bob", script: true });
  const t2 = tx("onion-sell", { from: "carol", script: true });
  const t3 = tx("onion-bad", { from: "carol", script: true });
  const raw = block(
    "onion",
    [t0, t1, t2, t3],
    [
      ev(t0, M.launcher, 5, [
        ["ByteVec", token],
        ["Address", ALICE],
        ["ByteVec", utf8Hex("ONI")],
        ["ByteVec", utf8Hex("Onion Ring")],
        ["U256", "18"],
        ["U256", "1000000000"],
        ["ByteVec", cid("royalty")],
      ]),
      ev(t0, M.launcher, 6, [
        ["ByteVec", token],
        ["Address", ALICE],
        ["ByteVec", curve],
      ]),
      ev(t1, M.router, 5, [
        ["ByteVec", token],
        ["Address", BOB],
        ["ByteVec", ALPH_TOKEN_ID],
        ["U256", "3000"],
        ["U256", "12000"],
        ["U256", "30"],
        ["U256", "15"],
        ["Address", ALICE],
      ]),
      ev(t2, M.router, 5, [
        ["ByteVec", token],
        ["Address", CAROL],
        ["ByteVec", token],
        ["U256", "8000"],
        ["U256", "1000"],
        ["U256", "10"],
        ["U256", "5"],
        ["Address", ALICE],
      ]),
      ev(t2, M.launcher, 9, [
        ["ByteVec", token],
        ["Address", CAROL],
        ["ByteVec", pair],
      ]),
      ev(t3, M.router, 5, [
        ["ByteVec", token],
        ["Address", CAROL],
        ["ByteVec", token],
        ["U256", "8000"],
        ["U256", "1000"],
        ["U256", "10"],
        ["U256", "5"],
        ["ByteVec", "00"],
      ]),
    ],
  );
  const events = run(raw);

  it("decodes the token creation (main over its curve) with UTF-8 symbol and name", () => {
    const [created, curveEv] = byContract(ofTx(events, 0), M.launcher);
    expect(triple(created!)).toBe("launchpad/token_created/launch");
    expect(created).toMatchObject({ token_id: token, amount: "1000000000", from: ALICE, is_main: true });
    expect(created!.payload).toMatchObject({
      creator: ALICE,
      symbol: "ONI",
      name: "Onion Ring",
      decimals: 18,
      total_supply: "1000000000",
      royalty_fee_collector: cid("royalty"),
    });
    expect(triple(curveEv!)).toBe("launchpad/curve_created/launch");
    expect(curveEv!.payload).toMatchObject({ curve_contract_id: curve });
  });

  it("decodes a buy (ALPH in) and a sell with amounts from the launched token's side", () => {
    const buy = mainOf(events, 1);
    expect(triple(buy)).toBe("launchpad/buy/launch_trade");
    expect(buy).toMatchObject({ token_id: token, amount: "12000", from: BOB });
    expect(buy.payload).toMatchObject({
      trader: BOB,
      alph_amount: "3000",
      token_amount: "12000",
      platform_fee: "30",
      royalty_fee: "15",
      royalty_recipient: ALICE,
      price: "0.25",
    });
    const trades = byContract(ofTx(events, 2), M.router);
    expect(triple(trades[0]!)).toBe("launchpad/sell/launch_trade");
    expect(trades[0]).toMatchObject({ amount: "8000", is_main: true });
    expect(trades[0]!.payload).toMatchObject({ alph_amount: "1000", token_amount: "8000", price: "0.125" });
    const graduated = byContract(ofTx(events, 2), M.launcher)[0]!;
    expect(triple(graduated)).toBe("launchpad/graduated/launch");
    expect(graduated.payload).toMatchObject({ dex_pair_id: pair });
  });

  it("refuses a Trade whose royalty recipient is not an Address", () => {
    expectDecodeError(
      byContract(ofTx(events, 3), M.router)[0],
      "myonion-router",
      "[ByteVec, Address, ByteVec, U256, U256, U256, U256, Address]",
    );
  });
});

describe("Wormhole (the mainnet fork's layouts)", () => {
  const usdtEthAddress = "000000000000000000000000dac17f958d2ee523a2206206994597c13d831ec7";
  const wethEthAddress = "000000000000000000000000c02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";
  const evmRecipient = "11223344556677889900aabbccddeeff00112233";
  const word = (n: bigint) => n.toString(16).padStart(64, "0");
  const u16 = (n: number) => n.toString(16).padStart(4, "0");
  /** `01 ‖ amount ‖ token ‖ token chain ‖ len(to) ‖ to ‖ fee` (bridge_token_pool.ral). */
  const transfer = (amount: bigint, token: string, chain: number, to: string, fee: bigint) =>
    `01${word(amount)}${token}${u16(chain)}${u16(to.length / 2)}${to}${word(fee)}`;
  const text32 = (t: string) => Buffer.from(t, "utf8").toString("hex").padEnd(64, "0");
  const wethId = subContractId(M.bridgeId, `020002${wethEthAddress}`, 0);
  /** A script approving `amount` of `token` and calling the TokenBridge's 16 `transferToken`. */
  const transferScript = (token: string, amount: bigint) =>
    encodeScript([
      bytesConst(token),
      codec.U256Const(amount),
      codec.ApproveToken,
      codec.U256Const0,
      codec.U256Const0,
      bytesConst(M.bridgeId),
      codec.CallExternal(16),
    ]);
  const call = (contractId: string, method: number) =>
    encodeScript([codec.U256Const0, codec.U256Const0, bytesConst(contractId), codec.CallExternal(method)]);
  const forChainEth = "25gEReFwVDksCkufrocWjSa4Xocn1qjByK2LZMqmD4okK";
  const router = "yoUmrH9piKrxxsPMWAmm9d1Fyk9dEgixeZYAX4Lzfr9m";
  const t0 = tx("wh-out", { from: "alice", script: transferScript(M.usdtEth, 1_234_500n) });
  // 2.5 WETH (18 decimals) goes out as 250,000,000 units of 8 decimals; the script approved the whole amount.
  const t1 = tx("wh-weth", { from: "alice", script: transferScript(wethId, 25n * 10n ** 17n) });
  const t2 = tx("wh-alph", { from: "alice", script: true });
  const t3 = tx("wh-attest", { from: "alice", script: true });
  const usdtPool = "zSRgc7goAYUgYsEBYdAzogyyeKv3ne3uvWb3VDtxnaEK";
  const t4 = tx("wh-redeem", {
    from: "carol",
    script: call(binToHex(contractIdFromAddress(forChainEth)), 7),
    gen: [
      genContract(forChainEth, 5n * E18),
      genContract(usdtPool, E18, [[M.usdtEth, 10n ** 20n]]),
      genAsset(BOB, 10n ** 15n, [[M.usdtEth, 5_000_000n]]),
      genAsset(CAROL, 2n * 10n ** 17n),
    ],
  });
  const t5 = tx("wh-bad", { from: "alice", script: true });
  const t6 = tx("wh-relayed", {
    from: "carol",
    script: call(binToHex(contractIdFromAddress(router)), 0),
    gen: [
      genContract(router, E18),
      genContract(usdtPool, E18, [[M.usdtEth, 10n ** 20n]]),
      genAsset(BOB, 10n ** 15n, [[M.usdtEth, 7_000_000n]]),
    ],
  });
  // Touches the TokenBridge and pays a bridged token, but calls no completeTransfer: not a transfer in.
  const t7 = tx("wh-other", {
    from: "carol",
    script: call(M.bridgeId, 9),
    gen: [genContract(M.bridge, 5n * E18), genAsset(BOB, 10n ** 15n, [[M.usdtEth, 1n]])],
  });
  const message = (t: ReturnType<typeof tx>, payload: string, seq: string, target = "2") =>
    ev(t, M.governance, 0, [
      ["ByteVec", M.bridgeId],
      ["U256", target],
      ["U256", seq],
      ["ByteVec", "00000001"],
      ["ByteVec", payload],
      ["U256", "10"],
    ]);
  const raw = block(
    "wh",
    [t0, t1, t2, t3, t4, t5, t6, t7],
    [
      message(t0, transfer(1_234_500n, usdtEthAddress, 2, evmRecipient, 77n), "901"),
      message(t1, transfer(250_000_000n, wethEthAddress, 2, evmRecipient, 0n), "902"),
      message(t2, transfer(5n * 10n ** 8n, ALPH_TOKEN_ID, 255, "ab".repeat(32), 0n), "903", "4"),
      message(t3, `02${wethEthAddress}${u16(2)}12${text32("WETH")}${text32("Wrapped Ether")}`, "904", "0"),
      ev(t5, M.governance, 0, [
        ["ByteVec", M.bridgeId],
        ["U256", "2"],
      ]),
    ],
  );
  const events = run(raw);

  it("decodes a transfer out of a bridged token: its Alephium id is the RemoteTokenPool's, the recipient an EVM address", () => {
    const e = mainOf(events, 0);
    expect(triple(e)).toBe("bridge/transfer_out/wormhole");
    const poolId = subContractId(M.bridgeId, `020002${usdtEthAddress}`, 0);
    // Independently known: the bridged USDT(eth) id on Alephium.
    expect(poolId).toBe(M.usdtEth);
    expect(e).toMatchObject({
      token_id: poolId,
      amount: "1234500",
      to: `0x${evmRecipient}`,
      from: ALICE,
      dapp_id: "wormhole",
    });
    expect(e.payload).toMatchObject({
      sequence: "901",
      target_chain_id: 2,
      recipient_chain_id: 2,
      token_chain_id: 2,
      origin_token_hex: `0x${usdtEthAddress}`,
      recipient_hex: `0x${evmRecipient}`,
      fee_wormhole: "77",
      nonce: "00000001",
      consistency_level: 10,
      payload_id: 1,
      amount_wormhole: "1234500",
      amount_in_token_units: true,
    });
  });

  it("brings an amount back from 8 decimals to the token's: WETH by its approval, ALPH by its 18 decimals", () => {
    const weth = mainOf(events, 1);
    expect(weth).toMatchObject({ token_id: wethId, amount: (25n * 10n ** 17n).toString() });
    expect(weth.payload).toMatchObject({ amount_wormhole: "250000000", amount_in_token_units: true });
    const alph = mainOf(events, 2);
    expect(alph).toMatchObject({ token_id: ALPH_TOKEN_ID, amount: (5n * E18).toString(), to: "" });
    expect(alph.payload).toMatchObject({
      token_chain_id: 255,
      target_chain_id: 4,
      recipient_hex: `0x${"ab".repeat(32)}`,
    });
  });

  it("decodes an attestation (payload 2): the token, its decimals, symbol and name", () => {
    const e = mainOf(events, 3);
    expect(triple(e)).toBe("bridge/attestation/wormhole");
    expect(e).toMatchObject({ token_id: wethId, amount: "0" });
    expect(e.payload).toMatchObject({
      payload_id: 2,
      target_chain_id: 0,
      token_chain_id: 2,
      decimals: 18,
      symbol: "WETH",
      name: "Wrapped Ether",
    });
  });

  it("reads a transfer in from the TokenBridgeForChain's method 7, its amount from the outputs", () => {
    const ins = ofTx(events, 4).filter((e) => e.sub_kind === "transfer_in");
    // BOB gets USDT; CAROL is the signer, so her token-less output is left-over ALPH, not a transfer in.
    expect(ins).toHaveLength(1);
    expect(ins[0]).toMatchObject({
      to: BOB,
      token_id: M.usdtEth,
      amount: "5000000",
      from: CAROL,
      with: forChainEth,
      is_main: true,
      contract_event_index: null,
      dapp_id: "wormhole",
    });
    expect(ins[0]!.payload).toMatchObject({
      method: "completeTransfer",
      method_index: 7,
      via: "token_bridge_for_chain",
    });
  });

  it("reads a relayed transfer in from a reward router's method 0, and nothing from other bridge calls", () => {
    const relayed = ofTx(events, 6).filter((e) => e.sub_kind === "transfer_in");
    expect(relayed).toHaveLength(1);
    expect(relayed[0]).toMatchObject({ to: BOB, amount: "7000000", with: router });
    expect(relayed[0]!.payload).toMatchObject({ method_index: 0, via: "reward_router" });
    expect(ofTx(events, 7).filter((e) => e.category === "bridge")).toEqual([]);
  });

  it("refuses a WormholeMessage of two fields", () => {
    expectDecodeError(byContract(ofTx(events, 5), M.governance)[0], "wormhole-governance", "WormholeMessage");
  });
});

describe("AlphBanX (inferred from the script)", () => {
  const { ApproveAlph, ApproveToken, CallExternal, U256Const, U256Const0, U256Const1 } = codec;
  const call = (contract: string, method: number, args: codec.Instr[] = []) => [
    ...args,
    U256Const(BigInt(args.length)),
    U256Const0,
    bytesConst(idOf(contract)),
    CallExternal(method),
  ];
  const idOf = (address: string) => Buffer.from(require58(address)).toString("hex");
  const approveAlph = (who: string, amount: bigint) => [addressConst(who), U256Const(amount), ApproveAlph];
  const approveToken = (who: string, token: string, amount: bigint) => [
    addressConst(who),
    bytesConst(token),
    U256Const(amount),
    ApproveToken,
  ];

  const collateral = 1000n * E18;
  const debt = 500n * 10n ** 9n;
  const dust = 10n ** 15n;
  const openLoan = tx("abx-open", {
    from: "alice",
    script: encodeScript([
      ...approveAlph(ALICE, collateral),
      ...call(M.borrower, 11, [U256Const(collateral), U256Const(debt)]),
    ]),
    gen: [genContract(M.borrower, E18), genAsset(ALICE, dust, [[M.abd, debt]])],
  });
  const repay = tx("abx-repay", {
    from: "alice",
    script: encodeScript([
      ...approveToken(ALICE, M.abd, 100n * 10n ** 9n),
      ...call(M.borrower, 10, [U256Const(100n * 10n ** 9n)]),
    ]),
  });
  const stake = tx("abx-stake", {
    from: "bob",
    script: encodeScript([
      ...approveToken(BOB, M.abx, 50n * 10n ** 9n),
      ...call(M.stake, 30, [U256Const(50n * 10n ** 9n)]),
    ]),
  });
  const poolDeposit = tx("abx-pool", {
    from: "bob",
    script: encodeScript([
      ...approveAlph(BOB, dust),
      ...approveToken(BOB, M.abd, 200n * 10n ** 9n),
      ...call(M.auction, 36, [U256Const(200n * 10n ** 9n), U256Const1]),
    ]),
    gen: [genAsset(BOB, dust)],
  });
  const liquidate = tx("abx-liquidate", {
    from: "carol",
    script: encodeScript(call(M.loanManager, 5, [addressConst(BOB)])),
    gen: [genAsset(CAROL, 12n * E18)],
  });
  const topUp = tx("abx-topup", {
    from: "alice",
    script: encodeScript([...approveAlph(ALICE, 5n * E18), ...call(M.borrower, 20, [U256Const(5n * E18)])]),
  });
  // Names the borrower-operations id (so it is parsed) but is no valid bytecode.
  const garbled = tx("abx-garbled", { from: "alice", script: `ff${idOf(M.borrower)}00` });
  const notAbx = tx("abx-other", { from: "alice", script: encodeScript(call(caddr("elsewhere"), 11)) });
  // Two calls: an unmapped method (lending/call, 86) then a stake (91) of a computed amount (LoadLocal).
  const twoCalls = tx("abx-two", {
    from: "bob",
    script: encodeScript([
      ...call(M.stake, 99),
      addressConst(BOB),
      bytesConst(M.abx),
      codec.LoadLocal(0),
      ApproveToken,
      ...call(M.stake, 30, [codec.LoadLocal(0)]),
    ]),
    gen: [genAsset(BOB, dust, [[M.abx, 7n * 10n ** 9n]])],
  });
  const raw = block(
    "abx",
    [openLoan, repay, stake, poolDeposit, liquidate, topUp, garbled, notAbx, twoCalls],
    [],
  );
  const events = run(raw);
  const op = (txIndex: number) => ofTx(events, txIndex).find((e) => e.category === "lending")!;

  it("labels openLoan by (kind, method) with the signer's ALPH / ABD moves", () => {
    const e = op(0);
    expect(triple(e)).toBe("lending/open_loan/alphbanx_op");
    // Received dust back minus the approved collateral; ABD received as debt.
    const alph = dust - collateral;
    expect(e).toMatchObject({
      from: ALICE,
      to: M.borrower,
      token_id: ALPH_TOKEN_ID,
      amount: (-alph).toString(),
      dapp_id: "alphbanx",
      is_main: true,
      contract_event_index: null,
    });
    expect(e.payload).toMatchObject({
      method_index: 11,
      contract_role: "borrower",
      inferred: true,
      alph_delta: alph.toString(),
      abd_delta: debt.toString(),
      abx_delta: "0",
      deltas_exact: true,
    });
  });

  it("labels repay, stake and poolDeposit with the asset each moves", () => {
    expect(op(1)).toMatchObject({
      sub_kind: "repay",
      token_id: M.abd,
      amount: (100n * 10n ** 9n).toString(),
    });
    expect(op(1).payload).toMatchObject({ abd_delta: (-100n * 10n ** 9n).toString(), alph_delta: "0" });
    expect(op(2)).toMatchObject({
      sub_kind: "stake",
      token_id: M.abx,
      amount: (50n * 10n ** 9n).toString(),
      to: M.stake,
      from: BOB,
    });
    expect(op(2).payload).toMatchObject({
      contract_role: "stake",
      method_index: 30,
      abx_delta: (-50n * 10n ** 9n).toString(),
    });
    expect(op(3)).toMatchObject({
      sub_kind: "pool_deposit",
      token_id: M.abd,
      amount: (200n * 10n ** 9n).toString(),
    });
    // The approved ALPH dust came back: no ALPH move.
    expect(op(3).payload).toMatchObject({ contract_role: "auction", alph_delta: "0" });
  });

  it("labels a loan-manager call as liquidate naming the borrower passed as an Address argument", () => {
    expect(op(4)).toMatchObject({ sub_kind: "liquidate", to: M.loanManager, amount: (12n * E18).toString() });
    expect(op(4).payload).toMatchObject({
      borrower: BOB,
      contract_role: "loan_manager",
      alph_delta: (12n * E18).toString(),
    });
  });

  it("emits one event per call, the first one main, and flags deltas whose approvals are not constants", () => {
    const ops = ofTx(events, 8).filter((e) => e.category === "lending");
    // The stake ranks higher, but the script's first call is its operation.
    expect(ops.map((e) => e.sub_kind)).toEqual(["call", "stake"]);
    expect(ops.map((e) => e.is_main)).toEqual([true, false]);
    // Only what came back is known: 7 ABX received, the computed approval is not counted.
    expect(ops[0]!.payload).toMatchObject({ abx_delta: (7n * 10n ** 9n).toString(), deltas_exact: false });
  });

  it("turns method 20 into add_collateral when the signer's ALPH went into the loan", () => {
    expect(op(5)).toMatchObject({ sub_kind: "add_collateral", amount: (5n * E18).toString() });
  });

  it("emits nothing for a script that does not parse or calls no AlphBanX contract", () => {
    expect(scriptInstrs(garbled.unsigned.scriptOpt!)).toBeUndefined();
    expect(ofTx(events, 6).some((e) => e.category === "lending")).toBe(false);
    expect(ofTx(events, 7).some((e) => e.category === "lending")).toBe(false);
    expect(triple(mainOf(events, 6))).toBe("contract/call/script");
  });
});

/** Contract id bytes of a base58 contract address: the P2C lockup script minus its kind byte. */
function require58(address: string): Uint8Array {
  return bs58.decode(address).slice(1);
}
