/** Raw sink: keeps every published block in ClickHouse `raw_blocks` so history can be reprocessed offline. */
import type { Ch } from "../../lib/stores/clickhouse.ts";
import { type BlockMessage, CONSUMER_GROUPS, type RawBlockMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

function rawBlockRow(m: RawBlockMessage) {
  return {
    chain_index: m.chain_index,
    height: m.height,
    hash: m.hash,
    timestamp: m.timestamp,
    main_chain: true,
    // tx_count and event_count are computed by ClickHouse from the JSON (column defaults).
    block_json: m.block_json,
    events_json: m.events_json,
    version: m.seq,
  };
}

/**
 * Writes a batch in message order: blocks are inserted in runs, and each retraction is applied after
 * the blocks before it, so a block and its retraction in one batch leave the block retracted.
 */
export async function writeRawBlocks(ch: Ch, messages: BlockMessage[]): Promise<number> {
  let run: ReturnType<typeof rawBlockRow>[] = [];
  let written = 0;
  const flush = async () => {
    await ch.insert("raw_blocks_insert", "raw_blocks", run);
    written += run.length;
    run = [];
  };
  for (const m of messages) {
    if (m.kind === "block") {
      run.push(rawBlockRow(m));
      continue;
    }
    await flush();
    // A retraction flips the stored block (same JSON) with a newer version; nothing is lost.
    await ch.command(
      "raw_blocks_retract",
      `INSERT INTO raw_blocks SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
       FROM raw_blocks FINAL WHERE chain_index = {c:UInt8} AND height = {h:UInt32} AND hash = {hash:String}`,
      { seq: m.seq, c: m.chain_index, h: m.height, hash: m.hash },
    );
  }
  await flush();
  return written;
}

export const rawSinkProcessor = defineProcessor<BlockMessage>({
  name: "raw-sink",
  topic: "blocks",
  group: CONSUMER_GROUPS.rawSink,
  codec: (codecs) => codecs.blocks,
  async handle(messages, { deps }) {
    const written = await writeRawBlocks(deps.ch, messages);
    deps.metrics.pipelineRows.inc({ stage: "raw-sink", table: "raw_blocks" }, written);
  },
});
