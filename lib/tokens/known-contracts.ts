/**
 * Known mainnet contracts and the dapps they belong to. Seeding writes them into Postgres
 * (`contracts.dapp_id`), where the normalizer reads its attribution; the normalizer also keeps them
 * as a built-in fallback. Addresses come from public sources (the dapps' deployments, DefiLlama
 * adapters, DIA docs); token contracts are listed under the dapp that issued them. A row's `decoder` binds
 * the contract to the layout its events (or calls) follow (`lib/dapps/kinds.ts`).
 */
import type { DecoderKind } from "../dapps/kinds.ts";

/** One seed row. */
export interface DappContractRow {
  /** Base58 contract address. */
  contract_address: string;
  /** Stable dapp id used in `NormalizedEvent.dapp_id` (lowercase, kebab-case). */
  dapp_id: string;
  /** Human label of the contract inside its dapp. */
  label: string;
  /** Decoder kind of the contract's events or calls, when a dapp decoder knows them. */
  decoder?: DecoderKind;
}

/** Dapp ids of the seed list. */
export const DAPP = {
  ayin: "ayin",
  elexium: "elexium",
  dia: "dia-oracle",
  alphbanx: "alphbanx",
  tokenFurnace: "furnace",
  chainReaction: "chainreaction",
  wormhole: "wormhole",
  myonion: "myonion",
  deadrare: "deadrare",
} as const;

/** Seed list of known mainnet contracts (no duplicates; one dapp per contract). */
export const KNOWN_DAPP_CONTRACTS: readonly DappContractRow[] = [
  // Ayin (Uniswap-V2 style DEX)
  {
    contract_address: "vyrkJHG49TXss6pGAz2dVxq5o7mBXNNXAV18nAeqVT1R",
    dapp_id: DAPP.ayin,
    label: "Pair factory",
  },
  {
    contract_address: "2A5R8KZQ3rhKYrW7bAS4JTjY9FCFLJg6HjQpqSFZBqACX",
    dapp_id: DAPP.ayin,
    label: "Pair ALPH/USDT",
  },
  {
    contract_address: "25ywM8iGxKpZWuGA5z6DXKGcZCXtPBmnbQyJEsjvjjWTy",
    dapp_id: DAPP.ayin,
    label: "Pair ALPH/AYIN",
  },
  {
    contract_address: "yXMFxdoKcE86W9NAyajc8Z3T3k2f5FGiHqHtuA69DYT1",
    dapp_id: DAPP.ayin,
    label: "Pair ALPH/WETH",
  },
  {
    contract_address: "21NEBCk8nj5JBKpS7eN8kX6xGJoLHNqTS3WBFnZ7q8L9m",
    dapp_id: DAPP.ayin,
    label: "Pair AYIN/USDT",
  },
  {
    contract_address: "vj1SmG6q4gMTA5dRB9TB4pJfyBXdTSNRFbJu2CC38Jw9",
    dapp_id: DAPP.ayin,
    label: "Router (Retro V1)",
  },
  {
    contract_address: "vT49PY8ksoUL6NcXiZ1t2wAmC7tTPRfFfER8n3UCLvXy",
    dapp_id: DAPP.ayin,
    label: "AYIN token",
  },
  {
    contract_address: "zst5zMzizEeFYFis6DNSknY5GCYTpM85D3yXeRLe2ug3",
    dapp_id: DAPP.ayin,
    label: "xAYIN token / liquid staking",
  },
  // Elexium (v2-style + stable pools)
  {
    contract_address: "22oTtDJEMjNc9QAdmcZarnEzgkAooJp9gZy7RYBisniR5",
    dapp_id: DAPP.elexium,
    label: "Pair factory",
    decoder: "elexium-factory",
  },
  {
    contract_address: "23XEjbtTNN2FtcJryavvfMf6VwgVK22uiw5T6N85kjFzX",
    dapp_id: DAPP.elexium,
    label: "Voting escrow",
  },
  {
    contract_address: "28LgMeQGdvtXfsvWhpNNVx1DoSiz7TzrATv9qxMQP5is9",
    dapp_id: DAPP.elexium,
    label: "EX token",
  },
  // DIA oracles
  {
    contract_address: "285zrkZTPpUCpjKg9E3z238VmpUBQEAbESGsJT6yX7Rod",
    dapp_id: DAPP.dia,
    label: "Price oracle",
    decoder: "dia-price",
  },
  {
    contract_address: "v1v4cBXP9L7M9ryZZCx7tuXuNb9pnDLGb3JJkPBpbR1Z",
    dapp_id: DAPP.dia,
    label: "Randomness oracle",
    decoder: "dia-random",
  },
  // AlphBanX (ABD stablecoin)
  {
    // Medium confidence (openABX): the fee-table contract its UI calls for borrower operations.
    contract_address: "28QGP95rnmZYKRBEsBeGBTdLHetoSE9nxEatVrtuN2bEF",
    dapp_id: DAPP.alphbanx,
    label: "Borrower operations",
    decoder: "alphbanx-borrower",
  },
  {
    contract_address: "tpxjsWJSaUh5i7XzNAsTWMRtD9QvDTV9zmMNeHHS6jQB",
    dapp_id: DAPP.alphbanx,
    label: "Loan manager",
    decoder: "alphbanx-loan-manager",
  },
  {
    contract_address: "28Mhs2tczfKJDUq7seTzaRctZXUhqkMzikrehxAHy2kVu",
    dapp_id: DAPP.alphbanx,
    label: "Stake manager",
    decoder: "alphbanx-stake",
  },
  {
    contract_address: "29YL53teVrvK2o4P2cVej8aCGN7iQS8mE86bgxA2oFWa3",
    dapp_id: DAPP.alphbanx,
    label: "Auction manager",
    decoder: "alphbanx-auction",
  },
  {
    contract_address: "258k9T6WqezTLdfGvHixXzK1yLATeSPuyhtcxzQ3V2pqV",
    dapp_id: DAPP.alphbanx,
    label: "ABX token",
    decoder: "alphbanx-abx",
  },
  {
    contract_address: "288xqicj5pfGWuxJLKYU78Pe55LENz4ndGXRoykz7NL2K",
    dapp_id: DAPP.alphbanx,
    label: "ABD token",
    decoder: "alphbanx-abd",
  },
  // Token Furnace: one contract per group
  {
    contract_address: "21ekPmzVCwV3fH1XmajtCVWjnDsLxHt14PWdwodk16Zyh",
    dapp_id: DAPP.tokenFurnace,
    label: "Furnace group 0",
    decoder: "furnace",
  },
  {
    contract_address: "21toXY23zRXeTKZnEKtfVMCzM3h8kZhrrJV3fMf31VoiY",
    dapp_id: DAPP.tokenFurnace,
    label: "Furnace group 1",
    decoder: "furnace",
  },
  {
    contract_address: "28xL678QAegTFSLJNPmCYuZ9cs2ra22mHYoKyTHCXQAVF",
    dapp_id: DAPP.tokenFurnace,
    label: "Furnace group 2",
    decoder: "furnace",
  },
  {
    contract_address: "26MPtth6JVpNMV4EWFUDyrBPMQWpVfSUWPZNE9Kqvymw8",
    dapp_id: DAPP.tokenFurnace,
    label: "Furnace group 3",
    decoder: "furnace",
  },
  {
    contract_address: "25VLW8gfNgWmG2ai77ZE1N77AL47Dj14orR7NrESFQGA3",
    dapp_id: DAPP.tokenFurnace,
    label: "BurnerNFT template group 0",
  },
  {
    contract_address: "yhUuyBed4fGf9QKPxFHeM6dHf8Kvp7R9ZzimAqQX9cmW",
    dapp_id: DAPP.tokenFurnace,
    label: "BurnerNFT template group 1",
  },
  {
    contract_address: "x7DamzDESbTq7S2WqmuNMj1m3SCEwNLx4uttipyWgQjT",
    dapp_id: DAPP.tokenFurnace,
    label: "BurnerNFT template group 2",
  },
  {
    contract_address: "2AiRqoXv4x76m9xS7RTmQrevrwDGRBKNgFBiAYd7hvDKx",
    dapp_id: DAPP.tokenFurnace,
    label: "BurnerNFT template group 3",
  },
  // Chain Reaction (notrustverify/chainreaction, mainnet deployments, all group 0)
  {
    contract_address: "xGsqXrYMRGgamWuMLRKadr3Vpay5thcGDK5e5QvZ432f",
    dapp_id: DAPP.chainReaction,
    label: "ChainReaction V1",
    decoder: "chainreaction-v1",
  },
  {
    contract_address: "ygkPHaAVFB7jVwDZjb3VZgPTuC24rto5YRfHR84SKFEP",
    dapp_id: DAPP.chainReaction,
    label: "FactoryChainReaction (V1 factory)",
  },
  {
    contract_address: "23HSGCxnEZpPTbn3RVR4MXt5q8bYL4DKBEYetfD9DZqiw",
    dapp_id: DAPP.chainReaction,
    label: "ChainReactionV3 template",
  },
  {
    // Games are copies of the template; the factory re-emits every game's events, so only it is decoded.
    contract_address: "27td2f29Ub5z6hJcUwhXwqsfVVpoit6cWkz8SkksqGNYo",
    dapp_id: DAPP.chainReaction,
    label: "FactoryChainReactionV2",
    decoder: "chainreaction-v2",
  },
  {
    contract_address: "y429JcyDand2BdciDyj8mJdDearHuYiUWSH9jhZusLZ5",
    dapp_id: DAPP.chainReaction,
    label: "GameRoom template",
  },
  {
    // Number Guessing War hub: its rooms are sub-contracts, learned from its ContractCreated events.
    contract_address: "23k3Jcc83wAW8G5nmwG3tcMmrEyxKmvSa7thxb24XWiy5",
    dapp_id: DAPP.chainReaction,
    label: "GameHubFactory",
    decoder: "guessing-hub",
  },
  // Wormhole fork ("Alephium Bridge")
  {
    contract_address: "23Fj7xr1pxWfYLixz3aBC3u5dUJVpAjXArbpiYWxeGjQT",
    dapp_id: DAPP.wormhole,
    label: "TokenBridge",
    decoder: "wormhole-bridge",
  },
  {
    contract_address: "uvVP76UfwQ1fmPTZWojUGYY2tKyuKe7Br76KDecfMbjM",
    dapp_id: DAPP.wormhole,
    label: "Governance",
    decoder: "wormhole-governance",
  },
  // MyOnion.fun launchpad
  {
    contract_address: "28P3FfodKZqBQ9zGhgnd86WUfDqd4WLqSyZBmXFHgJFZq",
    dapp_id: DAPP.myonion,
    label: "TokenLauncher",
    decoder: "myonion-launcher",
  },
  {
    contract_address: "29c4EEH1aZr5HDumULCFp1eJN1bWftojCGepqTpovyQhd",
    dapp_id: DAPP.myonion,
    label: "OnionRouter",
    decoder: "myonion-router",
  },
  {
    contract_address: "25yXCxAdnzMgHFVyF963hEYKGzt8hVQtqUXkoKGQKmcNs",
    dapp_id: DAPP.myonion,
    label: "ONION token",
  },
  // DeadRare NFT marketplace
  {
    contract_address: "xtUinNqtQyEnZHWqgbWVpvdJbZZTbywh6BM6iNkvEgCF",
    dapp_id: DAPP.deadrare,
    label: "Marketplace",
    decoder: "deadrare",
  },
];
