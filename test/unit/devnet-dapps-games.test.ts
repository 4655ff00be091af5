/**
 * The simulated network's randomness oracle, Token Furnace and Chain Reaction (devnet/dapps/), read the way an
 * indexer reads them: from the main-chain blocks with their events (what `/blockflow/blocks-with-events`
 * serves), without the decoders. Every event index appears with its exact layout (dapp-spec.md), burns really
 * burn an existing token, rooms and burner NFTs are sub-contracts, entry fees and payouts move as outputs, and
 * the beacon's rounds are consecutive, also across reorgs of the chains that home these contracts.
 */
import type { node } from "@alephium/web3";
import {
  addressFromContractId,
  addressToBytes,
  binToHex,
  codec,
  contractIdFromAddress,
  MINIMAL_CONTRACT_DEPOSIT,
  subContractId,
} from "@alephium/web3";
import { beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { beaconRandomness, roomTarget } from "../../devnet/dapps/games-common.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";

const SEED = 46;
const MAP_PREFIX = Buffer.from("__map__0__", "utf8").toString("hex");
const CREATED = -1;
const DESTROYED = -2;

type Layout = node.Val["type"][];
const U = "U256";
const B = "ByteVec";
const A = "Address";
const BOOL = "Bool";

/** Expected layouts per contract role and event index (dapp-spec.md); ForceClaimed (room 4) is not generated. */
const LAYOUTS: Record<string, Record<number, Layout>> = {
  randomness: { 1: [U, B, B] },
  furnace: { 0: [A, B, U, BOOL, U] },
  v2: {
    0: [B, U, BOOL, B],
    1: [B, U, U, U, B],
    2: [B, U, A, U, U, U, U, B],
    3: [B, U, A, U, U, U],
    // 4 ChainTimeout is declared, but the mainnet bytecode never emits it.
    5: [B, A, U],
  },
  v1: { 0: [U, U], 1: [U, A, U, U, U, U], 2: [U, A, U, U], 3: [U, A], 4: [A, U] },
  // A V2 game (a V3 template copy): the factory's 1-5 without the game id, each re-emitted by the factory.
  game: { 0: [U, U, U, B], 1: [U, A, U, U, U, U, B], 2: [U, A, U, U, U], 4: [A, U] },
  hub: { 0: [B, A, U, U, U, U] },
  room: {
    0: [B, A, U],
    1: [B, U],
    2: [B, U],
    3: [B, A, U],
    5: [B, A, U],
    6: [B, U],
    7: [B],
    8: [B, A, U, U],
  },
};

interface Ev {
  txId: string;
  chainIndex: number;
  contractAddress: string;
  eventIndex: number;
  fields: node.Val[];
  /** Field values as strings. */
  f: string[];
}

/** Main-chain events of every chain, in block order per chain, as blocks-with-events serves them. */
function mainEvents(chain: DevnetChain): Ev[] {
  const out: Ev[] = [];
  const ranges = chain.blocksInRange(0, chain.latestTimestamp());
  for (const blocks of ranges)
    for (const b of blocks)
      for (const e of b.events)
        out.push({
          txId: e.txId,
          chainIndex: b.chainIndex,
          contractAddress: e.contractAddress,
          eventIndex: e.eventIndex,
          fields: e.fields,
          f: e.fields.map((v) => String(v.value)),
        });
  return out;
}

describe("devnet dapps: randomness, furnace, chain reaction", () => {
  let chain: DevnetChain;
  let events: Ev[];
  let roleOf: (address: string) => string | undefined;
  let rooms: Set<string>;

  beforeAll(() => {
    chain = createDevnetChain({ seed: SEED });
    chain.advance(2800);
    // Reorgs of the chains homing the games and the beacon: undo must restore their states.
    chain.reorg(0, 6);
    chain.reorg(2, 6);
    chain.advance(200);
    events = mainEvents(chain);
    const plan = chain.plan();
    const cr = plan.chainReaction;
    rooms = new Set(
      events.filter((e) => e.eventIndex === CREATED && e.f[1] === cr.hub.address).map((e) => e.f[0]!),
    );
    const roles = new Map<string, string>([
      [plan.randomness.address, "randomness"],
      ...plan.furnaces.map((f) => [f.address, "furnace"] as [string, string]),
      [cr.factoryV2.address, "v2"],
      [cr.v1.address, "v1"],
      [cr.hub.address, "hub"],
    ]);
    const games = new Set(
      events
        .filter((e) => e.contractAddress === cr.factoryV2.address && e.eventIndex === 0)
        .map((e) => addressFromContractId(e.f[0]!)),
    );
    roleOf = (address) =>
      roles.get(address) ?? (rooms.has(address) ? "room" : games.has(address) ? "game" : undefined);
  });

  const txOf = (txId: string): node.Transaction => chain.getTransaction(txId)!.tx;
  const of = (role: string, index?: number): Ev[] =>
    events.filter(
      (e) => roleOf(e.contractAddress) === role && (index === undefined || e.eventIndex === index),
    );
  const createdIn = (txId: string): Ev[] => events.filter((e) => e.txId === txId && e.eventIndex === CREATED);

  it("plans the contracts before their blocks: furnaces per group, Chain Reaction in group 0", () => {
    const fresh = createDevnetChain({ seed: SEED });
    const plan = fresh.plan();
    expect(plan).toEqual(chain.plan());
    expect(plan.furnaces.map((f) => [f.group, f.chainIndex, f.id.slice(-2)])).toEqual([
      [0, 0, "00"],
      [1, 5, "01"],
      [2, 10, "02"],
      [3, 15, "03"],
    ]);
    for (const f of plan.furnaces) expect(f.address).toBe(addressFromContractId(f.id));
    const cr = plan.chainReaction;
    expect(cr.chainIndex).toBe(0);
    for (const c of [cr.factoryV2, cr.v1, cr.hub]) {
      expect(c.id.slice(-2)).toBe("00");
      expect(c.address).toBe(addressFromContractId(c.id));
    }
    expect(plan.randomness).toMatchObject({
      chainIndex: plan.oracle.chainIndex,
      feeder: plan.oracle.feeder,
      updateEventIndex: 1,
      periodMs: 30_000,
    });
    for (const c of [plan.randomness, ...plan.furnaces, cr.factoryV2, cr.v1, cr.hub])
      expect(fresh.contractState(c.address)).toBeUndefined();
  });

  it("emits every event index of each contract with its exact layout, and no other", () => {
    for (const [role, layouts] of Object.entries(LAYOUTS)) {
      const seen = new Set<number>();
      for (const e of of(role)) {
        const layout = layouts[e.eventIndex];
        expect(layout, `${role} event ${e.eventIndex}`).toBeDefined();
        expect(
          e.fields.map((v) => v.type),
          `${role} event ${e.eventIndex}`,
        ).toEqual(layout);
        seen.add(e.eventIndex);
      }
      expect([...seen].sort(), role).toEqual(Object.keys(layouts).map(Number).sort());
    }
  });

  it("re-emits every V2 game event on the factory, in the same tx, with the game id before the same fields", () => {
    const gameEvents = of("game");
    expect(gameEvents.length).toBeGreaterThan(10);
    const factory = chain.plan().chainReaction.factoryV2.address;
    for (const g of gameEvents) {
      const reEmits = events.filter(
        (e) =>
          e.txId === g.txId &&
          e.contractAddress === factory &&
          e.eventIndex === g.eventIndex + 1 &&
          e.f[0] === binToHex(contractIdFromAddress(g.contractAddress)) &&
          JSON.stringify(e.f.slice(1)) === JSON.stringify(g.f),
      );
      expect(reEmits, `${g.txId} ${g.eventIndex}`).toHaveLength(1);
    }
    // And no factory game event (1-5) without its game's own.
    const factoryGameEvents = of("v2").filter((e) => e.eventIndex > 0);
    expect(factoryGameEvents).toHaveLength(gameEvents.length);
  });

  it("posts consecutive beacon rounds, one every 30 s, with 32-byte randomness and 96-byte signatures", () => {
    const posts = of("randomness", 1);
    expect(posts.length).toBeGreaterThan(40);
    posts.forEach((e, i) => {
      if (i > 0) expect(BigInt(e.f[0]!)).toBe(BigInt(posts[i - 1]!.f[0]!) + 1n);
      expect(e.f[1]).toMatch(/^[0-9a-f]{64}$/);
      expect(e.f[2]).toMatch(/^[0-9a-f]{192}$/);
      expect(e.f[1]).toBe(beaconRandomness(SEED, Number(e.f[0])));
      expect(e.chainIndex).toBe(chain.plan().randomness.chainIndex);
    });
  });

  it("burns tokens that exist: the id as ASCII hex (raw on group 0's generation 1), the amount gone from the caller's inputs", () => {
    // Planned tokens and the dapps' own (their contracts carry token metadata).
    const exists = (id: string) => chain.contractInfo(addressFromContractId(id))?.token !== undefined;
    const burns = of("furnace", 0);
    expect(burns.length).toBeGreaterThan(10);
    const nftsPerFurnace = new Map<string, number>();
    for (const e of burns) {
      const group0 = e.contractAddress === chain.plan().furnaces[0]!.address;
      expect(e.f[1]).toMatch(group0 ? /^[0-9a-f]{64}$/ : /^[0-9a-f]{128}$/);
      const tokenId = group0 ? e.f[1]! : Buffer.from(e.f[1]!, "hex").toString("utf8");
      expect(exists(tokenId), tokenId).toBe(true);
      const tx = txOf(e.txId);
      const amount = (outs: { tokens?: { id: string; amount: string | bigint }[] }[]): bigint =>
        outs.reduce(
          (s, o) => s + (o.tokens ?? []).reduce((t, x) => t + (x.id === tokenId ? BigInt(x.amount) : 0n), 0n),
          0n,
        );
      const spent = amount(tx.unsigned.inputs.map((i) => chain.getOutput(i.outputRef.key)!));
      expect(spent - amount([...tx.unsigned.fixedOutputs, ...tx.generatedOutputs])).toBe(BigInt(e.f[2]!));
      const owner = chain.getOutput(tx.unsigned.inputs[0]!.outputRef.key)!.address;
      expect(e.f[0]).toBe(owner);
      expect(Number(e.f[4])).toBe(chain.getTransaction(e.txId)!.timestamp);
      const created = createdIn(e.txId);
      if (e.f[3] === "false") {
        expect(created).toEqual([]);
        continue;
      }
      // The BurnerNFT: a sub-contract of the furnace at path toByteVec!(nftIndex).
      const furnace = chain.plan().furnaces.find((f) => f.address === e.contractAddress)!;
      const k = nftsPerFurnace.get(furnace.address) ?? 0;
      nftsPerFurnace.set(furnace.address, k + 1);
      const path = binToHex(codec.u256Codec.encode(BigInt(k)));
      const nft = addressFromContractId(subContractId(furnace.id, path, furnace.group));
      expect(created.map((c) => c.f)).toEqual([[nft, furnace.address, "0003"]]);
      expect(chain.contractInfo(nft)?.kind).toBe("furnace-nft");
    }
    expect([...nftsPerFurnace.values()].reduce((s, n) => s + n, 0)).toBeGreaterThan(2);
    expect(burns.some((e) => e.f[3] === "false")).toBe(true);
  });

  it("creates V2 games with their contract (no parent), one staking ALPH and one a devnet token", () => {
    const created = of("v2", 0);
    expect(created.map((e) => e.f[1])).toEqual(created.map((_, i) => String(i)));
    for (const e of created) {
      expect(createdIn(e.txId).map((c) => c.f)).toEqual([[addressFromContractId(e.f[0]!), "", ""]]);
      expect(chain.contractInfo(addressFromContractId(e.f[0]!))?.kind).toBe("chainreaction-game");
      expect(e.f[2]).toBe(String(e.f[3] !== ALPH_TOKEN_ID));
    }
    expect(created.map((e) => e.f[3] === ALPH_TOKEN_ID)).toEqual([true, false]);
    expect(chain.tokens().map((t) => t.id)).toContain(created[1]!.f[3]);
  });

  /** Replays the rounds of V2 games and of V1: positions, rising fees, pots, burns, winner and payout outputs. */
  it("plays rounds: rising fees into the game contract, the last player paid the pot minus fees", () => {
    const cr = chain.plan().chainReaction;
    const tokenOfGame = new Map(of("v2", 0).map((e) => [e.f[0]!, e.f[3]!]));
    tokenOfGame.set(cr.v1.id, ALPH_TOKEN_ID);
    interface Round {
      players: string[];
      fees: bigint[];
      pot: bigint;
      burned: bigint;
    }
    const rounds = new Map<string, Round>();
    const ended: string[] = [];
    /** Change of a contract's asset (ALPH or the token) between its input and its output in a tx. */
    const contractDelta = (txId: string, address: string, tokenId: string): bigint => {
      const tx = txOf(txId);
      const value = (o: {
        attoAlphAmount: string | bigint;
        tokens?: { id: string; amount: string | bigint }[];
      }) =>
        tokenId === ALPH_TOKEN_ID
          ? BigInt(o.attoAlphAmount)
          : BigInt(o.tokens?.find((t) => t.id === tokenId)?.amount ?? 0n);
      const input = tx.contractInputs.map((r) => chain.getOutput(r.key)!).find((o) => o.address === address)!;
      const output = tx.generatedOutputs.find((o) => o.type === "ContractOutput" && o.address === address)!;
      return value(output) - value(input);
    };
    for (const e of [...of("v2"), ...of("v1")]) {
      const v2 = roleOf(e.contractAddress) === "v2";
      if (v2 && e.eventIndex === 0) continue;
      // V1 has no game id and indexes one lower.
      const game = v2 ? e.f[0]! : cr.v1.id;
      const f = v2 ? e.f.slice(1) : e.f;
      const index = v2 ? e.eventIndex : e.eventIndex + 1;
      const tokenId = tokenOfGame.get(game)!;
      const gameAddress = addressFromContractId(game);
      const key = `${game}/${f[0]}`;
      if (index === 1) {
        expect(rounds.has(key)).toBe(false);
        rounds.set(key, { players: [], fees: [], pot: 0n, burned: 0n });
        if (v2) expect(f[3]).toBe(tokenId);
      } else if (index === 2) {
        const r = rounds.get(key)!;
        const [, , fee, pot, position, burned] = f.slice(0, 6).map((x, k) => (k === 1 ? 0n : BigInt(x)));
        expect(position).toBe(BigInt(r.players.length + 1));
        if (r.fees.length > 0) expect(fee!).toBeGreaterThan(r.fees.at(-1)!);
        expect(burned!).toBeGreaterThan(0n);
        expect(burned!).toBeLessThan(fee!);
        expect(pot).toBe(r.pot + fee! - burned!);
        r.players.push(f[1]!);
        r.fees.push(fee!);
        r.pot = pot!;
        r.burned += burned!;
        // The fee leaves the player's inputs into the game's output; a token game burns its share.
        expect(contractDelta(e.txId, gameAddress, tokenId)).toBe(
          tokenId === ALPH_TOKEN_ID ? fee : fee! - burned!,
        );
        expect(chain.getOutput(txOf(e.txId).unsigned.inputs[0]!.outputRef.key)!.address).toBe(f[1]);
      } else if (index === 3) {
        const r = rounds.get(key)!;
        const payout = BigInt(f[2]!);
        const fees = v2 ? BigInt(f[4]!) : 0n;
        expect(f[1]).toBe(r.players.at(-1));
        expect(BigInt(f[3]!)).toBe(r.burned);
        expect(payout + fees).toBe(r.pot);
        const paid = txOf(e.txId).generatedOutputs.filter(
          (o) => o.type === "AssetOutput" && o.address === f[1],
        );
        expect(paid).toHaveLength(1);
        if (tokenId === ALPH_TOKEN_ID) expect(BigInt(paid[0]!.attoAlphAmount)).toBe(payout);
        else expect(paid[0]!.tokens).toEqual([{ id: tokenId, amount: payout.toString() }]);
        expect(contractDelta(e.txId, gameAddress, tokenId)).toBe(-payout);
        rounds.delete(key);
        ended.push(key);
      } else if (index === 4) {
        const r = rounds.get(key)!;
        expect(f[1]).toBe(r.players.at(-1));
        const next = events.find(
          (x) => x.txId === e.txId && x.contractAddress === e.contractAddress && x !== e,
        )!;
        expect(next.eventIndex).toBe(e.eventIndex - 1);
      } else if (index === 5) {
        const amount = BigInt(f[1]!);
        const running = [...rounds.entries()].find(([k]) => k.startsWith(`${game}/`))!;
        running[1].pot += amount;
        expect(contractDelta(e.txId, gameAddress, tokenId)).toBe(amount);
      }
    }
    expect(ended.filter((k) => k.startsWith(cr.v1.id)).length).toBeGreaterThan(1);
    expect(ended.filter((k) => !k.startsWith(cr.v1.id)).length).toBeGreaterThan(3);
  });

  it("creates rooms as hub sub-contracts and plays them to a claim, or to an expiry with refunds", () => {
    const hub = chain.plan().chainReaction.hub;
    const created = of("hub", 0);
    expect(created.length).toBeGreaterThan(4);
    /** Per locked room, the round its target comes from. */
    const target = new Map<string, bigint>();
    const range = new Map<string, bigint>();
    created.forEach((e, i) => {
      const roomId = e.f[0]!;
      const path = binToHex(codec.u256Codec.encode(BigInt(i)));
      expect(roomId).toBe(subContractId(hub.id, path, 0));
      expect(createdIn(e.txId).map((c) => c.f)).toEqual([[addressFromContractId(roomId), hub.address, ""]]);
      range.set(roomId, BigInt(e.f[4]!));
    });
    const randomness = new Map(of("randomness", 1).map((e) => [Number(e.f[0]), e.f[1]!]));
    const entriesOf = new Map<string, { entry: string; player: string }[]>();
    let destroyedRooms = 0;
    for (const e of of("room")) {
      const roomId = e.f[0]!;
      expect(addressFromContractId(roomId)).toBe(e.contractAddress);
      const tx = txOf(e.txId);
      if (e.eventIndex === 1) {
        target.set(roomId, BigInt(Number(e.f[1]) + 3));
      } else if (e.eventIndex === 2) {
        // The target comes from the randomness the oracle posted for round lockedAtRound + 3.
        const round = Number(target.get(roomId));
        expect(randomness.has(round)).toBe(true);
        expect(BigInt(e.f[1]!)).toBe(roomTarget(randomness.get(round)!, range.get(roomId)!));
      } else if (e.eventIndex === 3 || e.eventIndex === 5) {
        const paid = tx.generatedOutputs.filter((o) => o.type === "AssetOutput" && o.address === e.f[1]);
        expect(paid.map((o) => BigInt(o.attoAlphAmount))).toContain(BigInt(e.f[2]!));
      } else if (e.eventIndex === 6) {
        // The room destroys itself and its players' map entries: their outputs spent, none made, a
        // ContractDestroyed for each, each entry's deposit back to its player.
        expect(tx.generatedOutputs.some((o) => o.address === e.contractAddress)).toBe(false);
        const destroyed = events.filter((x) => x.txId === e.txId && x.eventIndex === DESTROYED);
        const entries = entriesOf.get(roomId) ?? [];
        expect(destroyed.map((x) => x.f)).toEqual([[e.contractAddress], ...entries.map((x) => [x.entry])]);
        expect(chain.contractInfo(e.contractAddress)).toBeUndefined();
        for (const { entry, player } of entries) {
          expect(chain.contractState(entry)).toBeUndefined();
          expect(tx.generatedOutputs.some((o) => o.address === player)).toBe(true);
        }
        destroyedRooms++;
      } else if (e.eventIndex === 0 || e.eventIndex === 8) {
        if (e.eventIndex === 0) {
          // A join creates the player's map entry: a sub-contract of the room holding the player's deposit.
          const entry = addressFromContractId(
            subContractId(roomId, `${MAP_PREFIX}${binToHex(addressToBytes(e.f[1]!))}`, 0),
          );
          expect(createdIn(e.txId).map((c) => c.f)).toEqual([[entry, e.contractAddress, ""]]);
          const out = tx.generatedOutputs.find((o) => o.address === entry)!;
          expect(BigInt(out.attoAlphAmount)).toBe(MINIMAL_CONTRACT_DEPOSIT);
          entriesOf.set(roomId, [...(entriesOf.get(roomId) ?? []), { entry, player: e.f[1]! }]);
        }
        const input = tx.contractInputs
          .map((r) => chain.getOutput(r.key)!)
          .find((o) => o.address === e.contractAddress)!;
        const output = tx.generatedOutputs.find((o) => o.address === e.contractAddress)!;
        const paidIn = BigInt(output.attoAlphAmount) - input.attoAlphAmount;
        const fee = BigInt(created.find((c) => c.f[0] === roomId)!.f[2]!);
        expect(paidIn).toBe(e.eventIndex === 0 ? fee : BigInt(e.f[2]!));
      }
    }
    expect(destroyedRooms).toBeGreaterThan(1);
    // An expired room nobody joined: RoomExpired then RoomDestroyed in one tx, no refund.
    const expired = of("room", 7).map((e) => events.filter((x) => x.txId === e.txId && x.eventIndex >= 0));
    expect(expired.some((list) => list.map((x) => x.eventIndex).join() === "7,6")).toBe(true);
    expect(expired.some((list) => list.map((x) => x.eventIndex).join() === "7,5,6")).toBe(true);
  });

  it("makes the same games for a seed", () => {
    const a = createDevnetChain({ seed: 5 });
    const b = createDevnetChain({ seed: 5 });
    a.advance(900);
    b.advance(900);
    const dapps = (c: DevnetChain) => mainEvents(c).filter((e) => e.eventIndex >= 0);
    expect(JSON.stringify(dapps(a))).toBe(JSON.stringify(dapps(b)));
  });
});
