/** Reading the stored raw blocks (ClickHouse `raw_blocks`, written by the raw sink) back in block order. */
import type { Ch } from "../stores/clickhouse.ts";

export interface StoredRawBlock {
  chain_index: number;
  height: number;
  hash: string;
  /** Block time in ms. */
  ts: number;
  block_json: string;
  events_json: string;
  /** The seq of the message that stored it. */
  version: number;
}

/** A position in (time, chain, height) order: the last block a reader handled. */
export interface RawBlockCursor {
  ts: number;
  chain: number;
  height: number;
}

export interface RawBlockRange {
  /** From this block time (ms, inclusive); ignored when `after` is given. */
  fromTs?: number;
  /** Up to this block time (ms, inclusive). */
  toTs?: number;
  /** Resume after this block. */
  after?: RawBlockCursor;
  /** Only blocks whose transactions or events mention one of these contract addresses. */
  contracts?: readonly string[];
  page?: number;
}

/** The SQL condition and parameter of `RawBlockRange.contracts` (none when the range has no contracts). */
function contractFilter(range: RawBlockRange): { sql: string; params: Record<string, unknown> } {
  if (!range.contracts) return { sql: "", params: {} };
  return {
    sql: "AND arrayExists(a -> position(events_json, a) > 0 OR position(block_json, a) > 0, {contracts:Array(String)})",
    params: { contracts: [...range.contracts] },
  };
}

/** How many main-chain blocks a range holds (a reindex job's total). */
export async function countMainRawBlocks(ch: Ch, range: RawBlockRange): Promise<number> {
  const filter = contractFilter(range);
  const [row] = await ch.query<{ n: string }>(
    "raw_blocks_count",
    `SELECT count() AS n FROM raw_blocks FINAL
      WHERE main_chain AND timestamp >= fromUnixTimestamp64Milli({from:Int64})
        AND timestamp <= fromUnixTimestamp64Milli({to:Int64}) ${filter.sql}`,
    { from: range.fromTs ?? 0, to: range.toTs ?? Number.MAX_SAFE_INTEGER, ...filter.params },
  );
  return Number(row?.n ?? 0);
}

/**
 * Main-chain blocks up to `toTs` (inclusive) in (time, chain, height) order, `page` at a time: what
 * `reprocess` publishes again and the token-holders backfill reads.
 */
export async function* mainRawBlocks(ch: Ch, range: RawBlockRange = {}): AsyncGenerator<StoredRawBlock[]> {
  let after = range.after ?? { ts: (range.fromTs ?? 0) - 1, chain: -1, height: -1 };
  const filter = contractFilter(range);
  for (;;) {
    const rows = await ch.query<{
      chain_index: number;
      height: number;
      hash: string;
      ts: string;
      block_json: string;
      events_json: string;
      version: string;
    }>(
      "raw_blocks_page",
      `SELECT chain_index, height, hash, toUnixTimestamp64Milli(timestamp) AS ts, block_json, events_json, version
       FROM raw_blocks FINAL
       WHERE main_chain AND timestamp <= fromUnixTimestamp64Milli({to:Int64})
         AND (toUnixTimestamp64Milli(timestamp), chain_index, height) > ({ts:Int64}, {c:Int16}, {h:Int64})
         ${filter.sql}
       ORDER BY timestamp, chain_index, height LIMIT {page:UInt32}`,
      {
        to: range.toTs ?? Number.MAX_SAFE_INTEGER,
        ts: after.ts,
        c: after.chain,
        h: after.height,
        page: range.page ?? 500,
        ...filter.params,
      },
    );
    const last = rows.at(-1);
    if (!last) return;
    yield rows.map((r) => ({ ...r, ts: Number(r.ts), version: Number(r.version) }));
    after = { ts: Number(last.ts), chain: last.chain_index, height: last.height };
  }
}
