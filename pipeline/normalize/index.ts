/** Public surface of the normalizer (pure, no I/O). */

export * from "../../lib/chain/taxonomy.ts";
export {
  type CodeChange,
  type CodeHashMismatch,
  createCodeHashBook,
  createDappBook,
  createDecoderBook,
  createStaticDappBook,
  DAPP,
  type DappContractRow,
  extractCodeChanges,
  extractContractDapps,
  extractContractKinds,
  KNOWN_DAPP_CONTRACTS,
  type LearnedKind,
  type MutableCodeHashBook,
  type MutableDappBook,
  type MutableDecoderBook,
  overlayDecoders,
} from "./dapps.ts";
export {
  baseTokenOf,
  type DecoderBook,
  type ExchangeBook,
  type NormalizeContext,
  type NormalizeResult,
  normalizeBlock,
  type OffloadedPayload,
} from "./normalize.ts";
export {
  createPoolBook,
  extractPools,
  isLiquidityLayout,
  KNOWN_FACTORIES,
  KNOWN_POOLS,
  type LiquidityLayout,
  type MutablePoolBook,
  overlayPools,
  type PoolBook,
  type PoolFactory,
  type PoolInfo,
} from "./pools.ts";
