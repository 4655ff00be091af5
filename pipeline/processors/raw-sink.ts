/** Raw sink: keeps every published block in ClickHouse `raw_blocks` so history can be reprocessed offline. */
import type { Subscription } from "../../lib/stores/bus.ts";
import type { PipelineDeps } from "../deps.ts";
import { GROUPS, TOPICS } from "../messages.ts";
import type { Processor } from "./normalize.ts";

export function createRawSink(deps: PipelineDeps): Processor {
  let sub: Subscription | null = null;
  return {
    name: "raw-sink",
    async start() {
      sub = await deps.bus.subscribe({
        topic: TOPICS.blocks,
        group: GROUPS.rawSink,
        handle: async (records) => {
          const rows = [];
          for (const record of records) {
            const m = deps.codecs.blocks.decode(record.value);
            if (!m.main_chain) {
              // A retraction flips the stored block (same JSON) with a newer version; nothing is lost.
              await deps.ch.command(
                "raw_blocks_retract",
                `INSERT INTO raw_blocks SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
                 FROM raw_blocks FINAL WHERE chain_index = {c:UInt8} AND height = {h:UInt32} AND hash = {hash:String}`,
                { seq: m.seq, c: m.chain_index, h: m.height, hash: m.hash },
              );
              continue;
            }
            rows.push({
              chain_index: m.chain_index,
              height: m.height,
              hash: m.hash,
              timestamp: m.timestamp,
              main_chain: true,
              // tx_count and event_count are computed by ClickHouse from the JSON (column defaults).
              block_json: m.block_json,
              events_json: m.events_json,
              version: m.seq,
            });
          }
          await deps.ch.insert("raw_blocks_insert", "raw_blocks", rows);
          deps.metrics.pipelineRows.inc({ stage: "raw-sink", table: "raw_blocks" }, rows.length);
        },
      });
    },
    async stop() {
      await sub?.stop();
      sub = null;
    },
  };
}
