/** Public surface of the normalizer (pure, no I/O). */

export * from "../../lib/chain/taxonomy.ts";
export {
  type CodeChange,
  type CodeHashMismatch,
  createCodeHashRegistry,
  createDappRegistry,
  createDecoderRegistry,
  createStaticDappRegistry,
  DAPP,
  type DappContractRow,
  extractCodeChanges,
  extractContractDapps,
  extractContractKinds,
  KNOWN_DAPP_CONTRACTS,
  type LearnedKind,
  type MutableCodeHashRegistry,
  type MutableDappRegistry,
  type MutableDecoderRegistry,
  overlayDecoders,
} from "./dapps.ts";
export {
  baseTokenOf,
  type DecoderRegistry,
  type ExchangeRegistry,
  type NormalizeContext,
  type NormalizeResult,
  normalizeBlock,
  type OffloadedPayload,
} from "./normalize.ts";
export {
  createPoolRegistry,
  extractPools,
  isLiquidityLayout,
  KNOWN_FACTORIES,
  KNOWN_POOLS,
  type LiquidityLayout,
  type MutablePoolRegistry,
  overlayPools,
  type PoolFactory,
  type PoolInfo,
  type PoolRegistry,
} from "./pools.ts";
