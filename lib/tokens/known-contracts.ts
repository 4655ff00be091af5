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
  /**
   * The code hash its decoder's layout was read from (the artifact's `codeHash`, blake2b of the bytecode deployed
   * at this address), when the artifact is public; a live contract with another hash was upgraded or migrated.
   */
  code_hash?: string;
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
  linx: "linx",
} as const;

/** Artifact code hashes (`codeHash` of each `.ral.json`, at the commit the deployment was made from). */
const CODE_HASH = {
  /** notrustverify/token-furnace@e20cb41 (generation 1, 2024-12), @1ffdf36 (2), @d72580f (3, current). */
  furnace1: "50ccbe01cffce5726f4970af1bd140ad734c437e114593f7ef66b28bc13fedac",
  furnace2: "d0e8cba96b5dfdb2fd41df2553d98529bacd65e3ec91d424aea8e07292c2b3e3",
  furnace3: "b1fc1809498587ee52f79c339c41533972a701865f38a1e9e05ab1dcf31b64e2",
  /** alephium/wormhole-fork@5cb35cf `alephium/artifacts/` (every mainnet contract bytecode-verified). */
  wormholeGovernance: "7ebf06319b04aef7a7013a42ea2b7fccb3fc86178c27240aa2b2678d9068d9c7",
  wormholeTokenBridge: "3921ab78ca073b5125b2ff7e4232e72f2c1c62554bbc8f81d39e769e6bcf349c",
  wormholeBridgeForChain: "58443a1005d6791f07d0701f4ef91ec367777ab67be27990a6b8fcb7c84e7240",
  wormholeLocalPool: "6330d3736eef41d3bc9c5026d0608def44267cc00ed8d8be0620d01f4627f035",
  wormholeRemotePool: "1887a5c2bc109b742c33e7c8aaa448d600e258cec66dbd7ff188b17fca3da2fd",
  wormholeAttestHandler: "a8d5b3de6a6267d4a12eb793dc90832b0b0e5b84f54c5458d0fedfe73dc0871c",
  wormholeFactory: "b8f3d38c07e360496aaf83fe93eefc04ee4fee57fb5102a628a6c394c67c2e6a",
  wormholeSequence: "69f7a18c525aa6707771af5733f39e89bde6ee39ddcc8001c98fd1220c5191c9",
  wormholeRouter: "213e716a4d9125a71678f579c770a9721e5d4b1c95822f2f623f3ae27cc0f76b",
  wormholeRouterV2: "8f42eca7dec231419f3b3f19e944bd7127d86fdfb35b751c1515c57650c85c07",
  /** notrustverify/myonion-tracker@a19b834 `artifacts/` (nine contracts bytecode-verified; five upgradable). */
  myonionLauncher: "464b1641fb13b6963f5d1046e901500e202ee939f6653eab50407c5b152100f6",
  myonionRouter: "333646eb5fd44384550d0291de7a624dd300494a000082bf4cd82761e6f57154",
  myonionFeeHandler: "5a9e4a6d03f7045a9bbf66449155cd43ce759474ab1e60ed4474e2d77c0ee4a3",
  myonionFeeCollector: "b9869938bde02e371b216765f4a248764f889af0bacac7204cbd397db01844f8",
  myonionToken: "a2800413eb2c5c23d48068db23df5f8eeaba04653e12c8ed59d589720d96dadd",
  myonionBondingPair: "38fb19a70c8e44ba3c5601bf42848f56cd68e5deafb4aa5f536f8541715c32cd",
  myonionDexPair: "080844157ec1adcd711a727e6b36f638c3b7a35fa19c2734d3d41c9ac2e506ed",
  myonionComments: "bcd6af3a3b5e4439b39f63f1290b40af5aa9dce0f486dbdb2fc861028d68396e",
  myonionProfiles: "1201d5d80c35870d66de46f6b645972a97e75214f5badd91c2f9de72ae8f80da",
} as const;

/** The four contracts (groups 0-3) of one Token Furnace generation. */
function furnaceGeneration(
  generation: 1 | 2 | 3,
  addresses: readonly [string, string, string, string],
  code_hash: string,
): DappContractRow[] {
  return addresses.map((contract_address, group) => ({
    contract_address,
    dapp_id: DAPP.tokenFurnace,
    label: `Furnace generation ${generation} group ${group}`,
    decoder: "furnace" as const,
    code_hash,
  }));
}

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
  // Token Furnace: three generations of one contract per group. Generation 1 emits the burned token id as its
  // raw 32 bytes, 2 and 3 as its 64-character hex text (notrustverify/token-furnace deployments' history).
  ...furnaceGeneration(
    1,
    [
      "2B79zGi87FUaSKpVGJuh86AwoTEXFPVi7yYMUHcEdt5s5",
      "27AS79Wh4LRAJrSW7PuosCDLTPdKHAyrnZi85ogS5KPRA",
      "23jbXcoQnEpDM9boLPviMcNGdkumaR6K4o74j9vzNNHi1",
      "29sbr7cD11Xw29QA9GkPK3jdsfHMVaK18MES7V1bCryCE",
    ],
    CODE_HASH.furnace1,
  ),
  ...furnaceGeneration(
    2,
    [
      "27DE37cfLqs7Ejb4dAFK2sPdk9xvZdkTNGv7GtV9rtmB5",
      "vFkEpbPEEAgdVBxNjkDgCeD32jN9EhzAoYWFGankvKWG",
      "tjAf88iRu5wyELRRFoPQjwxxLMsbM6qHgboJzKR6TV45",
      "wVbuh9X3eQTRBjNbXp2Uo6aL672R1hgMS3CNH5WJgJUz",
    ],
    CODE_HASH.furnace2,
  ),
  ...furnaceGeneration(
    3,
    [
      "21ekPmzVCwV3fH1XmajtCVWjnDsLxHt14PWdwodk16Zyh",
      "21toXY23zRXeTKZnEKtfVMCzM3h8kZhrrJV3fMf31VoiY",
      "28xL678QAegTFSLJNPmCYuZ9cs2ra22mHYoKyTHCXQAVF",
      "26MPtth6JVpNMV4EWFUDyrBPMQWpVfSUWPZNE9Kqvymw8",
    ],
    CODE_HASH.furnace3,
  ),
  // BurnerNFT templates: generations 1 and 2 share theirs.
  ...[
    "yo48pWbHpaU1xmxf82c3FwT8tepiR8KtmTvjMoVvchCT",
    "2AN1hKLygzuimfDuEhZdxYC3pfLrJYELTTofEHVd9vsjn",
    "281LgnJT1b5PxKgWrFgCrcYtvX9y5ne1jueYBpQKrABMT",
    "22cCBpqMbmGomFGbSG4WwQZRKhAWrzrQiTcsJJW6yYVg6",
  ].map((contract_address, group) => ({
    contract_address,
    dapp_id: DAPP.tokenFurnace,
    label: `BurnerNFT template generations 1-2 group ${group}`,
  })),
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
    decoder: "chainreaction-v1-factory",
  },
  {
    contract_address: "23HSGCxnEZpPTbn3RVR4MXt5q8bYL4DKBEYetfD9DZqiw",
    dapp_id: DAPP.chainReaction,
    label: "ChainReactionV3 template",
  },
  {
    // Games are copies of the V3 template (kind chainreaction-v3-game, learned from NewGameCreated); the factory
    // re-emits every game's events, and a game event counts once.
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
  // Wormhole fork ("Alephium Bridge", alephium/wormhole-fork mainnet deployments, all group 0). Only Governance
  // emits; transfers in are read from the method a script calls (TokenBridgeForChain 7, a reward router's 0).
  {
    contract_address: "23Fj7xr1pxWfYLixz3aBC3u5dUJVpAjXArbpiYWxeGjQT",
    dapp_id: DAPP.wormhole,
    label: "TokenBridge",
    decoder: "wormhole-bridge",
    code_hash: CODE_HASH.wormholeTokenBridge,
  },
  {
    contract_address: "uvVP76UfwQ1fmPTZWojUGYY2tKyuKe7Br76KDecfMbjM",
    dapp_id: DAPP.wormhole,
    label: "Governance",
    decoder: "wormhole-governance",
    code_hash: CODE_HASH.wormholeGovernance,
  },
  {
    // subContractId(TokenBridge, 01 ‖ u16(2)): the TokenBridgeForChain of Ethereum.
    contract_address: "25gEReFwVDksCkufrocWjSa4Xocn1qjByK2LZMqmD4okK",
    dapp_id: DAPP.wormhole,
    label: "TokenBridgeForChain Ethereum",
    decoder: "wormhole-bridge-for-chain",
    code_hash: CODE_HASH.wormholeBridgeForChain,
  },
  {
    // subContractId(TokenBridge, 01 ‖ u16(4)): the TokenBridgeForChain of BSC.
    contract_address: "2ARfCMRaGVVjprshQmTqnUDJWnWs5S7voUUFugxhiF15R",
    dapp_id: DAPP.wormhole,
    label: "TokenBridgeForChain BSC",
    decoder: "wormhole-bridge-for-chain",
    code_hash: CODE_HASH.wormholeBridgeForChain,
  },
  {
    contract_address: "w4Ej7s4f1Sj6e3hbrtt5Hdvfpx1vzY14Et4ZYMTmcdE7",
    dapp_id: DAPP.wormhole,
    label: "BridgeRewardRouter",
    decoder: "wormhole-reward-router",
    code_hash: CODE_HASH.wormholeRouter,
  },
  {
    contract_address: "yoUmrH9piKrxxsPMWAmm9d1Fyk9dEgixeZYAX4Lzfr9m",
    dapp_id: DAPP.wormhole,
    label: "BridgeRewardRouterV2",
    decoder: "wormhole-reward-router",
    code_hash: CODE_HASH.wormholeRouterV2,
  },
  {
    contract_address: "23pqgMWF1aLGmK5GE6zDAHQ33P2jVMincSqAivQFjdUc7",
    dapp_id: DAPP.wormhole,
    label: "TokenBridgeForChain template",
    code_hash: CODE_HASH.wormholeBridgeForChain,
  },
  {
    contract_address: "246vs8tqCM4JAX5cMuvgF9DYPdckcCsNae3eCdBAnYkrK",
    dapp_id: DAPP.wormhole,
    label: "LocalTokenPool template",
    code_hash: CODE_HASH.wormholeLocalPool,
  },
  {
    contract_address: "wdK8zKQLr6ugsTDpcux8SoJu3vMezCULGTBpmLyRCjmh",
    dapp_id: DAPP.wormhole,
    label: "RemoteTokenPool template",
    code_hash: CODE_HASH.wormholeRemotePool,
  },
  {
    contract_address: "wimTVscnuGM55FqrmP7ZaGW5zBXuNX8RXRsDcjBuc7Yj",
    dapp_id: DAPP.wormhole,
    label: "AttestTokenHandler template",
    code_hash: CODE_HASH.wormholeAttestHandler,
  },
  {
    contract_address: "23LGuHatB3RCa4Y5rQSXPTh5FBK1wW94rnRptGhfu53aX",
    dapp_id: DAPP.wormhole,
    label: "UnexecutedSequence template",
    code_hash: CODE_HASH.wormholeSequence,
  },
  {
    contract_address: "27jS3K8a7oDEAEZ1AsvmZrgqonCx3Y1CBhYGs4NrWTc95",
    dapp_id: DAPP.wormhole,
    label: "TokenBridgeFactory",
    code_hash: CODE_HASH.wormholeFactory,
  },
  // MyOnion.fun launchpad (notrustverify/myonion-tracker mainnet deployments, group 0). TokenLauncher, OnionRouter,
  // FeeHandler, CommentTracker and ProfileTracker are upgradable: their events 0-4 are owner changes and migrations.
  {
    contract_address: "28P3FfodKZqBQ9zGhgnd86WUfDqd4WLqSyZBmXFHgJFZq",
    dapp_id: DAPP.myonion,
    label: "TokenLauncher",
    decoder: "myonion-launcher",
    code_hash: CODE_HASH.myonionLauncher,
  },
  {
    contract_address: "29c4EEH1aZr5HDumULCFp1eJN1bWftojCGepqTpovyQhd",
    dapp_id: DAPP.myonion,
    label: "OnionRouter",
    decoder: "myonion-router",
    code_hash: CODE_HASH.myonionRouter,
  },
  {
    contract_address: "237JZHPqJycByNCeHVeMRYQ9trccnpAw1QSs1RVNqx3EF",
    dapp_id: DAPP.myonion,
    label: "FeeHandler",
    decoder: "myonion-fee-handler",
    code_hash: CODE_HASH.myonionFeeHandler,
  },
  {
    contract_address: "25L8T5dLwEuhbKEjEz3bRs4KEZ3Dv8WogncQAe5WSYQto",
    dapp_id: DAPP.myonion,
    label: "FeeCollector",
    decoder: "myonion-fee-collector",
    code_hash: CODE_HASH.myonionFeeCollector,
  },
  {
    contract_address: "262sFbZfqxaUDWnsv4xQUndXrkEPNc24dwoLCi9adBJS3",
    dapp_id: DAPP.myonion,
    label: "CommentTracker",
    decoder: "myonion-comments",
    code_hash: CODE_HASH.myonionComments,
  },
  {
    contract_address: "28C1nUP4vy3pJRHQzL8R6FrFBJ45RHrA3TRK2Rrm4gJxX",
    dapp_id: DAPP.myonion,
    label: "ProfileTracker",
    decoder: "myonion-profiles",
    code_hash: CODE_HASH.myonionProfiles,
  },
  {
    contract_address: "25yXCxAdnzMgHFVyF963hEYKGzt8hVQtqUXkoKGQKmcNs",
    dapp_id: DAPP.myonion,
    label: "ONION token",
    code_hash: CODE_HASH.myonionToken,
  },
  {
    contract_address: "25pRYEELMySfPLEiz2HY5hPNzAS5otGQi7cNZ59R9YSvb",
    dapp_id: DAPP.myonion,
    label: "BondingPair template",
    code_hash: CODE_HASH.myonionBondingPair,
  },
  {
    contract_address: "27qdmLYDQmBK38MYWT89FtbEGFwM7n94Xhn4mVHCVtc39",
    dapp_id: DAPP.myonion,
    label: "DexPair template",
    code_hash: CODE_HASH.myonionDexPair,
  },
  // DeadRare NFT marketplace
  {
    contract_address: "xtUinNqtQyEnZHWqgbWVpvdJbZZTbywh6BM6iNkvEgCF",
    dapp_id: DAPP.deadrare,
    label: "Marketplace",
    decoder: "deadrare",
  },
  // Linx lending (Morpho-style markets in one contract; layouts from ThinEdgeLabs/linx-app-backend's indexer).
  {
    contract_address: "vQcfta4Mm32L7Xsb7tYF2rrR76JWxjNv3oia8GPK6x71",
    dapp_id: DAPP.linx,
    label: "Lending markets",
    decoder: "linx-lending",
  },
];
