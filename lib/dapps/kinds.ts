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
  /** Wormhole (Alephium Bridge) governance: 0 `WormholeMessage`. */
  wormholeGovernance: "wormhole-governance",
  /** Wormhole TokenBridge (redemptions are inferred from its calls). */
  wormholeBridge: "wormhole-bridge",
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

export function isDecoderKind(value: string): value is DecoderKind {
  return (DECODER_KINDS as readonly string[]).includes(value);
}
