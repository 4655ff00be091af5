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
 */

/** Top-level categories (the API's `category` filter). */
export const CATEGORY = {
  dex: "dex",
  token: "token",
  contract: "contract",
  cex: "cex",
  transfer: "transfer",
  mining: "mining",
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
];

const priorities = new Map(TAXONOMY.map((e) => [`${e.category}/${e.sub_kind}/${e.type}`, e.priority]));

/** Main-event priority of a triple; throws on a triple missing from `TAXONOMY` (a normalizer bug). */
export function mainPriority(category: Category, subKind: SubKind, type: EventType): number {
  const p = priorities.get(`${category}/${subKind}/${type}`);
  if (p === undefined) throw new Error(`taxonomy has no entry ${category}/${subKind}/${type}`);
  return p;
}
