/**
 * The types of the devnet's games (randomness oracle, Token Furnace, Chain Reaction, Number Guessing War): their
 * plan and their contracts' states, apart from the code that plays them (games-common.ts) so that devnet/types.ts
 * can name them without importing that code.
 */
/** The DIA-like randomness oracle: where it lives, who posts and what. */
export interface DevnetRandomness {
  id: string;
  address: string;
  /** Home chain (g→g of the feeder's group), like the price oracle. */
  chainIndex: number;
  /** The feeder that deploys it and posts the rounds (the price oracle's). */
  feeder: string;
  /** Index of `OracleUpdate(round: U256, randomness: ByteVec 32 bytes, signature: ByteVec 96 bytes)`. */
  updateEventIndex: number;
  /** A round every 30 s of chain time, numbered like drand's ({@link beaconRound}). */
  periodMs: number;
}

/** A Token Furnace contract (one per group). */
export interface DevnetFurnace {
  id: string;
  address: string;
  group: number;
  /** Home chain g→g. */
  chainIndex: number;
}

/** Chain Reaction's contracts, all homed on chain 0→0. */
export interface DevnetChainReaction {
  chainIndex: number;
  /** FactoryChainReactionV2: creates the games and emits every game's events. */
  factoryV2: { id: string; address: string };
  /** The V1 game (one contract, ALPH only, its own events). */
  v1: { id: string; address: string };
  /** Number Guessing War GameHub: its rooms are its sub-contracts. */
  hub: { id: string; address: string };
}

/** The plan's part for these dapps (drawn after the rest of the plan). */
export interface GamesPlan {
  randomness: DevnetRandomness;
  furnaces: DevnetFurnace[];
  chainReaction: DevnetChainReaction;
}

/** Kinds of the contracts of these dapps (`DevnetContractKind`). */
export type GamesContractKind =
  | "random-oracle"
  | "furnace"
  | "furnace-nft"
  | "chainreaction-v2"
  | "chainreaction-v1"
  | "chainreaction-game"
  | "guessing-hub"
  | "guessing-room"
  | "guessing-map-entry";

/** A Chain Reaction round (chain) of a game. */
export interface RoundState {
  /** Number of the current or last round (0 before the first). */
  chainId: number;
  running: boolean;
  /** Idle: when the next round may start; running: when the next join (or boost) is due. */
  nextAt: number;
  /** Running: the round ends once this many joined and the timer ran out. */
  targetPlayers: number;
  players: string[];
  baseFee: bigint;
  pot: bigint;
  totalBurned: bigint;
  /** The timer: when the last player wins if nobody joins before. */
  deadline: number;
}

export interface GuessingPlayer {
  address: string;
  number: bigint;
}

/** State of a contract of these dapps, by kind. */
export type DappState =
  | { kind: "randomness"; lastRound: number }
  | { kind: "furnace"; nfts: number }
  /** A BurnerNFT: its index in its furnace, the furnace's group and id, and the burn that minted it. */
  | {
      kind: "furnace-nft";
      index: number;
      group: number;
      furnaceId: string;
      tokenBurned: string;
      amount: string;
    }
  | { kind: "cr-factory"; games: number; nextGameAt: number }
  | {
      kind: "cr-game";
      version: 1 | 2;
      gameIndex: number;
      tokenId: string;
      feesBps: number;
      round: RoundState;
    }
  | { kind: "hub"; rooms: number; nextRoomAt: number }
  | {
      kind: "room";
      index: number;
      creator: string;
      entryFee: bigint;
      maxPlayers: number;
      numberRangeMax: bigint;
      expiresAt: number;
      /** How many players may join: maxPlayers, or 0 / 1 for the rooms that are left to expire. */
      joinCap: number;
      players: GuessingPlayer[];
      pot: bigint;
      phase: "open" | "locked" | "claimable";
      lockedAtRound: number;
      target: bigint;
      nextAt: number;
    };
