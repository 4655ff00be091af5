/**
 * Decoder kinds: which layout a dapp contract's events (or, for AlphBanX, its method calls) follow. A contract
 * is bound to a kind by the built-in mainnet list (`KNOWN_DAPP_CONTRACTS`), by an operator's row in
 * `decoder_contracts` (the simulated network registers its own there), or by its parent: a contract created by
 * a contract of kind K gets `CHILD_KIND[K]` (a Chain Reaction room of its hub, a Furnace's burner NFT).
 */
export const DECODER_KIND = {
  /** DIA price oracle: 1 `OracleUpdate(key, value, timestamp)`. */
  diaPrice: "dia-price",
  /** DIA randomness oracle: 1 `OracleUpdate(round, randomness, signature)`. */
  diaRandom: "dia-random",
  /** Token Furnace: 0 `Burned(caller, tokenBurned, amount, nft, timestamp)`. */
  furnace: "furnace",
  /** A Furnace's BurnerNFT sub-contract (no events of its own). */
  furnaceNft: "furnace-nft",
  /** Chain Reaction FactoryChainReactionV2: six events that re-emit every game's. */
  chainReactionV2: "chainreaction-v2",
  /** Chain Reaction V1 (one game contract): five events without game id, fees or token. */
  chainReactionV1: "chainreaction-v1",
  /** Chain Reaction FactoryChainReaction (v1 factory): the V2 factory's six events without fees and token. */
  chainReactionV1Factory: "chainreaction-v1-factory",
  /**
   * A ChainReactionV3 game (a copy of the template the V2 factory makes): its five events are the factory's 1-5
   * without the game id, and the factory re-emits each; a copy's event counts only when no re-emit exists.
   */
  chainReactionV3Game: "chainreaction-v3-game",
  /** Number Guessing War hub: 0 `RoomCreated`. */
  guessingHub: "guessing-hub",
  /** Number Guessing War room (a hub's sub-contract): events 0-8. */
  guessingRoom: "guessing-room",
  /** Elexium pool factory (pools are learned from its creation event, as DEX pools). */
  elexiumFactory: "elexium-factory",
  /** DeadRare NFT marketplace: 0 listed, 1 sold, 2 cancelled, 3 price updated. */
  deadrare: "deadrare",
  /** MyOnion.fun TokenLauncher: 5 CreateToken, 6 CreateBondingCurve, 9 UpdateTokenDexPair. */
  myonionLauncher: "myonion-launcher",
  /** MyOnion.fun OnionRouter: 5 Trade. */
  myonionRouter: "myonion-router",
  /** MyOnion.fun FeeHandler: the upgradable contracts' owner and migration events 0-4 only. */
  myonionFeeHandler: "myonion-fee-handler",
  /** MyOnion.fun FeeCollector: 0 DepositFee, 1 HarvestFee. */
  myonionFeeCollector: "myonion-fee-collector",
  /** MyOnion.fun CommentTracker: 0-4 upgrades, 5 Comment, 6 UpdateRouterAddress. */
  myonionComments: "myonion-comments",
  /** MyOnion.fun ProfileTracker: 0-4 upgrades, 5 CreateProfile, 6 UpdateProfile, 7 UpdateRouterAddress, 8 referral settings. */
  myonionProfiles: "myonion-profiles",
  /** Wormhole (Alephium Bridge) governance: 0 `WormholeMessage`. */
  wormholeGovernance: "wormhole-governance",
  /** Wormhole TokenBridge (no events; its sub-contracts are the per-chain bridges, pools and handlers). */
  wormholeBridge: "wormhole-bridge",
  /** Wormhole TokenBridgeForChain: a script calling its method 7 `completeTransfer` redeems a transfer in. */
  wormholeBridgeForChain: "wormhole-bridge-for-chain",
  /** Wormhole BridgeRewardRouter (V1, V2): a script calling its method 0 `completeTransfer` redeems a transfer in. */
  wormholeRewardRouter: "wormhole-reward-router",
  /** Linx lending (Morpho-style markets): 4 MarketCreated, 10-17 supply … accrueInterest. */
  linxLending: "linx-lending",
  /** AlphBanX: operations inferred from the called method index and the caller's ALPH/ABD/ABX moves. */
  alphbanxBorrower: "alphbanx-borrower",
  alphbanxLoanManager: "alphbanx-loan-manager",
  alphbanxStake: "alphbanx-stake",
  alphbanxAuction: "alphbanx-auction",
  /** AlphBanX's ABD stablecoin and ABX token contracts (their ids are the tokens whose moves label operations). */
  alphbanxAbd: "alphbanx-abd",
  alphbanxAbx: "alphbanx-abx",
} as const;
export type DecoderKind = (typeof DECODER_KIND)[keyof typeof DECODER_KIND];

export const DECODER_KINDS: readonly DecoderKind[] = Object.values(DECODER_KIND);

/** Kind of the contracts a contract of the key's kind creates. */
export const CHILD_KIND: Partial<Record<DecoderKind, DecoderKind>> = {
  [DECODER_KIND.guessingHub]: DECODER_KIND.guessingRoom,
  [DECODER_KIND.furnace]: DECODER_KIND.furnaceNft,
};

/**
 * Contracts a factory announces in an event rather than creating them as sub-contracts (copies have no parent in
 * their ContractCreated): the announcing kind → the event, the field holding the new contract's id, its kind.
 */
export const ANNOUNCED_KIND: Partial<
  Record<DecoderKind, { eventIndex: number; field: number; kind: DecoderKind }>
> = {
  // FactoryChainReactionV2 0 `NewGameCreated(contractId, gameId, isFixedTokenId, tokenId)`.
  [DECODER_KIND.chainReactionV2]: { eventIndex: 0, field: 0, kind: DECODER_KIND.chainReactionV3Game },
};

/**
 * Events that replace a contract's code (MyOnion's upgradable contracts: 3 `MigrateApply(owner, changeCode)`,
 * 4 `MigrateWithFieldsApply(owner, changeCode, …)`): the kind → those event indexes and the new code's field.
 */
const MYONION_MIGRATION = { eventIndexes: [3, 4], codeField: 1 } as const;
export const CODE_MIGRATION: Partial<
  Record<DecoderKind, { eventIndexes: readonly number[]; codeField: number }>
> = {
  [DECODER_KIND.myonionLauncher]: MYONION_MIGRATION,
  [DECODER_KIND.myonionRouter]: MYONION_MIGRATION,
  [DECODER_KIND.myonionFeeHandler]: MYONION_MIGRATION,
  [DECODER_KIND.myonionComments]: MYONION_MIGRATION,
  [DECODER_KIND.myonionProfiles]: MYONION_MIGRATION,
};

export function isDecoderKind(value: string): value is DecoderKind {
  return (DECODER_KINDS as readonly string[]).includes(value);
}
