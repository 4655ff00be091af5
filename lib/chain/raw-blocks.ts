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

/**
 * Main-chain blocks up to `toTs` (inclusive) in (time, chain, height) order, `page` at a time: what
 * `reprocess` publishes again and the token-holders backfill reads.
 */
export async function* mainRawBlocks(
  ch: Ch,
  range: { fromTs?: number; toTs?: number; page?: number } = {},
): AsyncGenerator<StoredRawBlock[]> {
  let after = { ts: (range.fromTs ?? 0) - 1, chain: -1, height: -1 };
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
       ORDER BY timestamp, chain_index, height LIMIT {page:UInt32}`,
      {
        to: range.toTs ?? Number.MAX_SAFE_INTEGER,
        ts: after.ts,
        c: after.chain,
        h: after.height,
        page: range.page ?? 500,
      },
    );
    const last = rows.at(-1);
    if (!last) return;
    yield rows.map((r) => ({ ...r, ts: Number(r.ts), version: Number(r.version) }));
    after = { ts: Number(last.ts), chain: last.chain_index, height: last.height };
  }
}
