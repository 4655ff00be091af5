/** Public surface of the normalizer (pure, no I/O). */

export * from "../../lib/chain/taxonomy.ts";
export {
  createDappRegistry,
  createStaticDappRegistry,
  DAPP,
  type DappContractRow,
  extractContractDapps,
  KNOWN_DAPP_CONTRACTS,
  type MutableDappRegistry,
} from "./dapps.ts";
export {
  baseTokenOf,
  type ExchangeRegistry,
  type NormalizeContext,
  type NormalizeResult,
  normalizeBlock,
  type OffloadedPayload,
} from "./normalize.ts";
export {
  createPoolRegistry,
  extractPools,
  KNOWN_FACTORIES,
  KNOWN_POOLS,
  type MutablePoolRegistry,
  overlayPools,
  type PoolFactory,
  type PoolInfo,
  type PoolRegistry,
} from "./pools.ts";
