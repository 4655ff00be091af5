/**
 * What the devnet's randomness oracle, Token Furnace and Chain Reaction share (devnet/dapps/randomness.ts,
 * furnace.ts, chain-reaction.ts, guessing-war.ts): their planned contracts, their contract kinds and states, the
 * randomness beacon's schedule and values, and the two steps of a user's call to a game contract.
 *
 * States live on the contract records (`ContractRec.dapp`, copied when a block touches the contract), and every
 * schedule is a chain time stored there, so a reorg that undoes a block restores them with the ledger.
 */
import { createHash } from "node:crypto";
import type { node } from "@alephium/web3";
import {
  addressFromContractId,
  Contract,
  CreateContractEventAddresses,
  DestroyContractEventAddresses,
} from "@alephium/web3";
import { ADDRESS_GROUPS, ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import type { Ledger } from "../ledger.ts";
import type { Rng } from "../random.ts";
import { addressVal, byteVec, type TxBuilder, USER_GAS_PRICE } from "../tx-builder.ts";
import type { BlockCtx, ContractRec, DevnetAddress, EventSpec, OutRec, OutSpec } from "../types.ts";
import type { DappState, GamesPlan } from "./games-types.ts";

export const RANDOMNESS_UPDATE_EVENT = 1;
/** drand's default network: round 1 at this time, a round every 30 s. */
export const BEACON_GENESIS_MS = 1_595_431_050_000;
export const BEACON_PERIOD_MS = 30_000;
export const CHAIN_REACTION_GROUP = 0;

const ownId = (rng: Rng, group: number): { id: string; address: string } => {
  const id = rng.hex(31) + group.toString(16).padStart(2, "0");
  return { id, address: addressFromContractId(id) };
};

/** Draws the contract ids: the randomness oracle, the four furnaces, then Chain Reaction's V2 factory, V1 and hub. */
export function planGames(rng: Rng, feeder: DevnetAddress): GamesPlan {
  const randomness = ownId(rng, feeder.group);
  const furnaces = Array.from({ length: ADDRESS_GROUPS }, (_, group) => ({
    ...ownId(rng, group),
    group,
    chainIndex: group * ADDRESS_GROUPS + group,
  }));
  const g = CHAIN_REACTION_GROUP;
  return {
    randomness: {
      ...randomness,
      chainIndex: feeder.group * ADDRESS_GROUPS + feeder.group,
      feeder: feeder.address,
      updateEventIndex: RANDOMNESS_UPDATE_EVENT,
      periodMs: BEACON_PERIOD_MS,
    },
    furnaces,
    chainReaction: {
      chainIndex: g * ADDRESS_GROUPS + g,
      factoryV2: ownId(rng, g),
      v1: ownId(rng, g),
      hub: ownId(rng, g),
    },
  };
}

/** The round current at `ts` (drand numbering: round 1 at {@link BEACON_GENESIS_MS}). */
export const beaconRound = (ts: number): number =>
  Math.floor((ts - BEACON_GENESIS_MS) / BEACON_PERIOD_MS) + 1;
/** When a round becomes current. */
export const beaconRoundTime = (round: number): number => BEACON_GENESIS_MS + (round - 1) * BEACON_PERIOD_MS;

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * The randomness of a round (32 bytes as hex): a function of the seed and the round only, so a room on chain 0→0
 * uses the value the oracle posts on its own chain without reading that chain, and a reorg cannot change it.
 */
export const beaconRandomness = (seed: number, round: number): string =>
  sha256(`devnet-randomness/${seed}/${round}`);
/** Stand-in for the BLS signature of a round (96 bytes as hex). */
export const beaconSignature = (seed: number, round: number): string =>
  [1, 2, 3].map((k) => sha256(`devnet-signature/${seed}/${round}/${k}`)).join("");

/**
 * A guessing room's target from the randomness of round `lockedAtRound + 3`: the 32 bytes as a big-endian
 * U256, modulo the room's number range, plus 1 (the devnet's rule; GameRoom.ral's exact formula is unpublished).
 */
export const roomTarget = (randomness: string, numberRangeMax: bigint): bigint =>
  (BigInt(`0x${randomness}`) % numberRangeMax) + 1n;

/** Hex of the ASCII text of a hex id: how Token Furnace's `Burned.tokenBurned` carries the burned token. */
export const asciiHex = (text: string): string => Buffer.from(text, "utf8").toString("hex");

export const boolVal = (value: boolean): node.Val => ({ type: "Bool", value });

/** A contract's state of the given kind (a generator bug if it has another). */
export function stateOf<K extends DappState["kind"]>(
  c: ContractRec,
  kind: K,
): Extract<DappState, { kind: K }> {
  const s = c.dapp;
  if (s?.kind !== kind) throw new Error(`devnet: contract ${c.address} has no ${kind} state`);
  return s as Extract<DappState, { kind: K }>;
}

/** A caller's inputs gathered for a call: gas plus what it pays in. */
export interface Paid {
  caller: DevnetAddress;
  gas: number;
  g: NonNullable<ReturnType<Ledger["gather"]>>;
}

/**
 * The two steps of a user's call to game contracts: {@link GameCalls.pay} gathers the caller's inputs (before
 * any state changes, so a caller who cannot pay changes nothing); the module then touches and updates the
 * contracts; {@link GameCalls.commit} writes the script tx: the contracts' current outputs as contract inputs,
 * the payouts and the contracts' new outputs as generated outputs (none for a destroyed contract, which also
 * gets a ContractDestroyed system event and leaves the ledger).
 */
export interface GameCalls {
  pay(
    ctx: BlockCtx,
    caller: DevnetAddress,
    gasBase: number,
    alph: bigint,
    tokens?: Map<string, bigint>,
  ): Paid | undefined;
  commit(
    ctx: BlockCtx,
    paid: Paid,
    spec: {
      contracts: ContractRec[];
      /** Sub-contracts the call creates (a map entry of a room), each with its ContractCreated system event. */
      created?: { contract: ContractRec; parent: ContractRec }[];
      destroyed?: ContractRec[];
      payouts?: OutSpec[];
      events: EventSpec[];
      burned?: Map<string, bigint>;
    },
  ): void;
}

export function createGameCalls(deps: { ledger: Ledger; builder: TxBuilder }): GameCalls {
  const { ledger, builder } = deps;
  return {
    pay(ctx, caller, gasBase, alph, tokens) {
      const gas = builder.userGas(gasBase);
      const g = ledger.gather(caller, ctx.ts, BigInt(gas) * USER_GAS_PRICE + alph, tokens);
      return g && { caller, gas, g };
    },
    commit(ctx, paid, spec) {
      const destroyed = spec.destroyed ?? [];
      const inputs: OutRec[] = [...spec.contracts, ...destroyed].map((c) => builder.contractOutputOf(c));
      const destroyedEvents: EventSpec[] = destroyed.map((c) => ({
        contractAddress: DestroyContractEventAddresses[ctx.from]!,
        eventIndex: Contract.ContractDestroyedEventIndex,
        fields: [addressVal(c.address)],
      }));
      const created = spec.created ?? [];
      const createdEvents: EventSpec[] = created.map(({ contract, parent }) => ({
        contractAddress: CreateContractEventAddresses[ctx.from]!,
        eventIndex: Contract.ContractCreatedEventIndex,
        fields: [addressVal(contract.address), addressVal(parent.address), byteVec("")],
      }));
      const { txId, outputs } = builder.commitTx(ctx, {
        inputs: paid.g.inputs,
        contractInputs: inputs,
        fixed: [paid.g.change],
        generated: [
          ...(spec.payouts ?? []),
          ...[...spec.contracts, ...created.map((c) => c.contract)].map((c) => builder.contractSpec(c)),
        ],
        scriptOpt: builder.script(),
        gasAmount: paid.gas,
        gasPrice: USER_GAS_PRICE,
        ok: true,
        events: [...createdEvents, ...spec.events, ...destroyedEvents],
        ...(spec.burned ? { burned: spec.burned } : {}),
      });
      const keyOf = (c: ContractRec) =>
        outputs.find((o) => o.type === "ContractOutput" && o.address === c.address)!.key;
      for (const c of spec.contracts) c.outputKey = keyOf(c);
      for (const { contract } of created) {
        contract.createdTxId = txId;
        contract.outputKey = keyOf(contract);
        ledger.addContract(ctx, contract);
      }
      for (const c of destroyed) ledger.removeContract(ctx, c);
    },
  };
}

/** An asset output paying `amount` of `tokenId` (ALPH, or a token with dust ALPH) to `address`. */
export function payout(address: string, tokenId: string, amount: bigint, dust: bigint): OutSpec {
  if (tokenId === ALPH_TOKEN_ID) return { type: "AssetOutput", address, alph: amount, tokens: new Map() };
  return { type: "AssetOutput", address, alph: dust, tokens: new Map([[tokenId, amount]]) };
}
