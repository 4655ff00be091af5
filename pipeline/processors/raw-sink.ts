/** Raw sink: keeps every published block in ClickHouse `raw_blocks` so history can be reprocessed offline. */

import { mapWithTurns } from "../../lib/turns.ts";
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

export const rawSinkProcessor = defineProcessor<BlockMessage>({
  name: "raw-sink",
  topic: "blocks",
  group: CONSUMER_GROUPS.rawSink,
  codec: (codecs) => codecs.blocks,
  runs: {
    // A run of blocks as one insert.
    async blocks(run, { deps }) {
      await deps.ch.insert("raw_blocks_insert", "raw_blocks", await mapWithTurns(run, rawBlockRow));
      deps.metrics.pipelineRows.inc({ stage: "raw-sink", table: "raw_blocks" }, run.length);
    },
    // A retraction flips the stored block (same JSON) with a newer version; nothing is lost.
    async retraction(m, { deps }) {
      await deps.ch.command(
        "raw_blocks_retract",
        `INSERT INTO raw_blocks SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
         FROM raw_blocks FINAL WHERE chain_index = {c:UInt8} AND height = {h:UInt32} AND hash = {hash:String}`,
        { seq: m.seq, c: m.chain_index, h: m.height, hash: m.hash },
      );
    },
  },
});
