/**
 * What the devnet creates, drawn from the seed right after the key pairs and before genesis: the tokens
 * (ids and metadata), the DEX factory id and the pairs it will create (their ids are derived like Ayin's,
 * subContractId(factory, token0 ++ token1)), and the price oracle. So the addresses of pools and of the oracle
 * are known before their blocks exist: the demo registers them for prices at start, whatever the chain's height.
 */
import { addressFromContractId, subContractId } from "@alephium/web3";
import { ADDRESS_GROUPS, ALPH_TOKEN_ID } from "../lib/chain/types.ts";
import { createDefiPlan, type DefiPlan } from "./dapps/defi-plan.ts";
import { planGames } from "./dapps/games-common.ts";
import type { GamesPlan } from "./dapps/games-types.ts";
import type { Accounts } from "./ledger.ts";
import type { Rng } from "./random.ts";
import type { DevnetOracle, DevnetPlannedPool, ResolvedDevnetOptions, TokenMeta } from "./types.ts";

const TOKEN_NAMES = [
  "Aurora",
  "Basalt",
  "Cobalt",
  "Dune",
  "Ember",
  "Fjord",
  "Garnet",
  "Harbor",
  "Indigo",
  "Jade",
];

/** Group whose intra-group chain homes the oracle (and runs its feeder's script txs). */
export const ORACLE_GROUP = 2;
/** Event index of `OracleUpdate(key: ByteVec, value: U256, timestamp: U256)` (DIA's layout). */
export const ORACLE_UPDATE_EVENT = 1;
/** Decimals of oracle values (DIA posts 8-decimal USD values). */
export const ORACLE_VALUE_DECIMALS = 8;

/** One oracle feed: its key, the level its value wanders around, how much it moves per post and its bounds. */
export interface OracleFeed {
  key: string;
  usd: number;
  /** Standard deviation of one post's relative move. */
  vol: number;
  min: number;
  max: number;
}

export const ORACLE_FEEDS: readonly OracleFeed[] = [
  { key: "ALPH/USD", usd: 0.6, vol: 0.004, min: 0.3, max: 1 },
  { key: "BTC/USD", usd: 65_000, vol: 0.0015, min: 40_000, max: 100_000 },
  { key: "ETH/USD", usd: 3_200, vol: 0.002, min: 2_000, max: 5_000 },
  { key: "USDT/USD", usd: 1, vol: 0.0002, min: 0.995, max: 1.005 },
];

export interface PlannedTokenRec {
  id: string;
  address: string;
  group: number;
  meta: TokenMeta;
}

export interface Plan extends GamesPlan {
  tokens: PlannedTokenRec[];
  factory: { id: string; address: string } | undefined;
  pairs: DevnetPlannedPool[];
  oracle: DevnetOracle;
  /** Elexium, AlphBanX, DeadRare, MyOnion and Wormhole (drawn after the oracle). */
  defi: DefiPlan;
}

/** A contract id of a group, not derived from a parent (its last byte is the group). */
const ownContractId = (rng: Rng, group: number): string => rng.hex(31) + group.toString(16).padStart(2, "0");

/**
 * Draws the plan. Token i is issued on chain (i % 4)→(i % 4) by a user of that group; the pairs are the first
 * `pools` of: ALPH with each token (those of group 0 first, then issuance order), then each two tokens (issuance
 * order, ids sorted within a pair as Ayin sorts them).
 */
export function createPlan(rng: Rng, opts: ResolvedDevnetOptions, accounts: Accounts): Plan {
  const tokens: PlannedTokenRec[] = [];
  for (let n = 0; n < opts.tokens; n++) {
    const group = n % ADDRESS_GROUPS;
    const decimals = rng.pick([18, 18, 6, 9, 8, 0]);
    const word = TOKEN_NAMES[n % TOKEN_NAMES.length]!;
    const minter = rng.pick(accounts.usersByGroup[group]!);
    const totalSupply = rng.bigint(1_000_000n, 1_000_000_000n) * 10n ** BigInt(decimals);
    const id = ownContractId(rng, group);
    tokens.push({
      id,
      address: addressFromContractId(id),
      group,
      meta: {
        symbol: `${word.slice(0, 3).toUpperCase()}${n}`,
        name: `Devnet ${word} ${n}`,
        decimals,
        totalSupply,
        minter: minter.address,
      },
    });
  }
  let factory: Plan["factory"];
  const pairs: DevnetPlannedPool[] = [];
  if (opts.pools > 0) {
    const id = ownContractId(rng, 0);
    factory = { id, address: addressFromContractId(id) };
    // ALPH pairs of the tokens issued in the DEX's group first: group-0 users hold those soonest.
    const byGroup = [...tokens.filter((t) => t.group === 0), ...tokens.filter((t) => t.group !== 0)];
    const candidates: [string, string][] = byGroup.map((t) => [ALPH_TOKEN_ID, t.id]);
    for (let i = 0; i < tokens.length; i++)
      for (let j = i + 1; j < tokens.length; j++) {
        const a = tokens[i]!.id;
        const b = tokens[j]!.id;
        candidates.push(a < b ? [a, b] : [b, a]);
      }
    for (const [token0, token1] of candidates.slice(0, opts.pools)) {
      const pairId = subContractId(id, token0 + token1, 0);
      pairs.push({ id: pairId, address: addressFromContractId(pairId), token0, token1 });
    }
  }
  const oracleId = ownContractId(rng, ORACLE_GROUP);
  return {
    tokens,
    factory,
    pairs,
    oracle: {
      id: oracleId,
      address: addressFromContractId(oracleId),
      chainIndex: ORACLE_GROUP * ADDRESS_GROUPS + ORACLE_GROUP,
      keys: ORACLE_FEEDS.map((f) => f.key),
      feeder: accounts.feeder.address,
      updateEventIndex: ORACLE_UPDATE_EVENT,
      valueDecimals: ORACLE_VALUE_DECIMALS,
    },
    ...planGames(rng, accounts.feeder),
    defi: createDefiPlan(rng),
  };
}
