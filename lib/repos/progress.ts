/**
 * Per-chain durable positions of the events sink (ClickHouse `chain_progress`) and the low watermark:
 * the oldest of the 16 chains' newest durable block timestamps. Every event at or before it is
 * written, and no event at or before it can still arrive (chains only grow forward in time), so
 * serving events up to the watermark makes them visible to pollers in id order.
 */
import { CHAINS } from "../chain/types.ts";
import type { Ch } from "../stores/clickhouse.ts";

export interface ChainPosition {
  chain_index: number;
  height: number;
  block_hash: string;
  block_ts: number;
  updated_at: number;
}

export interface Progress {
  chains: ChainPosition[];
  /** Low watermark in ms; 0 until every chain has a durable position. */
  watermark: number;
}

export async function readProgress(ch: Ch): Promise<Progress> {
  const rows = await ch.query<{
    chain_index: number;
    height: number;
    block_hash: string;
    block_ts: string;
    updated_at: string;
  }>(
    "chain_progress_read",
    `SELECT chain_index, height, block_hash, toUnixTimestamp64Milli(block_ts) AS block_ts,
            toUnixTimestamp64Milli(updated_at) AS updated_at
     FROM chain_progress FINAL ORDER BY chain_index`,
  );
  const chains = rows.map((r) => ({
    chain_index: r.chain_index,
    height: r.height,
    block_hash: r.block_hash,
    block_ts: Number(r.block_ts),
    updated_at: Number(r.updated_at),
  }));
  const watermark = chains.length === CHAINS ? Math.min(...chains.map((c) => c.block_ts)) : 0;
  return { chains, watermark };
}
