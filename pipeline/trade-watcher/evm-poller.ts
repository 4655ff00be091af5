/**
 * The EVM pool poller: for every enabled pair of a `uniswap` or `pancakeswap` source (a pool added by
 * its address, the pair's `chain_id` naming the EVM chain), reads the pool's `Swap` logs block-ranged
 * up to the chain's head minus `confirmations`, writes them to `trades` (the same table and candles
 * path as on-chain Alephium swaps), recomputes the touched candles, writes spot from the pool's
 * reserves, and hands the swaps of pairs with `enable_trades` to the trade watcher. Its position per
 * pool is durable (`evm_pool_cursors`) and saved after those writes, so a crash only re-reads.
 *
 * Reorgs: the poller keeps the hash of the last block it read and of recent blocks it took swaps
 * from. When the last block's hash changed, it rewinds `REORG_WINDOW` blocks, retracts the trades of
 * recent blocks whose hash changed (`main_chain = 0`, buckets recomputed) and reads the range again.
 * Swaps are read only below the confirmation depth, so a reorg reaches candles only when deeper than
 * it; trade events already handed on are not recalled (as with on-chain events past CONFIRMATIONS).
 *
 * A failing RPC degrades its source (`/status`, `alephium_price_source_up`) and backs off; other
 * chains, sources and the pipeline go on.
 */
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics.ts";
import { ratio, withPoint } from "../../lib/prices/decimal.ts";
import { marketOf } from "../../lib/prices/reader.ts";
import type { TradeRow } from "../../lib/prices/trades.ts";
import {
  insertTrades,
  recomputeCandles,
  retractTrades,
  type Touched,
  touch,
} from "../../lib/prices/writer.ts";
import { sleep } from "../../lib/retry.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import { markSourceDegraded, markSourceOk } from "./cex.ts";
import {
  blockAt,
  createEvmClient,
  type EvmClient,
  headNumber,
  type PoolTokens,
  readPoolTokens,
  reservesOf,
  type SwapLog,
  swapLogs,
} from "./evm.ts";
import type { MarketTrade, TradeSink } from "./trade.ts";

/** Source kinds whose pairs are EVM pools. */
export const EVM_KINDS = ["uniswap", "pancakeswap"] as const;
/** How far back a reorg is looked for once the last read block changed (blocks). */
export const REORG_WINDOW = 128;
const MAX_BACKOFF_MS = 300_000;

export interface EvmPollerOptions {
  /** RPC URL per EVM chain id (EVM_RPC_URLS). */
  rpcUrls: ReadonlyMap<number, string>;
  confirmations: number;
  pollMs: number;
  timeoutMs: number;
  /** Most blocks per getLogs call. */
  blockRange: number;
  /** How many blocks back a new pool starts. */
  backfillBlocks: number;
}

export interface EvmPollerDeps {
  pg: Pg;
  ch: Ch;
  log: Logger;
  metrics: Metrics;
  /** Where the swaps of pairs with enable_trades go (the trade watcher); null: not handed on. */
  sink?: TradeSink | null;
}

export interface EvmPoller {
  /** One poll of every pool, sources concurrently; the result per source id. */
  pollOnce(): Promise<Record<string, "ok" | "degraded" | "waiting">>;
  start(): void;
  stop(): Promise<void>;
}

interface EvmPair {
  id: number;
  source_id: string;
  pair_symbol: string;
  token_id: string | null;
  chain_id: number;
  enable_trades: boolean;
}

interface Cursor {
  next_block: number;
  last_hash: string | null;
  base_index: 0 | 1;
  token0: string;
  token1: string;
  decimals0: number;
  decimals1: number;
  recent: { n: number; hash: string }[];
}

async function loadPairs(pg: Pg): Promise<EvmPair[]> {
  return pg.query<EvmPair>(
    "evm_pairs",
    `SELECT p.id, p.source_id, p.pair_symbol, p.token_id, p.chain_id, p.enable_trades
     FROM price_pairs p JOIN price_sources s ON s.id = p.source_id
     WHERE s.kind = ANY($1) AND s.enabled AND p.enabled ORDER BY p.id`,
    [[...EVM_KINDS]],
  );
}

async function loadCursor(pg: Pg, chainId: number, pool: string): Promise<Cursor | null> {
  const rows = await pg.query<Omit<Cursor, "next_block"> & { next_block: string }>(
    "evm_cursor_get",
    `SELECT next_block, last_hash, base_index, token0, token1, decimals0, decimals1, recent
     FROM evm_pool_cursors WHERE chain_id = $1 AND pool = $2`,
    [chainId, pool],
  );
  const r = rows[0];
  return r ? { ...r, next_block: Number(r.next_block), base_index: r.base_index === 1 ? 1 : 0 } : null;
}

async function saveCursor(pg: Pg, chainId: number, pool: string, c: Cursor): Promise<void> {
  await pg.query(
    "evm_cursor_save",
    `INSERT INTO evm_pool_cursors (chain_id, pool, next_block, last_hash, base_index, token0, token1,
       decimals0, decimals1, recent, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)
     ON CONFLICT (chain_id, pool) DO UPDATE SET next_block = EXCLUDED.next_block,
       last_hash = EXCLUDED.last_hash, recent = EXCLUDED.recent, updated_at = EXCLUDED.updated_at`,
    [
      chainId,
      pool,
      c.next_block,
      c.last_hash,
      c.base_index,
      c.token0,
      c.token1,
      c.decimals0,
      c.decimals1,
      JSON.stringify(c.recent),
      Date.now(),
    ],
  );
}

/**
 * Which pool token is the pair's base: the one the bridge registry maps to the pair's Alephium token
 * on that chain, else token0.
 */
async function baseIndexOf(pg: Pg, pair: EvmPair, tokens: PoolTokens): Promise<0 | 1> {
  if (!pair.token_id) return 0;
  const rows = await pg.query<{ address: string }>(
    "evm_base_token",
    `SELECT lower(origin_evm_contract_address) AS address FROM bridged_tokens
     WHERE native_token_id = $1 AND chain_id = $2 AND origin_evm_contract_address IS NOT NULL`,
    [pair.token_id, pair.chain_id],
  );
  const mapped = new Set(rows.map((r) => r.address));
  return mapped.has(tokens.token1) && !mapped.has(tokens.token0) ? 1 : 0;
}

/** A swap as a trade of the pair, oriented to its base (buy = the taker received the base). */
export function tradeOfSwap(
  pool: string,
  s: SwapLog,
  ts: number,
  base: 0 | 1,
  tokens: { token0: string; token1: string },
  version: number,
): TradeRow | null {
  const [baseIn, baseOut] = base === 0 ? [s.amount0In, s.amount0Out] : [s.amount1In, s.amount1Out];
  const [quoteIn, quoteOut] = base === 0 ? [s.amount1In, s.amount1Out] : [s.amount0In, s.amount0Out];
  const buy = baseOut > 0n;
  const baseAmount = buy ? baseOut - baseIn : baseIn - baseOut;
  const quoteAmount = buy ? quoteIn - quoteOut : quoteOut - quoteIn;
  if (baseAmount <= 0n || quoteAmount <= 0n) return null;
  return {
    pool,
    ts,
    id: `${String(s.blockNumber).padStart(12, "0")}-${String(s.logIndex).padStart(6, "0")}`,
    block_hash: s.blockHash,
    tx_id: s.txHash,
    kind: buy ? "buy" : "sell",
    base_token_id: base === 0 ? tokens.token0 : tokens.token1,
    quote_token_id: base === 0 ? tokens.token1 : tokens.token0,
    base_amount: baseAmount.toString(),
    quote_amount: quoteAmount.toString(),
    price: ratio(quoteAmount, baseAmount),
    inv_price: ratio(baseAmount, quoteAmount),
    main_chain: true,
    version,
  };
}

interface SourceState {
  failures: number;
  nextAt: number;
}

export function createEvmPoller(deps: EvmPollerDeps, options: EvmPollerOptions): EvmPoller {
  const log = deps.log.child({ component: "evm-pools" });
  const clients = new Map<number, EvmClient>();
  for (const [chainId, url] of options.rpcUrls) {
    clients.set(chainId, createEvmClient(chainId, url, options.timeoutMs));
  }
  const states = new Map<string, SourceState>();
  const stateOf = (id: string) => {
    const s = states.get(id) ?? { failures: 0, nextAt: 0 };
    states.set(id, s);
    return s;
  };
  const warned = new Set<number>();

  const newCursor = async (c: EvmClient, pair: EvmPair, pool: string): Promise<Cursor> => {
    const tokens = await readPoolTokens(c, pool);
    const base = await baseIndexOf(deps.pg, pair, tokens);
    const head = await headNumber(c);
    const start = Math.max(0, head - options.confirmations - options.backfillBlocks);
    const [baseSym, quoteSym] =
      base === 0 ? [tokens.symbol0, tokens.symbol1] : [tokens.symbol1, tokens.symbol0];
    const [baseDec, quoteDec] =
      base === 0 ? [tokens.decimals0, tokens.decimals1] : [tokens.decimals1, tokens.decimals0];
    // The served prices apply the ERC-20 decimals of base and quote.
    await deps.pg.query(
      "evm_pair_facts",
      `UPDATE price_pairs SET decimals = $2, quote_decimals = $3, denomination = $4,
         pair_label = $5, updated_at = $6 WHERE id = $1`,
      [pair.id, baseDec, quoteDec, quoteSym || "?", `${baseSym || "?"}/${quoteSym || "?"}`, Date.now()],
    );
    log.info({ pool, chain_id: pair.chain_id, from_block: start, base: baseSym }, "EVM pool watched.");
    return { next_block: start, last_hash: null, base_index: base, ...tokens, recent: [] };
  };

  /** Rewinds past a reorg and retracts the trades of recent blocks that left the chain. */
  const unwind = async (c: EvmClient, pool: string, cursor: Cursor, touched: Touched) => {
    const from = Math.max(0, cursor.next_block - REORG_WINDOW);
    const gone: string[] = [];
    const kept: { n: number; hash: string }[] = [];
    for (const r of cursor.recent) {
      if (r.n < from) {
        kept.push(r);
        continue;
      }
      const now = await blockAt(c, r.n);
      if (now.hash !== r.hash) gone.push(r.hash);
      else kept.push(r);
    }
    if (gone.length > 0) {
      const seq = Date.now();
      await retractTrades(
        deps.ch,
        gone.map((block_hash) => ({ block_hash, seq })),
        touched,
      );
    }
    log.warn({ pool, chain_id: c.chainId, rewind_to: from, retracted_blocks: gone.length }, "EVM reorg.");
    cursor.recent = kept;
    cursor.next_block = from;
    cursor.last_hash = null;
  };

  const pollPool = async (pair: EvmPair) => {
    const c = clients.get(pair.chain_id);
    if (!c) {
      if (!warned.has(pair.chain_id)) {
        warned.add(pair.chain_id);
        log.warn(
          { pair_id: pair.id, chain_id: pair.chain_id },
          "No EVM_RPC_URLS entry for the pair's chain.",
        );
      }
      return;
    }
    const pool = pair.pair_symbol.toLowerCase();
    const cursor = (await loadCursor(deps.pg, pair.chain_id, pool)) ?? (await newCursor(c, pair, pool));
    const tokens = { token0: cursor.token0, token1: cursor.token1 };
    const market = marketOf(pair.source_id, pair.pair_symbol);
    const candlePair = { market, pool: pair.pair_symbol, token_id: "" };
    const touched: Touched = new Map();
    const head = await headNumber(c);
    if (cursor.last_hash !== null && cursor.next_block - 1 <= head) {
      const last = await blockAt(c, cursor.next_block - 1);
      if (last.hash !== cursor.last_hash) await unwind(c, pool, cursor, touched);
    }
    const safe = head - options.confirmations;
    const times = new Map<number, number>();
    while (cursor.next_block <= safe) {
      const from = cursor.next_block;
      const to = Math.min(safe, from + options.blockRange - 1);
      const logs = await swapLogs(c, pool, from, to);
      const version = Date.now();
      const rows: TradeRow[] = [];
      const trades: MarketTrade[] = [];
      for (const s of logs) {
        let ts = times.get(s.blockNumber);
        if (ts === undefined) {
          ts = (await blockAt(c, s.blockNumber)).ts;
          times.set(s.blockNumber, ts);
        }
        const row = tradeOfSwap(pair.pair_symbol, s, ts, cursor.base_index, tokens, version);
        if (!row) continue;
        rows.push(row);
        touch(touched, row.pool, row.ts);
        if (!cursor.recent.some((r) => r.n === s.blockNumber))
          cursor.recent.push({ n: s.blockNumber, hash: s.blockHash });
        if (pair.enable_trades && deps.sink) trades.push(marketTradeOfSwap(pair, cursor, row, s));
      }
      await insertTrades(deps.ch, rows);
      if (touched.size > 0) await recomputeCandles(deps.ch, [candlePair], touched);
      if (trades.length > 0) await deps.sink!.record(trades);
      deps.metrics.pipelineRows.inc({ stage: `evm:${pair.source_id}`, table: "trades" }, rows.length);
      cursor.next_block = to + 1;
      cursor.last_hash = (await blockAt(c, to)).hash;
      cursor.recent = cursor.recent.filter((r) => r.n >= cursor.next_block - REORG_WINDOW);
      await saveCursor(deps.pg, pair.chain_id, pool, cursor);
      touched.clear();
    }
    if (touched.size > 0) {
      // A reorg retracted trades and nothing new was read: the buckets still need recomputing.
      await recomputeCandles(deps.ch, [candlePair], touched);
      await saveCursor(deps.pg, pair.chain_id, pool, cursor);
    }
    // Spot: the pool's reserves now, oriented to the base.
    const [r0, r1] = await reservesOf(c, pool);
    const [rb, rq] = cursor.base_index === 0 ? [r0, r1] : [r1, r0];
    if (rb > 0n && rq > 0n) {
      const at = Date.now();
      await deps.ch.insert("evm_spot_insert", "spot", [
        {
          pool: pair.pair_symbol,
          ts: at,
          id: "reserves",
          base_token_id: "",
          price: ratio(rq, rb),
          inv_price: ratio(rb, rq),
          deleted: 0,
          version: at,
        },
      ]);
    }
  };

  const pollSource = async (source: string, pairs: EvmPair[]): Promise<"ok" | "degraded" | "waiting"> => {
    const s = stateOf(source);
    if (Date.now() < s.nextAt) return "waiting";
    try {
      for (const pair of pairs) await pollPool(pair);
      const at = Date.now();
      if (s.failures > 0) log.info({ source, failures: s.failures }, "EVM source recovered.");
      s.failures = 0;
      s.nextAt = 0;
      await markSourceOk(deps.pg, source, at);
      deps.metrics.priceSourceUp.set({ source }, 1);
      deps.metrics.priceSourceLastOk.set({ source }, at);
      return "ok";
    } catch (error) {
      s.failures += 1;
      const wait = Math.min(MAX_BACKOFF_MS, options.pollMs * 2 ** (s.failures - 1));
      const at = Date.now();
      s.nextAt = at + wait;
      const message = error instanceof Error ? error.message : String(error);
      log.warn({ source, failures: s.failures, retry_in_ms: wait, err: message }, "EVM poll failed.");
      deps.metrics.priceSourceUp.set({ source }, 0);
      deps.metrics.priceSourceFailures.inc({ source });
      await markSourceDegraded(deps.pg, source, at, message).catch((e: unknown) =>
        log.error({ source, err: e }, "Could not record the EVM source's state."),
      );
      return "degraded";
    }
  };

  const pollOnce = async () => {
    const bySource = new Map<string, EvmPair[]>();
    for (const p of await loadPairs(deps.pg)) {
      const list = bySource.get(p.source_id) ?? [];
      list.push(p);
      bySource.set(p.source_id, list);
    }
    const results = await Promise.all(
      [...bySource].map(async ([source, pairs]) => [source, await pollSource(source, pairs)] as const),
    );
    return Object.fromEntries(results);
  };

  const abort = new AbortController();
  let loop: Promise<void> | null = null;
  return {
    pollOnce,
    start() {
      loop = (async () => {
        while (!abort.signal.aborted) {
          await pollOnce().catch((error: unknown) => log.error({ err: error }, "EVM poll round failed."));
          await sleep(options.pollMs, abort.signal);
        }
      })();
    },
    async stop() {
      abort.abort();
      await loop;
    },
  };
}

/** A pool swap as the trade watcher takes it (amounts and price in whole units). */
function marketTradeOfSwap(pair: EvmPair, cursor: Cursor, row: TradeRow, s: SwapLog): MarketTrade {
  const [baseDec, quoteDec] =
    cursor.base_index === 0 ? [cursor.decimals0, cursor.decimals1] : [cursor.decimals1, cursor.decimals0];
  const base = BigInt(row.base_amount);
  const quote = BigInt(row.quote_amount);
  const price = ratio(quote * 10n ** BigInt(baseDec), base * 10n ** BigInt(quoteDec));
  return {
    key: `evm:${pair.chain_id}:${s.txHash}:${s.logIndex}`,
    category: "dex",
    source_id: pair.source_id,
    pair_id: pair.id,
    pair_symbol: pair.pair_symbol,
    side: row.kind === "buy" ? "buy" : "sell",
    ts: row.ts,
    base_amount: withPoint(base, baseDec),
    quote_amount: withPoint(quote, quoteDec),
    price,
    base_symbol: "",
    quote_symbol: "",
    base_token_id: pair.token_id ?? "",
    evm: {
      chain_id: pair.chain_id,
      tx_hash: s.txHash,
      block_number: s.blockNumber,
      log_index: s.logIndex,
      taker: s.to,
    },
  };
}
