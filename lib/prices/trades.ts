/**
 * Trades from normalized events: every one-pool DEX swap (`dex/buy|sell/swap`) and every oracle value of
 * an oracle source's contract: the DIA decoder's `oracle/price_update/oracle_update` events (payload
 * `key_hex`, `value`, `oracle_timestamp` ms). Events normalized before that decoder existed, or from an
 * oracle bound to no decoder, are still `contract/event/undecoded` `OracleUpdate(key, value, seconds)`
 * (event 1) and read from their fields. A trade depends on its event alone, so the same event always
 * gives the same row.
 */
import type { BlockEventsMessage } from "../events/wire.ts";
import { ratio } from "./decimal.ts";

/** A row of the `trades` table. */
export interface TradeRow {
  pool: string;
  ts: number;
  id: string;
  block_hash: string;
  tx_id: string;
  kind: "buy" | "sell" | "oracle";
  base_token_id: string;
  quote_token_id: string;
  base_amount: string;
  quote_amount: string;
  price: string;
  inv_price: string;
  main_chain: boolean;
  version: number;
}

/** The event fields a trade is made from (a wire event with its block's fields, or an events-table row). */
export interface TradeSource {
  id: string;
  block_hash: string;
  tx_id: string;
  timestamp: number;
  category: string;
  sub_kind: string;
  type: string;
  contract_address: string;
  contract_event_index: number | null;
  payload: string;
}

/** Oracle contracts (base58 address) → the id of the oracle source that reads them. */
export type OracleContracts = ReadonlyMap<string, string>;

/** Event index of `OracleUpdate` on DIA's price oracle. */
export const ORACLE_UPDATE_EVENT = 1;

/** `trades.pool` of an oracle feed. */
export function oraclePool(sourceId: string, key: string): string {
  return `${sourceId}:${key}`;
}

const U256 = /^\d{1,78}$/;

/** Whether a decimal string fits `Decimal(76, 40)` (36 integer digits); a wider ratio is not a price. */
function fitsPrice(decimal: string): boolean {
  const point = decimal.indexOf(".");
  return (point < 0 ? decimal.length : point) <= 36;
}
const HEX64 = /^[0-9a-f]{64}$/;

interface SwapPayload {
  pool_address?: unknown;
  base_token_id?: unknown;
  quote_token_id?: unknown;
  base_amount?: unknown;
  quote_amount?: unknown;
}

interface Field {
  type?: unknown;
  value?: unknown;
}

/** Printable ASCII feed key from ByteVec hex ("BTC/USD"), or undefined. */
function feedKey(hex: unknown): string | undefined {
  if (typeof hex !== "string" || hex.length === 0 || hex.length > 128 || !/^([0-9a-f]{2})+$/i.test(hex))
    return undefined;
  const text = Buffer.from(hex, "hex").toString("latin1");
  return /^[\x21-\x7e]+$/.test(text) ? text : undefined;
}

function parse(payload: string): unknown {
  try {
    return JSON.parse(payload);
  } catch {
    return undefined;
  }
}

/** Whether a normalized event is a one-pool DEX swap (`dex/buy|sell/swap`). */
export function isSwap(e: { category: string; sub_kind: string; type: string }): boolean {
  return e.category === "dex" && e.type === "swap" && (e.sub_kind === "buy" || e.sub_kind === "sell");
}

/** The pool, tokens, amounts and prices of a swap event's payload; undefined when it is not a price. */
export type Swap = Pick<
  TradeRow,
  "pool" | "base_token_id" | "quote_token_id" | "base_amount" | "quote_amount" | "price" | "inv_price"
>;

/**
 * A swap's trade fields from its payload: `price` is quote per base in smallest units, truncated to 40
 * decimals (what the candles keep), `inv_price` base per quote. The series of lib/series read it too.
 */
export function swapOf(payload: unknown): Swap | undefined {
  const p = payload as SwapPayload | undefined;
  if (!p || typeof p !== "object" || typeof p.pool_address !== "string" || !p.pool_address) return undefined;
  const { base_token_id: bt, quote_token_id: qt, base_amount: ba, quote_amount: qa } = p;
  if (typeof bt !== "string" || typeof qt !== "string" || !HEX64.test(bt) || !HEX64.test(qt))
    return undefined;
  if (typeof ba !== "string" || typeof qa !== "string" || !U256.test(ba) || !U256.test(qa)) return undefined;
  const [b, q] = [BigInt(ba), BigInt(qa)];
  if (b === 0n || q === 0n) return undefined;
  const [price, invPrice] = [ratio(q, b), ratio(b, q)];
  if (!fitsPrice(price) || !fitsPrice(invPrice)) return undefined;
  return {
    pool: p.pool_address,
    base_token_id: bt,
    quote_token_id: qt,
    base_amount: ba,
    quote_amount: qa,
    price,
    inv_price: invPrice,
  };
}

/** Whether an event may be an oracle value: a decoded price update, or an undecoded event 1. */
export function isOracleCandidate(e: {
  category: string;
  sub_kind: string;
  type: string;
  contract_event_index: number | null;
}): boolean {
  return (
    (e.category === "oracle" && e.sub_kind === "price_update" && e.type === "oracle_update") ||
    (e.category === "contract" && e.type === "undecoded" && e.contract_event_index === ORACLE_UPDATE_EVENT)
  );
}

/** Key, value and time (ms) of an oracle value, from the decoded payload or the undecoded fields. */
function oracleValueOf(e: TradeSource): { key: string; value: string; ms: number } | undefined {
  const payload = parse(e.payload) as
    | { fields?: Field[]; key_hex?: unknown; value?: unknown; oracle_timestamp?: unknown }
    | undefined;
  if (!payload || typeof payload !== "object") return undefined;
  if (e.category === "oracle") {
    const { key_hex: keyHex, value, oracle_timestamp: ms } = payload;
    const key = feedKey(keyHex);
    if (!key || typeof value !== "string" || !U256.test(value)) return undefined;
    if (typeof ms !== "number" || !Number.isSafeInteger(ms) || ms % 1000 !== 0) return undefined;
    return { key, value, ms };
  }
  const fields = payload.fields;
  if (!Array.isArray(fields) || fields.length !== 3) return undefined;
  const [k, v, t] = fields as [Field, Field, Field];
  const key = k.type === "ByteVec" ? feedKey(k.value) : undefined;
  if (!key || v.type !== "U256" || t.type !== "U256") return undefined;
  if (
    typeof v.value !== "string" ||
    typeof t.value !== "string" ||
    !U256.test(v.value) ||
    !U256.test(t.value)
  )
    return undefined;
  const seconds = Number(t.value);
  if (!Number.isSafeInteger(seconds * 1000)) return undefined;
  return { key, value: v.value, ms: seconds * 1000 };
}

/** The trade of one event, or undefined when the event is neither a one-pool swap nor an oracle value. */
export function tradeOf(
  e: TradeSource,
  oracles: OracleContracts,
  mainChain: boolean,
  version: number,
): TradeRow | undefined {
  const base = { id: e.id, block_hash: e.block_hash, tx_id: e.tx_id, main_chain: mainChain, version };
  if (isSwap(e)) {
    const swap = swapOf(parse(e.payload));
    return swap && { ...base, ...swap, ts: e.timestamp, kind: e.sub_kind as "buy" | "sell" };
  }
  if (isOracleCandidate(e)) {
    const source = oracles.get(e.contract_address);
    if (!source) return undefined;
    const o = oracleValueOf(e);
    if (!o || !fitsPrice(o.value)) return undefined;
    // A value stamped beyond any sane time is refused rather than stored at a meaningless position.
    if (o.ms > 32503680000_000) return undefined;
    return {
      ...base,
      pool: oraclePool(source, o.key),
      ts: o.ms,
      kind: "oracle",
      base_token_id: "",
      quote_token_id: "",
      base_amount: "0",
      quote_amount: "0",
      price: BigInt(o.value).toString(),
      inv_price: "0",
    };
  }
  return undefined;
}

/** The trades of a block message's events (payloads offloaded by the normalizer are read back). */
export function tradesOfBlock(m: BlockEventsMessage, oracles: OracleContracts): TradeRow[] {
  const rows: TradeRow[] = [];
  let offloaded: Map<string, string> | undefined;
  for (const e of m.events) {
    let payload = e.payload_json;
    if (e.payload_ref) {
      offloaded ??= new Map(m.offloaded.map((o) => [o.ref, o.payload_json]));
      payload = offloaded.get(e.payload_ref) ?? payload;
    }
    const row = tradeOf(
      {
        id: e.id,
        block_hash: m.block_hash,
        tx_id: e.tx_id,
        timestamp: m.block_timestamp,
        category: e.category,
        sub_kind: e.sub_kind,
        type: e.type,
        contract_address: e.contract_address,
        contract_event_index: e.contract_event_index,
        payload,
      },
      oracles,
      true,
      m.seq,
    );
    if (row) rows.push(row);
  }
  return rows;
}
