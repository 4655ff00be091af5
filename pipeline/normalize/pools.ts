/**
 * DEX pool knowledge for the normalizer: a read-only lookup (`PoolBook`) passed in the context, seeds for
 * known pools, and `extractPools()` — a pure function returning the pools a block's factory events create, so a
 * caller can keep its book up to date (`book.add(extractPools(raw))`) between blocks.
 */
import { ALPH_TOKEN_ID, type RawBlock } from "../../lib/chain/types.ts";
import { DAPP } from "../../lib/tokens/known-contracts.ts";
import { fieldOf, tokenAddressOf } from "./chain-utils.ts";

/** A pair/pool contract and the event layout of its dapp. */
export interface PoolInfo {
  /** Base58 address of the pool (pair) contract. */
  pool_address: string;
  /** Token ids (64 hex) as the pool orders them; ALPH is ALPH_TOKEN_ID. */
  token0_id: string;
  token1_id: string;
  dapp_id: string;
  /** Contract event index of `Swap(sender, amount0In, amount1In, amount0Out, amount1Out, to)`. */
  swap_event_index: number;
  /** Event index of `Mint(sender, amount0, amount1, liquidity)`, null when the layout is unknown. */
  mint_event_index: number | null;
  /** Event index of `Burn(sender, amount0, amount1, liquidity)`, null when the layout is unknown. */
  burn_event_index: number | null;
  /**
   * Stable (true) or volatile pool, from the factory's creation event; null (or absent) when the factory has no
   * such field.
   */
  stable?: boolean | null;
  /** Layout of Mint / Burn, see `LiquidityLayout`; absent = `ayin`. */
  liquidity_layout?: LiquidityLayout;
  /** The factory that announced the pool, when known (saved with the pool, it gives the layout back). */
  factory_address?: string;
}

/**
 * `ayin`: Mint/Burn(sender, amount0, amount1, liquidity). `velodrome` (Elexium, inferred): Mint(sender,
 * amount0, amount1), Burn(sender, to, amount0, amount1), no liquidity amount.
 */
export type LiquidityLayout = "ayin" | "velodrome";

export function isLiquidityLayout(v: string): v is LiquidityLayout {
  return v === "ayin" || v === "velodrome";
}

/** Lookup of known pools by contract address. */
export interface PoolBook {
  poolOf(poolAddress: string): PoolInfo | undefined;
}

/** A book the caller may grow between blocks (normalizeBlock itself never mutates it). */
export interface MutablePoolBook extends PoolBook {
  add(pools: Iterable<PoolInfo>): void;
  size(): number;
}

/** A DEX factory whose creation event announces new pools, and the layout of those pools. */
export interface PoolFactory {
  factory_address: string;
  dapp_id: string;
  /** Event index of the pool-created event and the positions of its ByteVec fields. */
  created_event_index: number;
  token0_field: number;
  token1_field: number;
  /** Field holding the pool contract id (ByteVec). */
  pool_field: number;
  swap_event_index: number;
  mint_event_index: number | null;
  burn_event_index: number | null;
  /** Field of the creation event holding the pool's stable flag (Bool), null when the layout has none. */
  stable_field: number | null;
  liquidity_layout: LiquidityLayout;
}

/** Ayin layout (alephium-dex TokenPair): Mint 0, Burn 1, Swap 2. */
export const AYIN_POOL_LAYOUT = {
  swap_event_index: 2,
  mint_event_index: 0,
  burn_event_index: 1,
  liquidity_layout: "ayin",
} as const;

/** Known factories: Ayin `PairCreated(token0, token1, pair, size)`; Elexium event 0 (token0 f0, token1 f1, pool f3). */
export const KNOWN_FACTORIES: readonly PoolFactory[] = [
  {
    factory_address: "vyrkJHG49TXss6pGAz2dVxq5o7mBXNNXAV18nAeqVT1R",
    dapp_id: DAPP.ayin,
    created_event_index: 0,
    token0_field: 0,
    token1_field: 1,
    pool_field: 2,
    stable_field: null,
    ...AYIN_POOL_LAYOUT,
  },
  {
    factory_address: "22oTtDJEMjNc9QAdmcZarnEzgkAooJp9gZy7RYBisniR5",
    dapp_id: DAPP.elexium,
    created_event_index: 0,
    token0_field: 0,
    token1_field: 1,
    pool_field: 3,
    // Elexium publishes no pool layout: Swap 3 comes from a third-party indexer, and it matches Velodrome's
    // order (Fees 0, Mint 1, Burn 2, Swap 3), which gives Mint and Burn.
    swap_event_index: 3,
    mint_event_index: 1,
    burn_event_index: 2,
    stable_field: 2,
    liquidity_layout: "velodrome",
  },
];

const USDT_ETH = "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00";
const AYIN = "1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800";
const WETH = "19246e8c2899bc258a1156e08466e3cdd3323da756d8a543c7fc911847b96f00";

/** Known Ayin pairs (token order = the pair's `getTokenPair()`; ALPH's all-zero id always sorts first). */
export const KNOWN_POOLS: readonly PoolInfo[] = [
  ["2A5R8KZQ3rhKYrW7bAS4JTjY9FCFLJg6HjQpqSFZBqACX", ALPH_TOKEN_ID, USDT_ETH],
  ["25ywM8iGxKpZWuGA5z6DXKGcZCXtPBmnbQyJEsjvjjWTy", ALPH_TOKEN_ID, AYIN],
  ["yXMFxdoKcE86W9NAyajc8Z3T3k2f5FGiHqHtuA69DYT1", ALPH_TOKEN_ID, WETH],
  ["21NEBCk8nj5JBKpS7eN8kX6xGJoLHNqTS3WBFnZ7q8L9m", AYIN, USDT_ETH],
].map(([pool_address, token0_id, token1_id]) => ({
  pool_address: pool_address!,
  token0_id: token0_id!,
  token1_id: token1_id!,
  dapp_id: DAPP.ayin,
  stable: null,
  ...AYIN_POOL_LAYOUT,
}));

/** Book over an initial set of pools; later `add()` calls overwrite by address. */
export function createPoolBook(initial: Iterable<PoolInfo> = KNOWN_POOLS): MutablePoolBook {
  const byAddress = new Map<string, PoolInfo>();
  const add = (pools: Iterable<PoolInfo>): void => {
    for (const p of pools) byAddress.set(p.pool_address, p);
  };
  add(initial);
  return { poolOf: (a) => byAddress.get(a), add, size: () => byAddress.size };
}

/** Lookup that first consults `extra` (e.g. pools created earlier in the same block), then `base`. */
export function overlayPools(base: PoolBook | undefined, extra: readonly PoolInfo[]): PoolBook {
  if (extra.length === 0 && base) return base;
  const byAddress = new Map(extra.map((p) => [p.pool_address, p]));
  return { poolOf: (a) => byAddress.get(a) ?? base?.poolOf(a) };
}

/**
 * Pools announced by known factories in a block, in event order. Pure; returns [] for a non-main-chain block
 * and skips conflicted txs, mirroring what `normalizeBlock` emits.
 */
export function extractPools(raw: RawBlock, factories: readonly PoolFactory[] = KNOWN_FACTORIES): PoolInfo[] {
  if (!raw.mainChain) return [];
  const conflicted = new Set(raw.block.conflictedTxs ?? []);
  const pools: PoolInfo[] = [];
  for (const ev of raw.events) {
    if (conflicted.has(ev.txId)) continue;
    const pool = poolFromFactoryEvent(ev, factories);
    if (pool) pools.push(pool);
  }
  return pools;
}

type FactoryEvent = {
  contractAddress: string;
  eventIndex: number;
  fields: RawBlock["events"][number]["fields"];
};

/** The pool announced by one event when it is a known factory's pool-created event. */
export function poolFromFactoryEvent(
  ev: FactoryEvent,
  factories: readonly PoolFactory[] = KNOWN_FACTORIES,
): PoolInfo | undefined {
  const r = decodePoolCreated(ev, factories);
  return typeof r === "object" ? r : undefined;
}

/**
 * The pool a factory's creation event announces, a sentence saying why it does not decode, or undefined when
 * the event is no factory's creation event.
 */
export function decodePoolCreated(
  ev: FactoryEvent,
  factories: readonly PoolFactory[] = KNOWN_FACTORIES,
): PoolInfo | string | undefined {
  const f = factories.find((x) => x.factory_address === ev.contractAddress);
  if (!f || ev.eventIndex !== f.created_event_index) return undefined;
  const token0 = fieldOf(ev.fields, f.token0_field, "ByteVec");
  const token1 = fieldOf(ev.fields, f.token1_field, "ByteVec");
  const poolId = fieldOf(ev.fields, f.pool_field, "ByteVec");
  const types = `[${ev.fields.map((x) => x.type).join(", ")}]`;
  if (!isId(token0) || !isId(token1) || !isId(poolId))
    return `pool created (event ${ev.eventIndex}) expects 32-byte ByteVec ids in fields ${f.token0_field}, ${f.token1_field} and ${f.pool_field} but got ${ev.fields.length} fields ${types}`;
  let stable: boolean | null = null;
  if (f.stable_field !== null) {
    const flag = ev.fields[f.stable_field];
    if (flag?.type !== "Bool" || typeof flag.value !== "boolean")
      return `pool created (event ${ev.eventIndex}) expects a Bool stable flag in field ${f.stable_field} but got ${ev.fields.length} fields ${types}`;
    stable = flag.value;
  }
  return {
    pool_address: tokenAddressOf(poolId),
    token0_id: token0,
    token1_id: token1,
    dapp_id: f.dapp_id,
    swap_event_index: f.swap_event_index,
    mint_event_index: f.mint_event_index,
    burn_event_index: f.burn_event_index,
    stable,
    liquidity_layout: f.liquidity_layout,
    factory_address: f.factory_address,
  };
}

function isId(v: string | undefined): v is string {
  return v !== undefined && /^[0-9a-f]{64}$/.test(v);
}
