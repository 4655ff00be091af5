/**
 * The normalized-event taxonomy: every (category, sub_kind, type) triple the normalizer can emit, and the
 * priority used to pick each transaction's main event. `TAXONOMY.md` is the human-readable copy of this table.
 *
 * | category | sub_kind           | type          | prio | meaning                                                    |
 * | -------- | ------------------ | ------------- | ---- | ---------------------------------------------------------- |
 * | dex      | swap               | swap          | 100  | multi-hop swap aggregate (first token in → last token out) |
 * | dex      | buy / sell         | swap          |  95  | one pool swap; buy = trader receives the pool's base token |
 * | dex      | add_liquidity      | mint          |  90  | LP Mint event                                              |
 * | dex      | remove_liquidity   | burn          |  90  | LP Burn event                                              |
 * | token    | genesis_mint       | mint          |  85  | token issued when its contract was created                 |
 * | contract | failed             | script        |  80  | tx whose script failed (scriptExecutionOk = false)         |
 * | cex      | deposit / withdraw | token / alph  | 76/75| transfer to / from a known exchange address                |
 * | cex      | buy / sell         | trade         |  95  | exchange fill of a pair with enable_trades (trade watcher) |
 * | dex      | buy / sell         | evm_swap      |  95  | EVM pool swap of a pair with enable_trades (trade watcher) |
 * | transfer | send               | token         |  70  | token sent by the signer to another address                |
 * | transfer | payout             | token         |  65  | token paid by a contract to a third party                  |
 * | dex      | pool_created       | pair_created  |  60  | factory PairCreated event                                  |
 * | contract | created            | system        |  58  | system event -1 ContractCreated                            |
 * | contract | destroyed          | system        |  57  | system event -2 ContractDestroyed                          |
 * | contract | event              | undecoded     |  55  | any other contract event, fields as the node gives them    |
 * | transfer | send               | alph          |  50  | ALPH sent by the signer to another address                 |
 * | transfer | payout             | alph          |  45  | ALPH paid by a contract to a third party                   |
 * | contract | call               | script        |  40  | script tx that emitted no contract event                   |
 * | transfer | self               | alph          |  30  | tx paying only its own signer (UTXO consolidation)         |
 * | mining   | coinbase           | reward        |  20  | block reward (coinbase output 0)                           |
 * | mining   | uncle_reward       | reward        |  19  | ghost-uncle reward (coinbase outputs 1..n)                 |
 * | transfer | genesis_allocation | alph          |  10  | allocation output of a height-0 genesis block              |
 * | chain    | retraction         | reorg         |   5  | reorg notice: served events left the main chain (sink)     |
 * | chain    | late_block         | reorg         |   5  | reorg notice: a winning block below what pollers passed    |
 *
 * Dapp decoders' triples (oracle, token/burn, game, nft, launchpad, bridge, lending; 84–95) are in
 * `DAPP_ENTRIES` below and in `TAXONOMY.md`.
 */

/** Top-level categories (the API's `category` filter). */
export const CATEGORY = {
  dex: "dex",
  token: "token",
  contract: "contract",
  cex: "cex",
  transfer: "transfer",
  mining: "mining",
  oracle: "oracle",
  game: "game",
  nft: "nft",
  launchpad: "launchpad",
  bridge: "bridge",
  lending: "lending",
  /** Notices about the chain itself (reorgs), written by the events sink. */
  chain: "chain",
} as const;
export type Category = (typeof CATEGORY)[keyof typeof CATEGORY];

/** Sub-kinds (the API's `sub_kind` filter). */
export const SUB_KIND = {
  swap: "swap",
  buy: "buy",
  sell: "sell",
  addLiquidity: "add_liquidity",
  removeLiquidity: "remove_liquidity",
  poolCreated: "pool_created",
  genesisMint: "genesis_mint",
  failed: "failed",
  deposit: "deposit",
  withdraw: "withdraw",
  send: "send",
  payout: "payout",
  self: "self",
  created: "created",
  destroyed: "destroyed",
  event: "event",
  call: "call",
  coinbase: "coinbase",
  uncleReward: "uncle_reward",
  genesisAllocation: "genesis_allocation",
  // Dapp decoders (pipeline/normalize/decoders/).
  priceUpdate: "price_update",
  randomness: "randomness",
  adminChanged: "admin_changed",
  burn: "burn",
  gameCreated: "game_created",
  chainStarted: "chain_started",
  playerJoined: "player_joined",
  chainEnded: "chain_ended",
  chainTimeout: "chain_timeout",
  potBoosted: "pot_boosted",
  roomCreated: "room_created",
  roomJoined: "room_joined",
  roomLocked: "room_locked",
  roomClaimable: "room_claimable",
  roomClaimed: "room_claimed",
  roomRefunded: "room_refunded",
  roomDestroyed: "room_destroyed",
  roomExpired: "room_expired",
  roomBoosted: "room_boosted",
  listed: "listed",
  sold: "sold",
  cancelled: "cancelled",
  priceUpdated: "price_updated",
  tokenCreated: "token_created",
  curveCreated: "curve_created",
  graduated: "graduated",
  tokenUpdated: "token_updated",
  curveUpdated: "curve_updated",
  feeDeposited: "fee_deposited",
  feeHarvested: "fee_harvested",
  comment: "comment",
  profileCreated: "profile_created",
  profileUpdated: "profile_updated",
  ownerChange: "owner_change",
  migration: "migration",
  settingsChanged: "settings_changed",
  marketCreated: "market_created",
  supply: "supply",
  borrow: "borrow",
  accrueInterest: "accrue_interest",
  attestation: "attestation",
  transferOut: "transfer_out",
  transferIn: "transfer_in",
  message: "message",
  openLoan: "open_loan",
  addCollateral: "add_collateral",
  repay: "repay",
  closeLoan: "close_loan",
  withdrawCollateral: "withdraw_collateral",
  redeem: "redeem",
  liquidate: "liquidate",
  stake: "stake",
  requestUnstake: "request_unstake",
  claimUnstake: "claim_unstake",
  claimRewards: "claim_rewards",
  poolDeposit: "pool_deposit",
  poolClaim: "pool_claim",
  poolWithdraw: "pool_withdraw",
  /** Reorg notice: events a poller may have received left the main chain. */
  retraction: "retraction",
  /** Reorg notice: a winning-branch block whose events sort below what pollers may have passed. */
  lateBlock: "late_block",
} as const;
export type SubKind = (typeof SUB_KIND)[keyof typeof SUB_KIND];

/** Types: the concrete record kind (decoded event name, or which asset a transfer moved). */
export const TYPE = {
  swap: "swap",
  mint: "mint",
  burn: "burn",
  pairCreated: "pair_created",
  script: "script",
  system: "system",
  undecoded: "undecoded",
  alph: "alph",
  token: "token",
  reward: "reward",
  /** An exchange fill (trade watcher, off-chain). */
  trade: "trade",
  /** A swap in an EVM pool (trade watcher, off-chain). */
  evmSwap: "evm_swap",
  oracleUpdate: "oracle_update",
  furnaceBurn: "furnace_burn",
  chainReaction: "chain_reaction",
  chainReactionV1: "chain_reaction_v1",
  guessingWar: "guessing_war",
  marketplace: "marketplace",
  launch: "launch",
  launchTrade: "launch_trade",
  wormhole: "wormhole",
  alphbanxOp: "alphbanx_op",
  linxLending: "linx_lending",
  /** Owner changes, code migrations and settings of upgradable dapp contracts. */
  upgrade: "upgrade",
  /** A reorg notice (chain index 17, events sink). */
  reorg: "reorg",
} as const;
export type EventType = (typeof TYPE)[keyof typeof TYPE];

/** Payload of `contract/created/system` events (system event -1), read back by the registry processor. */
export interface ContractCreatedPayload {
  /** The new contract (base58). */
  contract_address: string;
  /** Its parent (a factory), or "" when created by a script. */
  parent_address: string;
  /** Hex of the standard interface id (`@std(id=…)`), or "" when none. */
  std_interface_id: string;
}

/** `dapp_id` of protocol-level events (coinbase, transfers, failed txs, system events of unattributed contracts). */
export const DAPP_ALEPHIUM = "alephium";
/** `dapp_id` of contract events whose contract is in no registry. */
export const DAPP_UNKNOWN = "unknown";

/** One row of the taxonomy. */
export interface TaxonomyEntry {
  category: Category;
  sub_kind: SubKind;
  type: EventType;
  /** Main-event priority: the highest-priority event of a tx is its main event (ties: lowest event_index). */
  priority: number;
  description: string;
}

const entry = (
  category: Category,
  sub_kind: SubKind,
  type: EventType,
  priority: number,
  description: string,
): TaxonomyEntry => ({ category, sub_kind, type, priority, description });

/** Dapp decoders' triples (pipeline/normalize/decoders/): ahead of transfers and generic events. */
const DAPP_ENTRIES: readonly TaxonomyEntry[] = [
  entry(
    "launchpad",
    "buy",
    "launch_trade",
    95,
    "MyOnion.fun router Trade buying the launched token with ALPH",
  ),
  entry("launchpad", "sell", "launch_trade", 95, "MyOnion.fun router Trade selling the launched token"),
  entry("nft", "sold", "marketplace", 94, "DeadRare listing sold (event 1)"),
  entry(
    "bridge",
    "transfer_out",
    "wormhole",
    93,
    "Wormhole token transfer out (WormholeMessage with a transfer payload)",
  ),
  entry(
    "bridge",
    "transfer_in",
    "wormhole",
    93,
    "Wormhole redemption paid to an address (inferred from outputs)",
  ),
  entry("lending", "open_loan", "alphbanx_op", 93, "AlphBanX loan opened (inferred from method index)"),
  entry(
    "lending",
    "liquidate",
    "alphbanx_op",
    93,
    "AlphBanX liquidation (any loan-manager call, low confidence)",
  ),
  entry("lending", "redeem", "alphbanx_op", 93, "AlphBanX ABD redeemed for ALPH (inferred)"),
  entry("game", "chain_ended", "chain_reaction", 92, "Chain Reaction V2 round ended, winner paid"),
  entry("game", "chain_ended", "chain_reaction_v1", 92, "Chain Reaction V1 round ended, winner paid"),
  entry(
    "game",
    "room_claimed",
    "guessing_war",
    92,
    "Number Guessing War payout claimed (also forced claims)",
  ),
  entry("launchpad", "token_created", "launch", 92, "MyOnion.fun token created (launcher event 5)"),
  entry("lending", "close_loan", "alphbanx_op", 92, "AlphBanX loan closed (inferred)"),
  entry("lending", "repay", "alphbanx_op", 92, "AlphBanX debt repaid (inferred)"),
  entry("lending", "add_collateral", "alphbanx_op", 91, "AlphBanX collateral added (inferred)"),
  entry("lending", "withdraw_collateral", "alphbanx_op", 91, "AlphBanX collateral withdrawn (inferred)"),
  entry("lending", "stake", "alphbanx_op", 91, "AlphBanX ABX staked (inferred)"),
  entry("lending", "request_unstake", "alphbanx_op", 91, "AlphBanX ABX unstake requested (inferred)"),
  entry("lending", "claim_unstake", "alphbanx_op", 91, "AlphBanX unstaked ABX claimed (inferred)"),
  entry("lending", "claim_rewards", "alphbanx_op", 91, "AlphBanX staking rewards claimed (inferred)"),
  entry("lending", "pool_deposit", "alphbanx_op", 91, "AlphBanX auction pool deposit of ABD (inferred)"),
  entry("lending", "pool_claim", "alphbanx_op", 91, "AlphBanX auction pool claim (inferred)"),
  entry("lending", "pool_withdraw", "alphbanx_op", 91, "AlphBanX auction pool withdrawal (inferred)"),
  entry("game", "room_refunded", "guessing_war", 91, "Number Guessing War entry refunded"),
  entry("launchpad", "graduated", "launch", 91, "MyOnion.fun token moved to its DEX pair (launcher event 9)"),
  entry("game", "player_joined", "chain_reaction", 90, "Chain Reaction V2 player joined a round"),
  entry("game", "player_joined", "chain_reaction_v1", 90, "Chain Reaction V1 player joined a round"),
  entry("game", "room_joined", "guessing_war", 90, "Number Guessing War player joined a room"),
  entry("nft", "listed", "marketplace", 90, "DeadRare NFT listed (event 0)"),
  entry("game", "chain_timeout", "chain_reaction", 89, "Chain Reaction V2 round timed out"),
  entry("game", "chain_timeout", "chain_reaction_v1", 89, "Chain Reaction V1 round timed out"),
  entry("launchpad", "curve_created", "launch", 89, "MyOnion.fun bonding curve created (launcher event 6)"),
  entry("game", "game_created", "chain_reaction", 88, "Chain Reaction V2 game created by the factory"),
  entry("game", "chain_started", "chain_reaction", 88, "Chain Reaction V2 round started"),
  entry("game", "chain_started", "chain_reaction_v1", 88, "Chain Reaction V1 round started"),
  entry("game", "room_created", "guessing_war", 88, "Number Guessing War room created by the hub"),
  entry("nft", "cancelled", "marketplace", 88, "DeadRare listing cancelled (event 2)"),
  entry("nft", "price_updated", "marketplace", 88, "DeadRare listing price changed (event 3)"),
  entry("token", "burn", "furnace_burn", 87, "Token Furnace Burned event"),
  entry("game", "pot_boosted", "chain_reaction", 87, "Chain Reaction V2 pot boosted"),
  entry("game", "pot_boosted", "chain_reaction_v1", 87, "Chain Reaction V1 pot boosted"),
  entry("game", "room_boosted", "guessing_war", 87, "Number Guessing War pot boosted"),
  entry("game", "room_locked", "guessing_war", 86, "Number Guessing War room locked on a randomness round"),
  entry("game", "room_claimable", "guessing_war", 86, "Number Guessing War target drawn, room claimable"),
  entry("game", "room_destroyed", "guessing_war", 86, "Number Guessing War room destroyed, creator cut paid"),
  entry("game", "room_expired", "guessing_war", 86, "Number Guessing War room expired"),
  entry("bridge", "message", "wormhole", 86, "Wormhole message that is not a token transfer"),
  entry("lending", "call", "alphbanx_op", 86, "AlphBanX call of a method outside the operation map"),
  entry("bridge", "attestation", "wormhole", 86, "Wormhole token attestation (WormholeMessage, payload 2)"),
  entry("lending", "liquidate", "linx_lending", 93, "Linx lending liquidation (event 16)"),
  entry("lending", "borrow", "linx_lending", 92, "Linx lending borrow (event 12)"),
  entry("lending", "repay", "linx_lending", 92, "Linx lending repay (event 13)"),
  entry("lending", "supply", "linx_lending", 91, "Linx lending supply (event 10)"),
  entry("lending", "withdraw", "linx_lending", 91, "Linx lending withdraw (event 11)"),
  entry("lending", "add_collateral", "linx_lending", 91, "Linx lending collateral supplied (event 14)"),
  entry("lending", "withdraw_collateral", "linx_lending", 91, "Linx lending collateral withdrawn (event 15)"),
  entry("lending", "market_created", "linx_lending", 88, "Linx lending market created (event 4)"),
  entry("lending", "accrue_interest", "linx_lending", 85, "Linx lending interest accrued (event 17)"),
  entry("launchpad", "token_updated", "launch", 86, "MyOnion.fun token metadata updated (launcher event 7)"),
  entry(
    "launchpad",
    "curve_updated",
    "launch",
    86,
    "MyOnion.fun token bonding curve changed (launcher event 8)",
  ),
  entry("launchpad", "fee_deposited", "launch", 85, "MyOnion.fun fee deposited (FeeCollector event 0)"),
  entry("launchpad", "fee_harvested", "launch", 86, "MyOnion.fun fees harvested (FeeCollector event 1)"),
  entry("launchpad", "comment", "launch", 86, "MyOnion.fun comment posted (CommentTracker event 5)"),
  entry("launchpad", "profile_created", "launch", 86, "MyOnion.fun profile created (ProfileTracker event 5)"),
  entry("launchpad", "profile_updated", "launch", 86, "MyOnion.fun profile updated (ProfileTracker event 6)"),
  entry(
    "contract",
    "owner_change",
    "upgrade",
    84,
    "Upgradable dapp contract owner change (commenced or applied)",
  ),
  entry(
    "contract",
    "migration",
    "upgrade",
    84,
    "Upgradable dapp contract code migration (commenced or applied)",
  ),
  entry("contract", "settings_changed", "upgrade", 84, "Dapp contract settings changed (router, referral)"),
  entry("oracle", "price_update", "oracle_update", 84, "DIA price oracle OracleUpdate"),
  entry("oracle", "randomness", "oracle_update", 84, "DIA randomness oracle OracleUpdate"),
  entry("oracle", "admin_changed", "oracle_update", 84, "DIA oracle AdminChanged"),
];

/** Every triple the normalizer emits, highest priority first. */
export const TAXONOMY: readonly TaxonomyEntry[] = [
  entry("dex", "swap", "swap", 100, "Multi-hop swap aggregate: first hop's token in → last hop's token out"),
  entry("dex", "buy", "swap", 95, "Swap in one pool where the trader receives the pool's base token"),
  entry("dex", "sell", "swap", 95, "Swap in one pool where the trader gives the pool's base token"),
  entry("dex", "add_liquidity", "mint", 90, "Liquidity added to a pool (pair Mint event)"),
  entry("dex", "remove_liquidity", "burn", 90, "Liquidity removed from a pool (pair Burn event)"),
  entry("token", "genesis_mint", "mint", 85, "Token supply issued when its contract was created"),
  entry("contract", "failed", "script", 80, "Transaction whose script failed (scriptExecutionOk = false)"),
  entry(
    "cex",
    "buy",
    "trade",
    95,
    "Exchange fill where the taker bought the base (trade watcher, off-chain)",
  ),
  entry("cex", "sell", "trade", 95, "Exchange fill where the taker sold the base (trade watcher, off-chain)"),
  entry("dex", "buy", "evm_swap", 95, "EVM pool swap where the taker received the base (trade watcher)"),
  entry("dex", "sell", "evm_swap", 95, "EVM pool swap where the taker gave the base (trade watcher)"),
  entry("cex", "deposit", "token", 76, "Token transfer to a known exchange address"),
  entry("cex", "withdraw", "token", 76, "Token transfer from a known exchange address"),
  entry("cex", "deposit", "alph", 75, "ALPH transfer to a known exchange address"),
  entry("cex", "withdraw", "alph", 75, "ALPH transfer from a known exchange address"),
  entry("transfer", "send", "token", 70, "Token sent by the signer to another address (change excluded)"),
  entry(
    "transfer",
    "payout",
    "token",
    65,
    "Token paid out by a contract to an address other than the signer",
  ),
  entry("dex", "pool_created", "pair_created", 60, "Pool created by a known DEX factory"),
  entry("contract", "created", "system", 58, "System event -1 ContractCreated"),
  entry("contract", "destroyed", "system", 57, "System event -2 ContractDestroyed"),
  entry(
    "contract",
    "event",
    "undecoded",
    55,
    "Contract event without a decoder; payload.fields as given by the node",
  ),
  entry("transfer", "send", "alph", 50, "ALPH sent by the signer to another address (change excluded)"),
  entry("transfer", "payout", "alph", 45, "ALPH paid out by a contract to an address other than the signer"),
  entry("contract", "call", "script", 40, "Successful script transaction that emitted no contract event"),
  entry("transfer", "self", "alph", 30, "Transaction whose outputs all go back to the signer"),
  entry("mining", "coinbase", "reward", 20, "Block reward (coinbase output 0)"),
  entry(
    "mining",
    "uncle_reward",
    "reward",
    19,
    "Ghost-uncle reward (coinbase outputs 1..n, in ghostUncles order)",
  ),
  entry("transfer", "genesis_allocation", "alph", 10, "Allocation output of a genesis (height 0) block"),
  ...DAPP_ENTRIES,
  // Reorg notices (chain index 17), written by the events sink, not the normalizer: lib/events/notices.ts.
  entry(
    "chain",
    "retraction",
    "reorg",
    5,
    "Reorg notice: the events of a block that readers may have served left the main chain",
  ),
  entry(
    "chain",
    "late_block",
    "reorg",
    5,
    "Reorg notice: a winning-branch block whose events sort below what pollers may have passed",
  ),
];

const priorities = new Map(TAXONOMY.map((e) => [`${e.category}/${e.sub_kind}/${e.type}`, e.priority]));

/** Main-event priority of a triple; throws on a triple missing from `TAXONOMY` (a normalizer bug). */
export function mainPriority(category: Category, subKind: SubKind, type: EventType): number {
  const p = priorities.get(`${category}/${subKind}/${type}`);
  if (p === undefined) throw new Error(`taxonomy has no entry ${category}/${subKind}/${type}`);
  return p;
}
