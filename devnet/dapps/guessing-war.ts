/**
 * The devnet's Number Guessing War (Chain Reaction's GameHub, decoder kind `guessing-hub`), homed on chain 0→0:
 * the hub, deployed in the chain's first block, opens a room every few minutes (at most two open at once):
 * `RoomCreated(roomContractId, creator, entryFee, maxPlayers, numberRangeMax, expiresAt ms)` (hub event 0) in the
 * tx that creates the room as a sub-contract of the hub (path: `toByteVec!(roomIndex)`).
 *
 * Rooms (kind `guessing-room`, ALPH only) emit: 0 `PlayerJoined(roomId, player, number)` (the fee moves from the
 * player's inputs into the room's output), 8 `PotBoosted(roomId, booster, amount, newPot)`, 1 `RoomLocked(roomId,
 * lockedAtRound)` in the join that fills the room (the beacon round current then), 2 `RoomClaimable(roomId,
 * target)` once round lockedAtRound + 3 is out (target: {@link roomTarget} of that round's randomness, the same
 * value the randomness oracle posts), then the winner (closest number, first joined on a tie) claims: 3
 * `Claimed(roomId, player, payout)` with the pot minus 5% as a generated output, 6 `RoomDestroyed(roomId,
 * creatorCut)` and the room destroys itself, its remaining ALPH (the cut and the deposit) to the creator. Rooms
 * 1, 3, 5… by index are left to expire (index 4k+1 with nobody joining, 4k+3 with one player): 7
 * `RoomExpired(roomId)`, 5 `Refunded(roomId, player, amount)` per player, then 6 `RoomDestroyed`.
 *
 * As on mainnet, a room keeps each player's number in a map: a join creates the player's map entry (a
 * sub-contract of the room at path `__map__0__` ‖ the player's address bytes, holding the deposit the player pays,
 * with its ContractCreated system event), and the room's end destroys every entry (ContractDestroyed), each deposit
 * back to its player.
 */
import {
  addressToBytes,
  binToHex,
  codec,
  MINIMAL_CONTRACT_DEPOSIT,
  ONE_ALPH,
  subContractId,
} from "@alephium/web3";
import { blake2b } from "@noble/hashes/blake2b";
import type { Accounts, Ledger } from "../ledger.ts";
import type { Plan } from "../plan.ts";
import type { Rng } from "../random.ts";
import { addressVal, byteVec, contractRecord, type TxBuilder, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec, DevnetAddress, EventSpec, OutSpec } from "../types.ts";
import {
  beaconRandomness,
  beaconRound,
  beaconRoundTime,
  createGameCalls,
  roomTarget,
  stateOf,
} from "./games-common.ts";
import type { DappState, GuessingPlayer } from "./games-types.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const MAX_OPEN_ROOMS = 2;
/** The creator's cut of a claimed pot, in percent. */
const CREATOR_CUT_PERCENT = 5n;

type RoomState = Extract<DappState, { kind: "room" }>;

/** Path prefix of a room's map of player numbers (map 0), as Ralph lays map entries out. */
const MAP_PREFIX = Buffer.from("__map__0__", "utf8").toString("hex");
/** The map-entry contract's code (Ralph's fixed template for map entries; a stand-in here) and its hash. */
const MAP_ENTRY_CODE = `0101${Buffer.from("devnet map entry", "utf8").toString("hex")}`;
const MAP_ENTRY_CODE_HASH = Buffer.from(blake2b(Buffer.from(MAP_ENTRY_CODE, "hex"), { dkLen: 32 })).toString(
  "hex",
);

export interface GuessingWar {
  /** On chain 0→0: deploys the hub, opens rooms and plays them. */
  step(ctx: BlockCtx): void;
}

export function createGuessingWar(deps: {
  rng: Rng;
  seed: number;
  plan: Plan;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
}): GuessingWar {
  const { rng, ledger, builder } = deps;
  const planned = deps.plan.chainReaction;
  const users = deps.accounts.usersByGroup[0]!;
  const calls = createGameCalls({ ledger, builder });
  const userOf = (address: string): DevnetAddress => deps.accounts.userByAddress.get(address)!;
  const alph = (address: string, amount: bigint): OutSpec => ({
    type: "AssetOutput",
    address,
    alph: amount,
    tokens: new Map(),
  });

  const openRoom = (ctx: BlockCtx, hub: ContractRec): void => {
    const hs = stateOf(hub, "hub");
    if (ctx.ts < hs.nextRoomAt) return;
    const open = ledger
      .contractsOn(ctx.chainIndex, "guessing-room")
      .filter((r) => stateOf(r, "room").phase === "open");
    if (open.length >= MAX_OPEN_ROOMS) return;
    const index = hs.rooms;
    const creator = rng.pick(users);
    const entryFee = BigInt(rng.int(1, 10)) * ONE_ALPH;
    const maxPlayers = rng.int(2, 4);
    const numberRangeMax = rng.pick([10n, 100n, 1000n]);
    const joinCap = index % 4 === 1 ? 0 : index % 4 === 3 ? 1 : maxPlayers;
    const expiresAt = ctx.ts + (joinCap < maxPlayers ? 6 : 15) * MINUTE;
    const path = binToHex(codec.u256Codec.encode(BigInt(index)));
    const id = subContractId(hub.id, path, ctx.from);
    const room = builder.deployContract(ctx, creator, "guessing-room", id, {
      parent: hub,
      iface: "",
      extraEvents: [
        {
          contractAddress: hub.address,
          eventIndex: 0,
          fields: [
            byteVec(id),
            addressVal(creator.address),
            u256(entryFee),
            u256(maxPlayers),
            u256(numberRangeMax),
            u256(expiresAt),
          ],
        },
      ],
    });
    if (!room) return;
    room.dapp = {
      kind: "room",
      index,
      creator: creator.address,
      entryFee,
      maxPlayers,
      numberRangeMax,
      expiresAt,
      joinCap,
      players: [],
      pot: 0n,
      phase: "open",
      lockedAtRound: 0,
      target: 0n,
      nextAt: ctx.ts + rng.int(15, 45) * SECOND,
    };
    ledger.touchContract(ctx, hub);
    hub.counter += 1;
    hs.rooms += 1;
    hs.nextRoomAt = ctx.ts + rng.int(120, 300) * SECOND;
  };

  /** The map entry of a player in a room (a sub-contract of the room; fixed code, the player's deposit). */
  const mapEntryId = (room: ContractRec, player: string): string =>
    subContractId(room.id, `${MAP_PREFIX}${binToHex(addressToBytes(player))}`, groupOf(room));
  const groupOf = (room: ContractRec): number => room.homeChain >> 2;
  const newMapEntry = (ctx: BlockCtx, room: ContractRec, player: string): ContractRec =>
    contractRecord(ctx, mapEntryId(room, player), "guessing-map-entry", {
      bytecode: MAP_ENTRY_CODE,
      codeHash: MAP_ENTRY_CODE_HASH,
    });
  /** The map entries of a room's players, destroyed with the room. */
  const entriesOf = (room: ContractRec, s: RoomState): ContractRec[] =>
    s.players.flatMap((p) => ledger.contractById(mapEntryId(room, p.address)) ?? []);

  const join = (ctx: BlockCtx, room: ContractRec, s: RoomState): boolean => {
    const joined = new Set(s.players.map((p) => p.address));
    const candidates = users.filter((u) => !joined.has(u.address));
    if (candidates.length === 0) return false;
    const player = rng.pick(candidates);
    const paid = calls.pay(ctx, player, 40000, s.entryFee + MINIMAL_CONTRACT_DEPOSIT);
    if (!paid) return false;
    ledger.touchContract(ctx, room);
    const number = BigInt(rng.int(1, Number(s.numberRangeMax)));
    s.players.push({ address: player.address, number });
    s.pot += s.entryFee;
    room.alph += s.entryFee;
    const roomId = byteVec(room.id);
    const events: EventSpec[] = [
      {
        contractAddress: room.address,
        eventIndex: 0,
        fields: [roomId, addressVal(player.address), u256(number)],
      },
    ];
    if (s.players.length === s.maxPlayers) {
      s.phase = "locked";
      s.lockedAtRound = beaconRound(ctx.ts);
      events.push({ contractAddress: room.address, eventIndex: 1, fields: [roomId, u256(s.lockedAtRound)] });
    }
    calls.commit(ctx, paid, {
      contracts: [room],
      created: [{ contract: newMapEntry(ctx, room, player.address), parent: room }],
      events,
    });
    return true;
  };

  const boost = (ctx: BlockCtx, room: ContractRec, s: RoomState): boolean => {
    const booster = rng.pick(users);
    const amount = s.entryFee / BigInt(rng.int(1, 4));
    const paid = calls.pay(ctx, booster, 40000, amount);
    if (!paid) return false;
    ledger.touchContract(ctx, room);
    s.pot += amount;
    room.alph += amount;
    calls.commit(ctx, paid, {
      contracts: [room],
      events: [
        {
          contractAddress: room.address,
          eventIndex: 8,
          fields: [byteVec(room.id), addressVal(booster.address), u256(amount), u256(s.pot)],
        },
      ],
    });
    return true;
  };

  /** Anyone may reveal once the round is out; the room's assets do not change (no contract input). */
  const reveal = (ctx: BlockCtx, room: ContractRec, s: RoomState): void => {
    const paid = calls.pay(ctx, rng.pick(users), 30000, 0n);
    if (!paid) return;
    ledger.touchContract(ctx, room);
    s.target = roomTarget(beaconRandomness(deps.seed, s.lockedAtRound + 3), s.numberRangeMax);
    s.phase = "claimable";
    s.nextAt = ctx.ts + rng.int(10, 40) * SECOND;
    calls.commit(ctx, paid, {
      contracts: [],
      events: [{ contractAddress: room.address, eventIndex: 2, fields: [byteVec(room.id), u256(s.target)] }],
    });
  };

  /** The closest number to the target wins; the first to join wins a tie. */
  const winnerOf = (s: RoomState): GuessingPlayer => {
    const distance = (p: GuessingPlayer): bigint =>
      p.number > s.target ? p.number - s.target : s.target - p.number;
    return s.players.reduce((best, p) => (distance(p) < distance(best) ? p : best));
  };

  const claim = (ctx: BlockCtx, room: ContractRec, s: RoomState): void => {
    const winner = winnerOf(s);
    const paid = calls.pay(ctx, userOf(winner.address), 40000, 0n);
    if (!paid) return;
    ledger.touchContract(ctx, room);
    const cut = (s.pot * CREATOR_CUT_PERCENT) / 100n;
    const won = s.pot - cut;
    const roomId = byteVec(room.id);
    const entries = entriesOf(room, s);
    calls.commit(ctx, paid, {
      contracts: [],
      destroyed: [room, ...entries],
      payouts: [
        alph(winner.address, won),
        alph(s.creator, room.alph - won),
        ...s.players.map((p) => alph(p.address, MINIMAL_CONTRACT_DEPOSIT)),
      ],
      events: [
        {
          contractAddress: room.address,
          eventIndex: 3,
          fields: [roomId, addressVal(winner.address), u256(won)],
        },
        { contractAddress: room.address, eventIndex: 6, fields: [roomId, u256(cut)] },
      ],
    });
  };

  const expire = (ctx: BlockCtx, room: ContractRec, s: RoomState): void => {
    const paid = calls.pay(ctx, userOf(s.creator), 40000, 0n);
    if (!paid) return;
    ledger.touchContract(ctx, room);
    const roomId = byteVec(room.id);
    const refunded = s.entryFee * BigInt(s.players.length);
    const events: EventSpec[] = [{ contractAddress: room.address, eventIndex: 7, fields: [roomId] }];
    for (const p of s.players)
      events.push({
        contractAddress: room.address,
        eventIndex: 5,
        fields: [roomId, addressVal(p.address), u256(s.entryFee)],
      });
    events.push({ contractAddress: room.address, eventIndex: 6, fields: [roomId, u256(s.pot - refunded)] });
    calls.commit(ctx, paid, {
      contracts: [],
      destroyed: [room, ...entriesOf(room, s)],
      payouts: [
        ...s.players.map((p) => alph(p.address, s.entryFee)),
        alph(s.creator, room.alph - refunded),
        ...s.players.map((p) => alph(p.address, MINIMAL_CONTRACT_DEPOSIT)),
      ],
      events,
    });
  };

  const play = (ctx: BlockCtx, room: ContractRec): void => {
    const s = stateOf(room, "room");
    if (s.phase === "locked") {
      if (ctx.ts >= beaconRoundTime(s.lockedAtRound + 3) + 20 * SECOND) reveal(ctx, room, s);
      return;
    }
    if (ctx.ts < s.nextAt) return;
    if (s.phase === "claimable") {
      claim(ctx, room, s);
      return;
    }
    if (ctx.ts >= s.expiresAt) {
      expire(ctx, room, s);
      return;
    }
    if (s.players.length >= s.joinCap) return;
    if (s.players.length > 0 && rng.chance(0.15) ? boost(ctx, room, s) : join(ctx, room, s)) {
      // The join that locks the room leaves nextAt for the claim's delay, set by the reveal.
      if (s.phase === "open") s.nextAt = ctx.ts + rng.int(15, 45) * SECOND;
      return;
    }
    ledger.touchContract(ctx, room);
    s.nextAt = ctx.ts + 20 * SECOND;
  };

  return {
    step(ctx) {
      if (ctx.chainIndex !== planned.chainIndex) return;
      const hub = ledger.contractById(planned.hub.id);
      if (!hub) {
        const c = builder.deployContract(ctx, rng.pick(users), "guessing-hub", planned.hub.id, { iface: "" });
        if (c) c.dapp = { kind: "hub", rooms: 0, nextRoomAt: ctx.ts + 30 * SECOND };
        return;
      }
      const rooms = ledger
        .contractsOn(ctx.chainIndex, "guessing-room")
        .sort((a, b) => stateOf(a, "room").index - stateOf(b, "room").index);
      for (const room of rooms) if (room.createdTs < ctx.ts) play(ctx, room);
      openRoom(ctx, hub);
    },
  };
}
