/**
 * Reprocessing: stored raw blocks (ClickHouse `raw_blocks`) are published on the blocks topic
 * again, with a new sequence, so the processors rebuild their rows with the current decoders.
 * The sinks are idempotent: rows that did not change stay identical.
 */
import { mainRawBlocks, type StoredRawBlock } from "../lib/chain/raw-blocks.ts";
import type { PipelineDeps } from "./deps.ts";
import { type RawBlockMessage, TOPICS } from "./messages.ts";

const PAGE = 500;

/** Publishes stored raw blocks on the blocks topic again, with new sequence numbers from `seq`. */
export async function republish(
  deps: Pick<PipelineDeps, "bus" | "codecs">,
  rows: readonly StoredRawBlock[],
  seq: number,
): Promise<void> {
  const messages: RawBlockMessage[] = rows.map((r, i) => ({
    chain_index: r.chain_index,
    hash: r.hash,
    height: r.height,
    timestamp: r.ts,
    kind: "block",
    seq: seq + i,
    block_json: r.block_json,
    events_json: r.events_json,
  }));
  await deps.bus.publish(
    TOPICS.blocks,
    messages.map((m) => ({ key: String(m.chain_index), value: deps.codecs.blocks.encode(m) })),
  );
}

export async function reprocessRange(deps: PipelineDeps, fromTs: number, toTs: number): Promise<number> {
  let published = 0;
  let seq = Date.now();
  for await (const rows of mainRawBlocks(deps.ch, { fromTs, toTs, page: PAGE })) {
    await republish(deps, rows, seq);
    seq += rows.length;
    published += rows.length;
  }
  return published;
}
