/**
 * Reprocessing: stored raw blocks (ClickHouse `raw_blocks`) are published on `alephium.blocks.v1`
 * again, with a new sequence, so the processors rebuild their rows with the current decoders.
 * The sinks are idempotent: rows that did not change stay identical.
 */
import type { PipelineDeps } from "./deps.ts";
import { type RawBlockMessage, TOPICS } from "./messages.ts";

const PAGE = 500;

export async function reprocessRange(deps: PipelineDeps, fromTs: number, toTs: number): Promise<number> {
  let published = 0;
  let after = { ts: fromTs - 1, chain: -1, height: -1 };
  let seq = Date.now();
  for (;;) {
    const rows = await deps.ch.query<{
      chain_index: number;
      height: number;
      hash: string;
      ts: string;
      block_json: string;
      events_json: string;
    }>(
      "reprocess_page",
      `SELECT chain_index, height, hash, toUnixTimestamp64Milli(timestamp) AS ts, block_json, events_json
       FROM raw_blocks FINAL
       WHERE main_chain AND timestamp <= fromUnixTimestamp64Milli({to:Int64})
         AND (toUnixTimestamp64Milli(timestamp), chain_index, height) > ({ts:Int64}, {c:Int16}, {h:Int64})
       ORDER BY timestamp, chain_index, height LIMIT {page:UInt32}`,
      { to: toTs, ts: after.ts, c: after.chain, h: after.height, page: PAGE },
    );
    if (rows.length === 0) return published;
    const messages: RawBlockMessage[] = rows.map((r) => ({
      chain_index: r.chain_index,
      hash: r.hash,
      height: r.height,
      timestamp: Number(r.ts),
      kind: "block",
      seq: seq++,
      block_json: r.block_json,
      events_json: r.events_json,
    }));
    await deps.bus.publish(
      TOPICS.blocks,
      messages.map((m) => ({ key: String(m.chain_index), value: deps.codecs.blocks.encode(m) })),
    );
    published += messages.length;
    const last = rows[rows.length - 1];
    if (!last) return published;
    after = { ts: Number(last.ts), chain: last.chain_index, height: last.height };
  }
}
