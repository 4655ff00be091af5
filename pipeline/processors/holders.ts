/**
 * Holders: `alephium.blocks.v2` → the outputs and spends of every block, then the zero crossings of each
 * (token, address) balance the batch touched and the `token-holders` series points they change
 * (lib/series/holders.ts). A retraction flips its block's outputs and spends, and recomputes the balances
 * they reached. Batches run one at a time: each reads the crossings stored by the one before.
 */
import { handleHolderMessages } from "../../lib/series/holders.ts";
import { createSeriesDeps } from "../../lib/series/settings.ts";
import type { SeriesDeps } from "../../lib/series/writer.ts";
import { type BlockMessage, CONSUMER_GROUPS } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

export const holdersProcessor = defineProcessor<BlockMessage, SeriesDeps>({
  name: "holders",
  topic: "blocks",
  group: CONSUMER_GROUPS.holders,
  codec: (codecs) => codecs.blocks,
  // Each batch reads what the previous one wrote (and recomputes from it): one process at a time.
  singleton: true,
  setup: (deps) => createSeriesDeps({ ...deps, log: deps.log.child({ component: "holders" }) }),
  async handle(messages, { deps, state }) {
    const pass = await handleHolderMessages(state, messages);
    deps.metrics.pipelineRows.inc({ stage: "holders", table: "holder_outputs" }, pass.outputs);
    deps.metrics.pipelineRows.inc({ stage: "holders", table: "holder_spends" }, pass.spends);
    deps.metrics.pipelineRows.inc({ stage: "holders", table: "holder_changes" }, pass.changes);
  },
});
