/** Public surface of the normalizer (pure, no I/O). */
export { createStaticDappRegistry, DAPP, type DappContractRow, KNOWN_DAPP_CONTRACTS } from "./dapps.ts";
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
export * from "./taxonomy.ts";
