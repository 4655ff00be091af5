/**
 * Chain Reaction (notrustverify/chainreaction): the V2 factory re-emits every game's events with the game's
 * contract id (bytecode-verified); its games are copies of the V3 template that emit the same events without the
 * id (counted once: the factory's re-emit, else the copy's own). The v1 factory has V2's layouts without fees and
 * token (bytecode-verified); the V1 game is one contract without game id, fees or token (its emit instructions'
 * field counts; no artifact matches). Number Guessing War: the hub's RoomCreated and its rooms' events (GameHub.ral / GameRoom.ral;
 * indexes 4, 5, 7 inferred from the source order).
 */
import { DAPP_UNKNOWN, type SubKind } from "../../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import { contractIdOf } from "../chain-utils.ts";
import { type ContractEvent, type Draft, dappOf, draft, type TxScope } from "../draft.ts";
import { type DecodeResult, type Fields, type FieldType, fieldsOf, isFields } from "./fields.ts";

interface GameEvent {
  name: string;
  sub_kind: SubKind;
  types: readonly FieldType[];
  /** to, token_id / amount and the extra payload from the fields. */
  read(f: Fields): {
    to: string;
    token: string | null;
    amount: bigint;
    chain_id: string;
    extra: Record<string, unknown>;
  };
}

const lowerId = (hex: string) => hex.toLowerCase();

/** V2 factory events by index; field 0 is always the game contract id. */
const V2: Record<number, GameEvent> = {
  0: {
    name: "NewGameCreated",
    sub_kind: "game_created",
    types: ["ByteVec", "U256", "Bool", "ByteVec"],
    read: (f) => ({
      to: "",
      token: lowerId(f.str(3)),
      amount: 0n,
      chain_id: "",
      extra: { factory_game_index: f.big(1).toString(), fixed_token: f.bool(2) },
    }),
  },
  1: {
    name: "ChainStarted",
    sub_kind: "chain_started",
    types: ["ByteVec", "U256", "U256", "U256", "ByteVec"],
    read: (f) => ({
      to: "",
      token: lowerId(f.str(4)),
      amount: 0n,
      chain_id: f.big(1).toString(),
      extra: { start_block: f.big(2).toString(), fees_bps: f.big(3).toString() },
    }),
  },
  2: {
    name: "PlayerJoined",
    sub_kind: "player_joined",
    types: ["ByteVec", "U256", "Address", "U256", "U256", "U256", "U256", "ByteVec"],
    read: (f) => ({
      to: f.str(2),
      token: lowerId(f.str(7)),
      amount: f.big(3),
      chain_id: f.big(1).toString(),
      extra: joined(f, 2),
    }),
  },
  3: {
    name: "ChainEnded",
    sub_kind: "chain_ended",
    types: ["ByteVec", "U256", "Address", "U256", "U256", "U256"],
    read: (f) => ({
      to: f.str(2),
      token: null,
      amount: f.big(3),
      chain_id: f.big(1).toString(),
      extra: ended(f, 2, f.big(5).toString()),
    }),
  },
  4: {
    name: "ChainTimeout",
    sub_kind: "chain_timeout",
    types: ["ByteVec", "U256", "Address"],
    read: (f) => ({
      to: f.str(2),
      token: null,
      amount: 0n,
      chain_id: f.big(1).toString(),
      extra: { player: f.str(2) },
    }),
  },
  5: {
    name: "PotBoosted",
    sub_kind: "pot_boosted",
    types: ["ByteVec", "Address", "U256"],
    read: (f) => ({ to: f.str(1), token: null, amount: f.big(2), chain_id: "", extra: boosted(f, 1) }),
  },
};

/**
 * FactoryChainReaction (v1 factory) events: V2's without fees and token (`NewGameCreated(contractId, gameId)`,
 * `ChainStarted(gameContractId, chainId, startBlock)`, PlayerJoined and ChainEnded without token and fees).
 */
const V1_FACTORY: Record<number, GameEvent> = {
  0: {
    name: "NewGameCreated",
    sub_kind: "game_created",
    types: ["ByteVec", "U256"],
    read: (f) => ({
      to: "",
      token: ALPH_TOKEN_ID,
      amount: 0n,
      chain_id: "",
      extra: { factory_game_index: f.big(1).toString(), fixed_token: null },
    }),
  },
  1: {
    name: "ChainStarted",
    sub_kind: "chain_started",
    types: ["ByteVec", "U256", "U256"],
    read: (f) => ({
      to: "",
      token: ALPH_TOKEN_ID,
      amount: 0n,
      chain_id: f.big(1).toString(),
      extra: { start_block: f.big(2).toString(), fees_bps: null },
    }),
  },
  2: {
    name: "PlayerJoined",
    sub_kind: "player_joined",
    types: ["ByteVec", "U256", "Address", "U256", "U256", "U256", "U256"],
    read: (f) => ({
      to: f.str(2),
      token: ALPH_TOKEN_ID,
      amount: f.big(3),
      chain_id: f.big(1).toString(),
      extra: joined(f, 2),
    }),
  },
  3: {
    name: "ChainEnded",
    sub_kind: "chain_ended",
    types: ["ByteVec", "U256", "Address", "U256", "U256"],
    read: (f) => ({
      to: f.str(2),
      token: ALPH_TOKEN_ID,
      amount: f.big(3),
      chain_id: f.big(1).toString(),
      extra: ended(f, 2, "0"),
    }),
  },
  4: V2[4]!,
  5: V2[5]!,
};

/** V1 events: the V2 layout without the game id, fees and token. */
const V1: Record<number, GameEvent> = {
  0: {
    name: "ChainStarted",
    sub_kind: "chain_started",
    types: ["U256", "U256"],
    read: (f) => ({
      to: "",
      token: ALPH_TOKEN_ID,
      amount: 0n,
      chain_id: f.big(0).toString(),
      extra: { start_block: f.big(1).toString(), fees_bps: null },
    }),
  },
  1: {
    name: "PlayerJoined",
    sub_kind: "player_joined",
    types: ["U256", "Address", "U256", "U256", "U256", "U256"],
    read: (f) => ({
      to: f.str(1),
      token: ALPH_TOKEN_ID,
      amount: f.big(2),
      chain_id: f.big(0).toString(),
      extra: joined(f, 1),
    }),
  },
  2: {
    name: "ChainEnded",
    sub_kind: "chain_ended",
    types: ["U256", "Address", "U256", "U256"],
    read: (f) => ({
      to: f.str(1),
      token: ALPH_TOKEN_ID,
      amount: f.big(2),
      chain_id: f.big(0).toString(),
      extra: ended(f, 1, "0"),
    }),
  },
  3: {
    name: "ChainTimeout",
    sub_kind: "chain_timeout",
    types: ["U256", "Address"],
    read: (f) => ({
      to: f.str(1),
      token: ALPH_TOKEN_ID,
      amount: 0n,
      chain_id: f.big(0).toString(),
      extra: { player: f.str(1) },
    }),
  },
  4: {
    name: "PotBoosted",
    sub_kind: "pot_boosted",
    types: ["Address", "U256"],
    read: (f) => ({
      to: f.str(0),
      token: ALPH_TOKEN_ID,
      amount: f.big(1),
      chain_id: "",
      extra: boosted(f, 0),
    }),
  },
};

/** PlayerJoined's (player, entryFee, newPot, position, amountBurned) from field `at`. */
function joined(f: Fields, at: number): Record<string, unknown> {
  return {
    player: f.str(at),
    entry_fee: f.big(at + 1).toString(),
    pot: f.big(at + 2).toString(),
    position: f.big(at + 3).toString(),
    amount_burned: f.big(at + 4).toString(),
  };
}

function ended(f: Fields, at: number, fees: string): Record<string, unknown> {
  return {
    winner: f.str(at),
    payout: f.big(at + 1).toString(),
    total_burned: f.big(at + 2).toString(),
    fees_amount: fees,
  };
}

function boosted(f: Fields, at: number): Record<string, unknown> {
  return { caller: f.str(at), amount: f.big(at + 1).toString() };
}

/** Which contract emitted a game event: a factory (field 0 is the game), a V1 game, or a V3 game copy. */
type Emitter = "factory_v2" | "factory_v1" | "game_v1" | "game_v3";

const LAYOUTS: Record<Emitter, Record<number, GameEvent>> = {
  factory_v2: V2,
  factory_v1: V1_FACTORY,
  game_v1: V1,
  // A V3 copy's event i is the V2 factory's i + 1 without the game id: decoded through V2 with the copy's id.
  game_v3: V2,
};

function decodeGame(s: TxScope, ev: ContractEvent, emitter: Emitter): DecodeResult {
  const spec = LAYOUTS[emitter][emitter === "game_v3" ? ev.eventIndex + 1 : ev.eventIndex];
  if (!spec || (emitter === "game_v3" && spec.name === "NewGameCreated")) return undefined;
  const ownId = contractIdOf(ev.contractAddress) ?? "";
  let f: Fields;
  if (emitter === "game_v3") {
    // Checked against the copy's own layout, so a failure names the event the copy emitted.
    const own = fieldsOf(ev, spec.name, spec.types.slice(1));
    if (!isFields(own)) return own;
    const asFactory = fieldsOf(
      { ...ev, fields: [{ type: "ByteVec", value: ownId }, ...ev.fields] },
      spec.name,
      spec.types,
    );
    if (!isFields(asFactory)) return asFactory;
    f = asFactory;
  } else {
    const own = fieldsOf(ev, spec.name, spec.types);
    if (!isFields(own)) return own;
    f = own;
  }
  const r = spec.read(f);
  const v1 = emitter === "factory_v1" || emitter === "game_v1";
  const gameId = emitter === "game_v1" ? ownId : f.str(0).toLowerCase();
  // ChainEnded / ChainTimeout / PotBoosted name no token: ALPH as the event's token, "" in the payload.
  return [
    draft("game", spec.sub_kind, emitter === "game_v1" ? "chain_reaction_v1" : "chain_reaction", {
      dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
      from: s.sender,
      to: r.to,
      with: ev.contractAddress,
      token_id: r.token ?? ALPH_TOKEN_ID,
      amount: r.amount,
      contract_address: ev.contractAddress,
      contract_event_index: ev.eventIndex,
      payload: {
        version: v1 ? 1 : 2,
        emitter,
        game_id: gameId,
        chain_id: r.chain_id,
        token_id: r.token ?? "",
        ...r.extra,
      },
    }),
  ];
}

/**
 * True when a V2 factory re-emitted this V3 copy's event in the same transaction: the factory's event i + 1
 * naming the copy, with the copy's fields after it. The re-emit is the one normalized event.
 */
function reEmitted(s: TxScope, ev: ContractEvent): boolean {
  const ownId = contractIdOf(ev.contractAddress);
  return s.events.some(
    (e) =>
      e.eventIndex === ev.eventIndex + 1 &&
      s.decoders.kindOf(e.contractAddress) === "chainreaction-v2" &&
      e.fields.length === ev.fields.length + 1 &&
      e.fields[0]?.type === "ByteVec" &&
      String(e.fields[0].value).toLowerCase() === ownId &&
      ev.fields.every((f, i) => e.fields[i + 1]?.type === f.type && e.fields[i + 1]?.value === f.value),
  );
}

export const decodeChainReactionV2 = (s: TxScope, ev: ContractEvent) => decodeGame(s, ev, "factory_v2");
export const decodeChainReactionV1Factory = (s: TxScope, ev: ContractEvent) =>
  decodeGame(s, ev, "factory_v1");
export const decodeChainReactionV1 = (s: TxScope, ev: ContractEvent) => decodeGame(s, ev, "game_v1");
/** A V3 game copy's event: nothing when its factory re-emitted it (counted there), else decoded as the re-emit. */
export const decodeChainReactionV3Game = (s: TxScope, ev: ContractEvent): DecodeResult =>
  LAYOUTS.game_v3[ev.eventIndex + 1] && reEmitted(s, ev) ? [] : decodeGame(s, ev, "game_v3");

interface RoomEvent {
  name: string;
  sub_kind: SubKind;
  types: readonly FieldType[];
  read(f: Fields): { to: string; amount: bigint; extra: Record<string, unknown> };
}

/** Room events; field 0 is the room id. */
const ROOM: Record<number, RoomEvent> = {
  0: {
    name: "PlayerJoined",
    sub_kind: "room_joined",
    types: ["ByteVec", "Address", "U256"],
    read: (f) => ({ to: f.str(1), amount: 0n, extra: { player: f.str(1), number: f.big(2).toString() } }),
  },
  1: {
    name: "RoomLocked",
    sub_kind: "room_locked",
    types: ["ByteVec", "U256"],
    // The room's target comes from DIA randomness round lockedAtRound + 3.
    read: (f) => ({
      to: "",
      amount: 0n,
      extra: { locked_at_round: f.big(1).toString(), randomness_round: (f.big(1) + 3n).toString() },
    }),
  },
  2: {
    name: "RoomClaimable",
    sub_kind: "room_claimable",
    types: ["ByteVec", "U256"],
    read: (f) => ({ to: "", amount: 0n, extra: { target: f.big(1).toString() } }),
  },
  3: {
    name: "Claimed",
    sub_kind: "room_claimed",
    types: ["ByteVec", "Address", "U256"],
    read: (f) => ({
      to: f.str(1),
      amount: f.big(2),
      extra: { player: f.str(1), payout: f.big(2).toString() },
    }),
  },
  4: {
    name: "ForceClaimed",
    sub_kind: "room_claimed",
    types: ["ByteVec", "Address", "U256", "Address"],
    read: (f) => ({
      to: f.str(1),
      amount: f.big(2),
      extra: { player: f.str(1), payout: f.big(2).toString(), caller: f.str(3), forced: true },
    }),
  },
  5: {
    name: "Refunded",
    sub_kind: "room_refunded",
    types: ["ByteVec", "Address", "U256"],
    read: (f) => ({
      to: f.str(1),
      amount: f.big(2),
      extra: { player: f.str(1), amount: f.big(2).toString() },
    }),
  },
  6: {
    name: "RoomDestroyed",
    sub_kind: "room_destroyed",
    types: ["ByteVec", "U256"],
    read: (f) => ({ to: "", amount: f.big(1), extra: { creator_cut: f.big(1).toString() } }),
  },
  7: {
    name: "RoomExpired",
    sub_kind: "room_expired",
    types: ["ByteVec"],
    read: () => ({ to: "", amount: 0n, extra: {} }),
  },
  8: {
    name: "PotBoosted",
    sub_kind: "room_boosted",
    types: ["ByteVec", "Address", "U256", "U256"],
    read: (f) => ({
      to: f.str(1),
      amount: f.big(2),
      extra: { booster: f.str(1), amount: f.big(2).toString(), pot: f.big(3).toString() },
    }),
  },
};

const HUB_ROOM_CREATED: RoomEvent = {
  name: "RoomCreated",
  sub_kind: "room_created",
  types: ["ByteVec", "Address", "U256", "U256", "U256", "U256"],
  read: (f) => ({
    to: f.str(1),
    amount: f.big(2),
    extra: {
      creator: f.str(1),
      entry_fee: f.big(2).toString(),
      max_players: f.big(3).toString(),
      number_range_max: f.big(4).toString(),
      expires_at: f.big(5).toString(),
    },
  }),
};

function roomDraft(s: TxScope, ev: ContractEvent, spec: RoomEvent): DecodeResult {
  const f = fieldsOf(ev, spec.name, spec.types);
  if (!isFields(f)) return f;
  const r = spec.read(f);
  const d: Draft = draft("game", spec.sub_kind, "guessing_war", {
    dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
    from: s.sender,
    to: r.to,
    with: ev.contractAddress,
    amount: r.amount,
    contract_address: ev.contractAddress,
    contract_event_index: ev.eventIndex,
    payload: { room_id: f.str(0).toLowerCase(), ...r.extra },
  });
  return [d];
}

export function decodeGuessingHub(s: TxScope, ev: ContractEvent): DecodeResult {
  return ev.eventIndex === 0 ? roomDraft(s, ev, HUB_ROOM_CREATED) : undefined;
}

export function decodeGuessingRoom(s: TxScope, ev: ContractEvent): DecodeResult {
  const spec = ROOM[ev.eventIndex];
  return spec ? roomDraft(s, ev, spec) : undefined;
}
