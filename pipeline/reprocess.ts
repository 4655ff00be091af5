/**
 * Reprocessing: stored raw blocks (ClickHouse `raw_blocks`) are published on the blocks topic
 * again, with a new sequence, so the processors rebuild their rows with the current decoders.
 * The sinks are idempotent: rows that did not change stay identical.
 */
import { mainRawBlocks } from "../lib/chain/raw-blocks.ts";
import type { PipelineDeps } from "./deps.ts";
import { type RawBlockMessage, TOPICS } from "./messages.ts";

const PAGE = 500;

export async function reprocessRange(deps: PipelineDeps, fromTs: number, toTs: number): Promise<number> {
  let published = 0;
  let seq = Date.now();
  for await (const rows of mainRawBlocks(deps.ch, { fromTs, toTs, page: PAGE })) {
    const messages: RawBlockMessage[] = rows.map((r) => ({
      chain_index: r.chain_index,
      hash: r.hash,
      height: r.height,
      timestamp: r.ts,
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
  }
  return published;
}
