/**
 * The plan of the devnet's DeFi dapps (Elexium, AlphBanX, DeadRare, MyOnion, Wormhole): their contract ids, drawn
 * from the seed right after the DEX and oracle plan, so their addresses are known before the blocks creating
 * them exist. Each dapp is homed on one intra-group chain g→g (chain index 5·g): every tx touching its contracts
 * is in a block of that chain, so a reorg of the chain undoes them with nothing else.
 */
import { addressFromContractId, subContractId } from "@alephium/web3";
import { ADDRESS_GROUPS } from "../../lib/chain/types.ts";
import type { Rng } from "../random.ts";

/** A planned contract. */
export interface DappContract {
  id: string;
  address: string;
}

/** A planned fungible token (or NFT) a dapp contract issues. */
export interface DappToken extends DappContract {
  symbol: string;
  name: string;
  decimals: number;
  totalSupply: bigint;
}

/** An Elexium pool: volatile (x·y = k) or stable (x³y + y³x = k on amounts scaled to 18 decimals). */
export interface ElexiumPool extends DappContract {
  token0: string;
  token1: string;
  stable: boolean;
}

export interface DefiPlan {
  /** Elexium on chain 0→0: a factory, its EX token and two dollar tokens, one volatile and one stable pool. */
  elexium: {
    chainIndex: number;
    factory: DappContract;
    /** EX (18 decimals), then the two stablecoins dUSDC and dUSDT (6 decimals). */
    tokens: DappToken[];
    /** [volatile ALPH/EX, stable dUSDC/dUSDT]; id = subContractId(factory, token0 ‖ token1 ‖ stable byte, 0). */
    pools: ElexiumPool[];
  };
  /** AlphBanX on the oracle's chain (2→2): it reads ALPH/USD from the devnet oracle. */
  alphbanx: {
    chainIndex: number;
    /** ABD stablecoin (9 decimals), its supply held by its own contract and paid out on loans. */
    abd: DappToken;
    /** ABX (9 decimals), issued to the group's users at deployment. */
    abx: DappToken;
    borrower: DappContract;
    loanManager: DappContract;
    stake: DappContract;
    auction: DappContract;
  };
  /** DeadRare on chain 1→1: the marketplace and a collection of NFTs (each a sub-contract issuing 1 unit). */
  deadrare: {
    chainIndex: number;
    marketplace: DappContract;
    collection: DappContract;
    nfts: DappToken[];
  };
  /** MyOnion.fun on chain 3→3: the TokenLauncher, the OnionRouter and the tokens users launch (in order). */
  myonion: {
    chainIndex: number;
    launcher: DappContract;
    router: DappContract;
    /** Launched tokens with their bonding-curve contracts (sub-contracts of the launcher). */
    tokens: (DappToken & { curve: DappContract })[];
  };
  /** The Wormhole bridge on chain 0→0: Governance, TokenBridge and one RemoteTokenPool (bridged USDT). */
  wormhole: {
    chainIndex: number;
    governance: DappContract;
    tokenBridge: DappContract;
    /** The TokenBridgeForChain of Ethereum; id = subContractId(tokenBridge, "01" ‖ u16be(2), 0). */
    bridgeForChain: DappContract;
    /** RemoteTokenPools; id = subContractId(tokenBridge, "02" ‖ u16be(tokenChain) ‖ originToken, 0). */
    pools: (DappToken & { tokenChain: number; originToken: string })[];
  };
}

/** State of a devnet/dapps contract: its role, named amounts and texts (copied whole by an undo snapshot). */
export interface DappState {
  role: string;
  num: Record<string, bigint>;
  text: Record<string, string>;
}

export const chainOfGroup = (group: number): number => group * ADDRESS_GROUPS + group;

const ref = (id: string): DappContract => ({ id, address: addressFromContractId(id) });
const own = (rng: Rng, group: number): DappContract => ref(rng.hex(31) + group.toString(16).padStart(2, "0"));
const token = (
  c: DappContract,
  symbol: string,
  name: string,
  decimals: number,
  supply: bigint,
): DappToken => ({
  ...c,
  symbol,
  name,
  decimals,
  totalSupply: supply * 10n ** BigInt(decimals),
});
const utf8Hex = (s: string): string => Buffer.from(s, "utf8").toString("hex");
export const u16be = (n: number): string => n.toString(16).padStart(4, "0");

/** Ethereum's USDT, the origin of the bridged token (20 bytes, left-padded to 32 as the bridge does). */
export const USDT_ETHEREUM = "dac17f958d2ee523a2206206994597c13d831ec7";
/** Wormhole chain id of Ethereum. */
export const WORMHOLE_ETHEREUM = 2;

/** Draws the DeFi dapps' ids (after the DEX and oracle plan: it shifts nothing drawn before it). */
export function createDefiPlan(rng: Rng): DefiPlan {
  // Elexium: group 0.
  const factory = own(rng, 0);
  const ex = token(own(rng, 0), "EX", "Devnet Elexium", 18, 3_150_000n);
  const usdc = token(own(rng, 0), "dUSDC", "Devnet USD Coin", 6, 50_000_000n);
  const usdt = token(own(rng, 0), "dUSDT", "Devnet Tether", 6, 50_000_000n);
  const pool = (a: string, b: string, stable: boolean): ElexiumPool => {
    const [token0, token1] = a < b ? [a, b] : [b, a];
    return {
      ...ref(subContractId(factory.id, token0 + token1 + (stable ? "01" : "00"), 0)),
      token0,
      token1,
      stable,
    };
  };
  const elexium: DefiPlan["elexium"] = {
    chainIndex: chainOfGroup(0),
    factory,
    tokens: [ex, usdc, usdt],
    pools: [pool("0".repeat(64), ex.id, false), pool(usdc.id, usdt.id, true)],
  };

  const alphbanx: DefiPlan["alphbanx"] = {
    chainIndex: chainOfGroup(2),
    abd: token(own(rng, 2), "ABD", "Devnet AlphBanX Dollar", 9, 1_000_000_000n),
    abx: token(own(rng, 2), "ABX", "Devnet AlphBanX", 9, 100_000_000n),
    borrower: own(rng, 2),
    loanManager: own(rng, 2),
    stake: own(rng, 2),
    auction: own(rng, 2),
  };

  const marketplace = own(rng, 1);
  const collection = own(rng, 1);
  const deadrare: DefiPlan["deadrare"] = {
    chainIndex: chainOfGroup(1),
    marketplace,
    collection,
    nfts: Array.from({ length: 6 }, (_, i) =>
      token(
        ref(subContractId(collection.id, i.toString(16).padStart(64, "0"), 1)),
        `DRK${i}`,
        `Devnet Rarity #${i}`,
        0,
        1n,
      ),
    ),
  };

  const launcher = own(rng, 3);
  const myonion: DefiPlan["myonion"] = {
    chainIndex: chainOfGroup(3),
    launcher,
    router: own(rng, 3),
    tokens: ["ONION", "SHALLOT", "LEEK"].map((symbol) => ({
      ...token(
        ref(subContractId(launcher.id, utf8Hex(symbol), 3)),
        symbol,
        `Devnet ${symbol[0]}${symbol.slice(1).toLowerCase()}`,
        18,
        1_000_000_000n,
      ),
      curve: ref(subContractId(launcher.id, `01${utf8Hex(symbol)}`, 3)),
    })),
  };

  const tokenBridge = own(rng, 0);
  const originToken = USDT_ETHEREUM.padStart(64, "0");
  const poolId = subContractId(tokenBridge.id, `02${u16be(WORMHOLE_ETHEREUM)}${originToken}`, 0);
  const wormhole: DefiPlan["wormhole"] = {
    chainIndex: chainOfGroup(0),
    governance: own(rng, 0),
    tokenBridge,
    bridgeForChain: ref(subContractId(tokenBridge.id, `01${u16be(WORMHOLE_ETHEREUM)}`, 0)),
    pools: [
      {
        // The bridge issues the whole u256 range to the pool; what is bridged in circulates.
        ...token(ref(poolId), "USDT", "Tether USD (AlphBridge)", 6, 0n),
        totalSupply: (1n << 256n) - 1n,
        tokenChain: WORMHOLE_ETHEREUM,
        originToken,
      },
    ],
  };
  return { elexium, alphbanx, deadrare, myonion, wormhole };
}
