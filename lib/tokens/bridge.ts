/**
 * Wormhole ("Alephium Bridge") mainnet mapping of remote tokens to their Alephium RemoteTokenPool ids,
 * and its translation into bridged-token rows. Derived from the bridge's mainnet token list (rows with
 * targetChainId 255, i.e. tokens imported into Alephium); the reverse rows (ALPH exported) are not
 * bridged *into* the registry and are left out.
 */

/** One imported token of the bridge list, as published by the bridge. */
export interface WormholeImport {
  symbol: string;
  decimals: number;
  /** Wormhole chain id of the origin chain (2 Ethereum, 4 BSC). */
  tokenChainId: number;
  /** EVM token address on the origin chain. */
  originTokenId: string;
  /** Alephium token id (= RemoteTokenPool contract id). */
  bridgeTokenId: string;
}

export const WORMHOLE_MAINNET_IMPORTS: readonly WormholeImport[] = [
  {
    symbol: "DAI",
    decimals: 18,
    tokenChainId: 2,
    originTokenId: "0x6b175474e89094c44da98b954eedeac495271d0f",
    bridgeTokenId: "3d0a1895108782acfa875c2829b0bf76cb586d95ffa4ea9855982667cc73b700",
  },
  {
    symbol: "USDC",
    decimals: 6,
    tokenChainId: 2,
    originTokenId: "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48",
    bridgeTokenId: "722954d9067c5a5ad532746a024f2a9d7a18ed9b90e27d0a3a504962160b5600",
  },
  {
    symbol: "USDT",
    decimals: 6,
    tokenChainId: 2,
    originTokenId: "0xdac17f958d2ee523a2206206994597c13d831ec7",
    bridgeTokenId: "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00",
  },
  {
    symbol: "WBTC",
    decimals: 8,
    tokenChainId: 2,
    originTokenId: "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599",
    bridgeTokenId: "383bc735a4de6722af80546ec9eeb3cff508f2f68e97da19489ce69f3e703200",
  },
  {
    symbol: "WETH",
    decimals: 18,
    tokenChainId: 2,
    originTokenId: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
    bridgeTokenId: "19246e8c2899bc258a1156e08466e3cdd3323da756d8a543c7fc911847b96f00",
  },
  {
    symbol: "USDT",
    decimals: 18,
    tokenChainId: 4,
    originTokenId: "0x55d398326f99059ff775485246999027b3197955",
    bridgeTokenId: "7ff5e72636f640eb2c28056df3b6879e4c86933505abebf566518ad396335700",
  },
  {
    symbol: "USDC",
    decimals: 18,
    tokenChainId: 4,
    originTokenId: "0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d",
    bridgeTokenId: "75e1e9f91468616a371fe416430819bf5386a3e6a258864c574271a404ec8900",
  },
  {
    symbol: "WBNB",
    decimals: 18,
    tokenChainId: 4,
    originTokenId: "0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c",
    bridgeTokenId: "c1a33b163fc45db6b8466ee78d20c61072b6aac07baa37ffbf33a3dec9f17800",
  },
];

/** Wormhole chain id → the registry's EVM chain (id of the `chains` table) and explorer. */
const WORMHOLE_CHAINS: Record<number, { chainId: number; name: string; explorer: string }> = {
  2: { chainId: 1, name: "ethereum", explorer: "https://etherscan.io/token/" },
  4: { chainId: 56, name: "bsc", explorer: "https://bscscan.com/token/" },
};

/** A bridged-token row as stored (the surrogate `id` is assigned by the database). */
export interface BridgedRowInput {
  native_token_id: string;
  chain_id: number;
  contract_address: string;
  mapping_kind: "legacy_ticker_bridge" | "wormhole_remote_pool";
  origin_wormhole_chain_id: number | null;
  origin_token_id_hex: string | null;
  alephium_contract_id_hex: string | null;
  external_asset_id: string | null;
  origin_evm_contract_address: string | null;
  wormhole_pool_decimals: number | null;
  origin_wormhole_chain_name: string | null;
  origin_token_explorer_url: string | null;
}

/** Maps one imported bridge token to its row; pure. Unknown origin chains yield null. */
export function wormholeRow(entry: WormholeImport): BridgedRowInput | null {
  const chain = WORMHOLE_CHAINS[entry.tokenChainId];
  if (!chain) return null;
  const evm = entry.originTokenId.toLowerCase();
  return {
    native_token_id: entry.bridgeTokenId.toLowerCase(),
    chain_id: chain.chainId,
    contract_address: evm,
    mapping_kind: "wormhole_remote_pool",
    origin_wormhole_chain_id: entry.tokenChainId,
    // The bridge left-pads 20-byte EVM addresses to 32 bytes in its token ids.
    origin_token_id_hex: `0x${evm.slice(2).padStart(64, "0")}`,
    alephium_contract_id_hex: `0x${entry.bridgeTokenId.toLowerCase()}`,
    external_asset_id: null,
    origin_evm_contract_address: evm,
    wormhole_pool_decimals: entry.decimals,
    origin_wormhole_chain_name: chain.name,
    origin_token_explorer_url: `${chain.explorer}${evm}`,
  };
}

/** Every mainnet bridged row. */
export function wormholeMainnetRows(): BridgedRowInput[] {
  return WORMHOLE_MAINNET_IMPORTS.map(wormholeRow).filter((r): r is BridgedRowInput => r !== null);
}
