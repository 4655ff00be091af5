/**
 * The normalizer: a pure function from one raw block (node BlockEntry + its contract events) to the common
 * `NormalizedEvent` rows. No I/O; the same input always yields the same output. Taxonomy and main-event rule:
 * `taxonomy.ts` / `TAXONOMY.md`. Dapp events are decoded by kind (`decoders/`); the kinds, like pools, come in
 * through the context and are learned by the caller between blocks.
 */
import type { node } from "@alephium/web3";
import { type ContractCreatedPayload, DAPP_ALEPHIUM, DAPP_UNKNOWN } from "../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID, eventId, type NormalizedEvent, type RawBlock } from "../../lib/chain/types.ts";
import { contractIdOf, fieldOf, hasShape, ratio, senderOf, tokenAddressOf, u256 } from "./chain-utils.ts";
import { type CodeHashMismatch, extractCodeChanges, extractContractKinds, overlayDecoders } from "./dapps.ts";
import {
  type DecodeFailure,
  EVENT_DECODERS,
  inferAlphBanXOps,
  inferWormholeRedemptions,
  isFailure,
} from "./decoders/index.ts";
import {
  type ContractEvent,
  contractOutputs,
  type DecoderBook,
  type Draft,
  dappOf,
  draft,
  isAssetOutput,
  type NormalizeContext,
  type TxScope,
} from "./draft.ts";
import { extractMarkets, overlayMarkets } from "./markets.ts";
import { decodePoolCreated, extractPools, KNOWN_FACTORIES, overlayPools, type PoolInfo } from "./pools.ts";

export type { DecoderBook, ExchangeBook, NormalizeContext } from "./draft.ts";

/** A payload moved out of its event: the sink stores it under `ref` (= the event's `payload_ref`). */
export interface OffloadedPayload {
  ref: string;
  event_id: string;
  payload: Record<string, unknown>;
}

/**
 * Output of `normalizeBlock`: `events` in id order (tx_index, then event_index), and the offloaded payloads whose
 * events carry `payload_ref = ref` and `payload = {}`. `ref` is the event id, so it is deterministic and unique.
 */
export interface NormalizeResult {
  events: NormalizedEvent[];
  offloaded: OffloadedPayload[];
}

const NO_DECODERS: DecoderBook = { kindOf: () => undefined, addressesOf: () => [] };

/**
 * Normalizes one block. Returns no events for a non-main-chain block (the sink retracts it) and skips the
 * block's `conflictedTxs`. Every other tx yields ≥ 1 event, exactly one with `is_main: true`.
 */
export function normalizeBlock(raw: RawBlock, ctx: NormalizeContext): NormalizeResult {
  const result: NormalizeResult = { events: [], offloaded: [] };
  if (!raw.mainChain) return result;
  const { block } = raw;
  const conflicted = new Set(block.conflictedTxs ?? []);
  const eventsByTx = new Map<string, ContractEvent[]>();
  for (const ev of raw.events) {
    const list = eventsByTx.get(ev.txId);
    if (list) list.push(ev);
    else eventsByTx.set(ev.txId, [ev]);
  }
  // A pair created earlier in this block is already a known pool for later swaps of the block; so is a
  // contract's decoder kind learned from its parent (a guessing hub's room).
  const pools = overlayPools(ctx.pools, extractPools(raw, ctx.factories ?? KNOWN_FACTORIES));
  const decoders = ctx.decoders
    ? overlayDecoders(ctx.decoders, extractContractKinds(raw, ctx.decoders))
    : NO_DECODERS;
  // A market created earlier in this block is known to its later txs (a tx's own MarketCreated comes first).
  const blockMarkets = ctx.decoders ? extractMarkets(raw, decoders) : [];
  const last = block.transactions.length - 1;
  const txIndexOf = new Map(block.transactions.map((t, i) => [t.unsigned.txId, i]));
  // Migrations in this block apply to the events of its later transactions.
  const migratedAt = new Map<string, { txIndex: number; code_hash: string }>();
  if (ctx.codeHashes)
    for (const c of extractCodeChanges(raw, decoders)) {
      const at = txIndexOf.get(c.tx_id);
      if (at !== undefined && !migratedAt.has(c.contract_address))
        migratedAt.set(c.contract_address, { txIndex: at, code_hash: c.code_hash });
    }
  const mismatchAt =
    (txIndex: number) =>
    (address: string): CodeHashMismatch | undefined => {
      const m = migratedAt.get(address);
      const expected = ctx.codeHashes?.expectedOf(address);
      if (m && m.txIndex < txIndex && expected !== undefined)
        return m.code_hash === expected ? undefined : { expected, live: m.code_hash };
      return ctx.codeHashes?.mismatchOf(address, block.timestamp);
    };

  block.transactions.forEach((tx, txIndex) => {
    const txId = tx.unsigned.txId;
    if (conflicted.has(txId)) return;
    let drafts: Draft[];
    if (block.height > 0 && txIndex === last) drafts = coinbaseDrafts(block, tx);
    else if (block.height === 0) drafts = genesisDrafts(tx);
    else {
      const events = eventsByTx.get(txId) ?? [];
      const scope: TxScope = {
        tx,
        sender: senderOf(tx),
        ctx,
        pools,
        decoders,
        markets: overlayMarkets(
          ctx.markets,
          blockMarkets.filter((m) => (txIndexOf.get(m.tx_id) ?? txIndex) <= txIndex),
        ),
        events,
        minted: new Set(),
        hops: [],
        codeMismatch: mismatchAt(txIndex),
      };
      drafts = txDrafts(scope, events);
    }
    finalize(raw, txIndex, txId, drafts, ctx.maxPayloadBytes, result);
  });
  return result;
}

/** The main event of a tx's drafts: highest priority, first on ties. */
function mainIndex(drafts: readonly Draft[]): number {
  let main = 0;
  drafts.forEach((d, i) => {
    if (d.priority > drafts[main]!.priority) main = i;
  });
  return main;
}

/** Assigns ids, event indexes and the main flag (highest priority, first on ties), then offloads big payloads. */
function finalize(
  raw: RawBlock,
  txIndex: number,
  txId: string,
  drafts: Draft[],
  maxPayloadBytes: number,
  out: NormalizeResult,
): void {
  const main = mainIndex(drafts);
  const { block } = raw;
  drafts.forEach((d, i) => {
    const id = eventId(block.timestamp, raw.chainIndex, block.height, txIndex, i);
    let payload = d.payload;
    let payloadRef: string | null = null;
    if (Buffer.byteLength(JSON.stringify(payload), "utf8") > maxPayloadBytes) {
      out.offloaded.push({ ref: id, event_id: id, payload });
      payload = {};
      payloadRef = id;
    }
    out.events.push({
      id,
      chain_index: raw.chainIndex,
      block_hash: block.hash,
      block_height: block.height,
      timestamp: block.timestamp,
      tx_id: txId,
      tx_index: txIndex,
      event_index: i,
      dapp_id: d.dapp_id,
      category: d.category,
      sub_kind: d.sub_kind,
      type: d.type,
      is_main: i === main,
      from: d.from,
      to: d.to,
      with: d.with,
      token_address: tokenAddressOf(d.token_id),
      token_id: d.token_id,
      amount: d.amount,
      contract_address: d.contract_address,
      contract_event_index: d.contract_event_index,
      payload,
      payload_ref: payloadRef,
    });
  });
}

/** Coinbase: output 0 is the block reward, outputs 1..n pay the ghost uncles in `ghostUncles` order. */
function coinbaseDrafts(block: node.BlockEntry, tx: node.Transaction): Draft[] {
  const drafts = tx.unsigned.fixedOutputs.map((o, i) => {
    if (i === 0) {
      return draft("mining", "coinbase", "reward", {
        dapp_id: DAPP_ALEPHIUM,
        to: o.address,
        amount: BigInt(o.attoAlphAmount),
        payload: { lock_time: o.lockTime, uncle_count: block.ghostUncles.length },
      });
    }
    const uncle = block.ghostUncles[i - 1];
    return draft("mining", "uncle_reward", "reward", {
      dapp_id: DAPP_ALEPHIUM,
      to: o.address,
      amount: BigInt(o.attoAlphAmount),
      payload: {
        lock_time: o.lockTime,
        uncle_block_hash: uncle?.blockHash ?? "",
        uncle_miner: uncle?.miner ?? "",
      },
    });
  });
  // Never happens on a valid chain; keeps the "every tx has a main event" invariant regardless.
  if (drafts.length === 0) drafts.push(draft("mining", "coinbase", "reward", { dapp_id: DAPP_ALEPHIUM }));
  return drafts;
}

/** Genesis (height 0) txs have no inputs: each output is an allocation. */
function genesisDrafts(tx: node.Transaction): Draft[] {
  const drafts = tx.unsigned.fixedOutputs.map((o) =>
    draft("transfer", "genesis_allocation", "alph", {
      dapp_id: DAPP_ALEPHIUM,
      to: o.address,
      amount: BigInt(o.attoAlphAmount),
      payload: { lock_time: o.lockTime },
    }),
  );
  if (drafts.length === 0)
    drafts.push(draft("transfer", "genesis_allocation", "alph", { dapp_id: DAPP_ALEPHIUM }));
  return drafts;
}

/**
 * Order: failed marker, contract-event decoders (execution order), multi-hop aggregate, inferred dapp operations
 * (AlphBanX calls, Wormhole redemptions), transfers, fallbacks.
 */
function txDrafts(s: TxScope, events: readonly ContractEvent[]): Draft[] {
  const { tx, sender } = s;
  const drafts: Draft[] = [];
  const fee = BigInt(tx.unsigned.gasAmount) * BigInt(tx.unsigned.gasPrice);
  const gas = { gas_amount: tx.unsigned.gasAmount, gas_price: tx.unsigned.gasPrice, fee: fee.toString() };
  if (!tx.scriptExecutionOk) {
    drafts.push(
      draft("contract", "failed", "script", { dapp_id: DAPP_ALEPHIUM, from: sender, payload: gas }),
    );
  }
  const fromEvents: Draft[] = [];
  for (const ev of events) fromEvents.push(...eventDrafts(s, ev));
  drafts.push(...fromEvents);
  if (s.hops.length >= 2) drafts.push(aggregateSwap(s));
  // Dapps without events: operations inferred from the script and the outputs.
  const inferred = [...inferAlphBanXOps(s), ...inferWormholeRedemptions(s, fromEvents)];
  drafts.push(...inferred);
  const decoded = fromEvents.length + inferred.length;
  drafts.push(...transferDrafts(s));
  if (tx.unsigned.scriptOpt !== undefined && tx.scriptExecutionOk && decoded === 0) {
    drafts.push(
      draft("contract", "call", "script", {
        dapp_id: callDapp(s),
        from: sender,
        to: contractOutputs(tx)[0]?.address ?? "",
        payload: { ...gas, contracts: contractOutputs(tx).map((o) => o.address) },
      }),
    );
  }
  if (drafts.length === 0) drafts.push(selfTransfer(s));
  // Every transaction's fee (atto-ALPH) travels on its main event as `tx_fee` (a name no decoder uses).
  const main = drafts[mainIndex(drafts)]!;
  main.payload = { ...main.payload, tx_fee: gas.fee };
  return drafts;
}

/** Decoders for one contract event; [] for events that are not reported (debug -3). */
function eventDrafts(s: TxScope, ev: ContractEvent): Draft[] {
  if (ev.eventIndex === -3) return [];
  if (ev.eventIndex === -1) return contractCreated(s, ev);
  if (ev.eventIndex === -2) return [contractDestroyed(s, ev)];
  const kind = s.decoders.kindOf(ev.contractAddress);
  const decode = kind && EVENT_DECODERS[kind];
  if (decode) {
    // Nothing is decoded with a layout read from other code: an upgraded contract waits for its new layout.
    const mismatch = s.codeMismatch(ev.contractAddress);
    if (mismatch)
      return [
        genericEvent(
          s,
          ev,
          kind,
          { decode_error: "code_hash_changed" },
          {
            code_hash_expected: mismatch.expected,
            code_hash_live: mismatch.live,
          },
        ),
      ];
    const r = decode(s, ev);
    if (isFailure(r)) return [genericEvent(s, ev, kind, r)];
    if (r) return r;
  }
  const factories = s.ctx.factories ?? KNOWN_FACTORIES;
  const created = decodePoolCreated(ev, factories);
  if (typeof created === "object") return [poolCreated(s, ev, created)];
  // Only factories with a stable field (Elexium-style) follow a decoder's layout; Ayin's stay silent as before.
  if (
    typeof created === "string" &&
    factories.find((f) => f.factory_address === ev.contractAddress)?.stable_field != null
  )
    return [genericEvent(s, ev, kind ?? "elexium-factory", { decode_error: created })];
  const pool = s.pools.poolOf(ev.contractAddress);
  if (pool) {
    if (ev.eventIndex === pool.swap_event_index) {
      const hop = swapHop(s, ev, pool, false);
      if (hop) return [hop];
    }
    if (ev.eventIndex === pool.mint_event_index || ev.eventIndex === pool.burn_event_index) {
      const liq = liquidity(s, ev, pool, ev.eventIndex === pool.mint_event_index);
      if (liq) return [liq];
    }
    const mismatch = pool.liquidity_layout === "velodrome" ? poolLayoutError(pool, ev) : undefined;
    if (mismatch) return [genericEvent(s, ev, "elexium-factory", { decode_error: mismatch })];
  } else if (ev.eventIndex === 2 && hasShape(ev.fields, SWAP_SHAPE)) {
    const inferred = inferPool(s, ev.contractAddress);
    const hop = inferred && swapHop(s, ev, inferred, true);
    if (hop) return [hop];
  }
  return [genericEvent(s, ev)];
}

const SWAP_SHAPE = ["Address", "U256", "U256", "U256", "U256", "Address"] as const;
const LIQUIDITY_SHAPE = ["Address", "U256", "U256", "U256"] as const;
/** Velodrome-style pools (Elexium): Mint(sender, amount0, amount1), Burn(sender, to, amount0, amount1). */
const VELODROME_MINT_SHAPE = ["Address", "U256", "U256"] as const;
const VELODROME_BURN_SHAPE = ["Address", "Address", "U256", "U256"] as const;

/** Why a velodrome pool's Swap / Mint / Burn does not have its layout; undefined for other events or a match. */
function poolLayoutError(pool: PoolInfo, ev: ContractEvent): string | undefined {
  let expected: [string, readonly string[]] | undefined;
  if (ev.eventIndex === pool.swap_event_index) expected = ["Swap", SWAP_SHAPE];
  else if (ev.eventIndex === pool.mint_event_index) expected = ["Mint", VELODROME_MINT_SHAPE];
  else if (ev.eventIndex === pool.burn_event_index) expected = ["Burn", VELODROME_BURN_SHAPE];
  if (!expected || hasShape(ev.fields, expected[1])) return undefined;
  const [name, shape] = expected;
  const got = ev.fields.map((f) => f.type).join(", ");
  return `${name} (event ${ev.eventIndex}) expects ${shape.length} fields [${shape.join(", ")}] but got ${ev.fields.length} fields [${got}]`;
}

/** `stable` in pool payloads of factories with a stable flag (Elexium); nothing for the others. */
function stableOf(pool: PoolInfo): { stable?: boolean } {
  return pool.stable === null || pool.stable === undefined ? {} : { stable: pool.stable };
}

/** System event -1: `[Address contract, Address parent | ByteVec "", ByteVec stdInterfaceId | ""]`. */
function contractCreated(s: TxScope, ev: ContractEvent): Draft[] {
  const contract = fieldOf(ev.fields, 0, "Address") ?? "";
  const parent = fieldOf(ev.fields, 1, "Address") ?? "";
  const iface = fieldOf(ev.fields, 2, "ByteVec") ?? "";
  // Attributed to the dapp of the new contract, else of its parent (a factory), else the protocol.
  const dapp = dappOf(s, contract, dappOf(s, parent, DAPP_ALEPHIUM));
  const common = {
    from: s.sender,
    with: parent,
    contract_address: ev.contractAddress,
    contract_event_index: -1,
  };
  const drafts = [
    draft("contract", "created", "system", {
      ...common,
      dapp_id: dapp,
      to: contract,
      payload: {
        contract_address: contract,
        parent_address: parent,
        std_interface_id: iface,
      } satisfies ContractCreatedPayload,
    }),
  ];
  const tokenId = contract ? contractIdOf(contract) : undefined;
  if (tokenId === undefined) return drafts;
  // Tokens can only be issued at creation, so every output carrying the new id in this tx holds minted supply.
  let total = 0n;
  const recipients = new Map<string, bigint>();
  for (const o of allOutputs(s.tx)) {
    for (const t of o.tokens) {
      if (t.id !== tokenId) continue;
      total += BigInt(t.amount);
      if (isAssetOutput(o)) recipients.set(o.address, (recipients.get(o.address) ?? 0n) + BigInt(t.amount));
    }
  }
  if (total === 0n) return drafts;
  s.minted.add(tokenId);
  drafts.push(
    draft("token", "genesis_mint", "mint", {
      ...common,
      dapp_id: dapp,
      to: recipients.keys().next().value ?? contract,
      token_id: tokenId,
      amount: total,
      payload: {
        contract_address: contract,
        parent_address: parent,
        std_interface_id: iface,
        recipients: [...recipients].map(([address, amount]) => ({ address, amount: amount.toString() })),
      },
    }),
  );
  return drafts;
}

/** System event -2: `[Address contract]`. */
function contractDestroyed(s: TxScope, ev: ContractEvent): Draft {
  const contract = fieldOf(ev.fields, 0, "Address") ?? "";
  return draft("contract", "destroyed", "system", {
    dapp_id: dappOf(s, contract, DAPP_ALEPHIUM),
    from: s.sender,
    to: contract,
    contract_address: ev.contractAddress,
    contract_event_index: -2,
    payload: { contract_address: contract },
  });
}

/** Base token of a pool: the non-ALPH leg when one leg is ALPH (prices are then in ALPH), else token0. */
export function baseTokenOf(pool: Pick<PoolInfo, "token0_id" | "token1_id">): {
  base: string;
  quote: string;
} {
  return pool.token0_id === ALPH_TOKEN_ID
    ? { base: pool.token1_id, quote: pool.token0_id }
    : { base: pool.token0_id, quote: pool.token1_id };
}

function poolCreated(s: TxScope, ev: ContractEvent, pool: PoolInfo): Draft {
  return draft("dex", "pool_created", "pair_created", {
    dapp_id: dappOf(s, ev.contractAddress, pool.dapp_id),
    from: s.sender,
    to: pool.pool_address,
    with: ev.contractAddress,
    token_id: baseTokenOf(pool).base,
    contract_address: ev.contractAddress,
    contract_event_index: ev.eventIndex,
    payload: {
      pool_address: pool.pool_address,
      token0_id: pool.token0_id,
      token1_id: pool.token1_id,
      ...stableOf(pool),
    },
  });
}

/**
 * One `Swap(sender, amount0In, amount1In, amount0Out, amount1Out, to)`. Direction: amount0In > 0 ⇒ token0 in,
 * token1 out; otherwise token1 in, token0 out. Primary token/amount = the base token and its amount.
 */
function swapHop(s: TxScope, ev: ContractEvent, pool: PoolInfo, inferred: boolean): Draft | undefined {
  if (!hasShape(ev.fields, SWAP_SHAPE)) return undefined;
  const [a0In, a1In, a0Out, a1Out] = [1, 2, 3, 4].map((i) => u256(fieldOf(ev.fields, i, "U256")) ?? 0n) as [
    bigint,
    bigint,
    bigint,
    bigint,
  ];
  if (a0In === 0n && a1In === 0n) return undefined;
  const zeroIn = a0In > 0n;
  const tokenIn = zeroIn ? pool.token0_id : pool.token1_id;
  const tokenOut = zeroIn ? pool.token1_id : pool.token0_id;
  const amountIn = zeroIn ? a0In : a1In;
  const amountOut = zeroIn ? a1Out : a0Out;
  const { base, quote } = baseTokenOf(pool);
  const buy = tokenOut === base;
  const baseAmount = buy ? amountOut : amountIn;
  const quoteAmount = buy ? amountIn : amountOut;
  const swapSender = fieldOf(ev.fields, 0, "Address") ?? "";
  const to = fieldOf(ev.fields, 5, "Address") ?? "";
  const dapp = dappOf(s, pool.pool_address, inferred ? DAPP_UNKNOWN : pool.dapp_id);
  s.hops.push({
    pool: pool.pool_address,
    dapp_id: dapp,
    token_in: tokenIn,
    token_out: tokenOut,
    amount_in: amountIn,
    amount_out: amountOut,
    to,
  });
  return draft("dex", buy ? "buy" : "sell", "swap", {
    dapp_id: dapp,
    from: s.sender || swapSender,
    to,
    with: pool.pool_address,
    token_id: base,
    amount: baseAmount,
    contract_address: ev.contractAddress,
    contract_event_index: ev.eventIndex,
    payload: {
      pool_address: pool.pool_address,
      pool_inferred: inferred,
      hop_index: s.hops.length - 1,
      token0_id: pool.token0_id,
      token1_id: pool.token1_id,
      base_token_id: base,
      quote_token_id: quote,
      token_in_id: tokenIn,
      token_out_id: tokenOut,
      amount_in: amountIn.toString(),
      amount_out: amountOut.toString(),
      base_amount: baseAmount.toString(),
      quote_amount: quoteAmount.toString(),
      price: ratio(quoteAmount, baseAmount),
      sender: swapSender,
      ...stableOf(pool),
    },
  });
}

/** Multi-hop aggregate: first hop's input → last hop's output; price = amount_in / amount_out (raw units). */
function aggregateSwap(s: TxScope): Draft {
  const first = s.hops[0]!;
  const lastHop = s.hops[s.hops.length - 1]!;
  return draft("dex", "swap", "swap", {
    dapp_id: first.dapp_id,
    from: s.sender,
    to: lastHop.to,
    token_id: lastHop.token_out,
    amount: lastHop.amount_out,
    payload: {
      hops: s.hops.length,
      path: s.hops.map((h) => h.pool),
      token_in_id: first.token_in,
      token_out_id: lastHop.token_out,
      amount_in: first.amount_in.toString(),
      amount_out: lastHop.amount_out.toString(),
      price: ratio(first.amount_in, lastHop.amount_out),
    },
  });
}

/**
 * Ayin `Mint`/`Burn(sender, amount0, amount1, liquidity)`, or the velodrome layout's `Mint(sender, amount0,
 * amount1)` / `Burn(sender, to, amount0, amount1)` (no liquidity: "0"); primary token = the LP token (id = pool
 * contract id).
 */
function liquidity(s: TxScope, ev: ContractEvent, pool: PoolInfo, add: boolean): Draft | undefined {
  let sender: string;
  let amount0: bigint;
  let amount1: bigint;
  let lp = 0n;
  if (pool.liquidity_layout === "velodrome") {
    const shape = add ? VELODROME_MINT_SHAPE : VELODROME_BURN_SHAPE;
    if (!hasShape(ev.fields, shape)) return undefined;
    const at = add ? 1 : 2;
    sender = fieldOf(ev.fields, 0, "Address") ?? "";
    [amount0, amount1] = [at, at + 1].map((i) => u256(fieldOf(ev.fields, i, "U256")) ?? 0n) as [
      bigint,
      bigint,
    ];
  } else {
    if (!hasShape(ev.fields, LIQUIDITY_SHAPE)) return undefined;
    sender = fieldOf(ev.fields, 0, "Address") ?? "";
    [amount0, amount1, lp] = [1, 2, 3].map((i) => u256(fieldOf(ev.fields, i, "U256")) ?? 0n) as [
      bigint,
      bigint,
      bigint,
    ];
  }
  const lpToken = contractIdOf(pool.pool_address);
  return draft("dex", add ? "add_liquidity" : "remove_liquidity", add ? "mint" : "burn", {
    dapp_id: dappOf(s, pool.pool_address, pool.dapp_id),
    from: s.sender || sender,
    to: pool.pool_address,
    with: pool.pool_address,
    token_id: lpToken ?? ALPH_TOKEN_ID,
    amount: lp,
    contract_address: ev.contractAddress,
    contract_event_index: ev.eventIndex,
    payload: {
      pool_address: pool.pool_address,
      token0_id: pool.token0_id,
      token1_id: pool.token1_id,
      amount0: amount0.toString(),
      amount1: amount1.toString(),
      liquidity: lp.toString(),
      sender,
      ...stableOf(pool),
    },
  });
}

/**
 * Pair tokens of an unregistered Swap emitter, from its new contract output in this tx: its tokens minus its own
 * LP token; one left ⇒ ALPH/token, two ⇒ sorted by id (Ayin orders pair tokens by id). Else undefined.
 */
function inferPool(s: TxScope, address: string): PoolInfo | undefined {
  const out = contractOutputs(s.tx).find((o) => o.address === address);
  const ownId = contractIdOf(address);
  if (!out) return undefined;
  const ids = [...new Set(out.tokens.map((t) => t.id).filter((id) => id !== ownId))].sort();
  let pair: [string, string] | undefined;
  if (ids.length === 1) pair = [ALPH_TOKEN_ID, ids[0]!];
  else if (ids.length === 2) pair = [ids[0]!, ids[1]!];
  if (!pair) return undefined;
  return {
    pool_address: address,
    token0_id: pair[0],
    token1_id: pair[1],
    dapp_id: DAPP_UNKNOWN,
    swap_event_index: 2,
    mint_event_index: null,
    burn_event_index: null,
    stable: null,
    liquidity_layout: "ayin",
  };
}

/** The undecoded event; with `decoder` and `decode_error` when a decoder refused the event's layout. */
function genericEvent(
  s: TxScope,
  ev: ContractEvent,
  decoder?: string,
  failure?: DecodeFailure,
  extra: Record<string, unknown> = {},
): Draft {
  return draft("contract", "event", "undecoded", {
    dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
    from: s.sender,
    to: ev.contractAddress,
    contract_address: ev.contractAddress,
    contract_event_index: ev.eventIndex,
    payload: {
      event_index: ev.eventIndex,
      fields: ev.fields,
      ...(failure ? { decoder, decode_error: failure.decode_error } : {}),
      ...extra,
    },
  });
}

interface Leg {
  address: string;
  tokenId: string;
  amount: bigint;
  outputs: number;
}

/** Sums outputs per (recipient, token) in order of first appearance; ALPH before the output's tokens. */
function sumLegs(
  outputs: readonly { address: string; attoAlphAmount: string; tokens: node.Token[] }[],
  skip: Set<string>,
) {
  const legs = new Map<string, Leg>();
  const add = (address: string, tokenId: string, amount: bigint) => {
    if (amount === 0n || skip.has(tokenId)) return;
    const key = `${address}\u0000${tokenId}`;
    const leg = legs.get(key);
    if (leg) {
      leg.amount += amount;
      leg.outputs += 1;
    } else legs.set(key, { address, tokenId, amount, outputs: 1 });
  };
  for (const o of outputs) {
    add(o.address, ALPH_TOKEN_ID, BigInt(o.attoAlphAmount));
    for (const t of o.tokens) add(o.address, t.id, BigInt(t.amount));
  }
  return [...legs.values()];
}

/**
 * Sends: fixed outputs to anyone but the signer (change excluded). Payouts: generated asset outputs of a
 * successful script to anyone but the signer (outputs back to the signer are left-over approved assets; a failed
 * script's generated outputs are refunds). Both exclude tokens minted in this tx.
 */
function transferDrafts(s: TxScope): Draft[] {
  const { tx, sender, ctx } = s;
  const drafts: Draft[] = [];
  const exFrom = sender ? ctx.exchanges?.exchangeOf(sender) : undefined;
  const sends = sumLegs(
    tx.unsigned.fixedOutputs.filter((o) => o.address !== sender),
    s.minted,
  );
  for (const leg of sends) {
    const type = leg.tokenId === ALPH_TOKEN_ID ? "alph" : "token";
    const exTo = exFrom ? undefined : ctx.exchanges?.exchangeOf(leg.address);
    const exchange = exFrom ?? exTo;
    drafts.push(
      draft(exchange ? "cex" : "transfer", exFrom ? "withdraw" : exTo ? "deposit" : "send", type, {
        dapp_id: exchange ?? DAPP_ALEPHIUM,
        from: sender,
        to: leg.address,
        token_id: leg.tokenId,
        amount: leg.amount,
        payload: { output_count: leg.outputs },
      }),
    );
  }
  if (!tx.scriptExecutionOk) return drafts;
  const contracts = contractOutputs(tx);
  // The paying contract is only certain when a single contract's balance changed.
  const payer = contracts.length === 1 ? contracts[0]!.address : "";
  const payouts = sumLegs(
    tx.generatedOutputs.filter((o) => isAssetOutput(o) && o.address !== sender),
    s.minted,
  );
  for (const leg of payouts) {
    drafts.push(
      draft("transfer", "payout", leg.tokenId === ALPH_TOKEN_ID ? "alph" : "token", {
        dapp_id: payer ? dappOf(s, payer, DAPP_UNKNOWN) : DAPP_UNKNOWN,
        from: payer,
        to: leg.address,
        with: sender,
        token_id: leg.tokenId,
        amount: leg.amount,
        contract_address: payer,
        payload: { output_count: leg.outputs },
      }),
    );
  }
  return drafts;
}

/** Fallback when nothing else was emitted: all outputs went back to the signer. */
function selfTransfer(s: TxScope): Draft {
  const total = s.tx.unsigned.fixedOutputs.reduce((acc, o) => acc + BigInt(o.attoAlphAmount), 0n);
  return draft("transfer", "self", "alph", {
    dapp_id: DAPP_ALEPHIUM,
    from: s.sender,
    to: s.sender,
    amount: total,
    payload: { output_count: s.tx.unsigned.fixedOutputs.length },
  });
}

function callDapp(s: TxScope): string {
  for (const o of contractOutputs(s.tx)) {
    const d = s.ctx.dapps.dappOf(o.address);
    if (d) return d;
  }
  return DAPP_UNKNOWN;
}

function allOutputs(tx: node.Transaction): (node.FixedAssetOutput | node.Output)[] {
  return [...tx.unsigned.fixedOutputs, ...tx.generatedOutputs];
}
