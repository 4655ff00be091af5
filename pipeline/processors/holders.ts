/**
 * Holders: `alephium.blocks.v2` → the outputs, spends and balance moves of every block (lib/series/holders.ts
 * `storeHolderMessages`; a retraction flips its block's rows); then the (token, address) pairs whose moves changed go
 * on `alephium.holders-touched.v1`, keyed by token, for holders-recompute (./holders-recompute.ts), which recomputes
 * their zero crossings and the `token-holders` series points.
 *
 * Every replica works at once, each on its chains' partitions: rows are keyed and versioned, a spend meets its output
 * whichever replica stores which, and the pairs are published after the moves they cover were written (a replay
 * stores the same rows and publishes again).
 */
import { type HolderPairs, holderPairsByToken, storeHolderMessages } from "../../lib/series/holders.ts";
import { type BlockMessage, CONSUMER_GROUPS, type HoldersTouchedMessage, TOPICS } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

/** Addresses per holders-touched message: a token touched by many addresses goes in several (brokers cap a message). */
export const PAIRS_PER_MESSAGE = 2_000;

/** The touched pairs as holders-touched messages: per token, at most PAIRS_PER_MESSAGE addresses each. */
export function holdersTouchedMessages(pairs: HolderPairs, newest: number): HoldersTouchedMessage[] {
  const out: HoldersTouchedMessage[] = [];
  for (const [token_id, list] of holderPairsByToken(pairs))
    for (let i = 0; i < list.length; i += PAIRS_PER_MESSAGE)
      out.push({
        kind: "touched",
        token_id,
        pairs: list.slice(i, i + PAIRS_PER_MESSAGE),
        block_timestamp: newest,
      });
  return out;
}

export const holdersProcessor = defineProcessor<BlockMessage>({
  name: "holders",
  topic: "blocks",
  group: CONSUMER_GROUPS.holders,
  codec: (codecs) => codecs.blocks,
  async handle(messages, { deps }) {
    const stored = await storeHolderMessages(deps.ch, messages);
    deps.metrics.pipelineRows.inc({ stage: "holders", table: "holder_outputs" }, stored.outputs);
    deps.metrics.pipelineRows.inc({ stage: "holders", table: "holder_spends" }, stored.spends);
    let newest = 0;
    for (const m of messages) if (m.timestamp > newest) newest = m.timestamp;
    const out = holdersTouchedMessages(stored.touched, newest);
    await deps.bus.publish(
      TOPICS.holdersTouched,
      out.map((m) => ({ key: m.token_id, value: deps.codecs.holdersTouched.encode(m) })),
    );
  },
});
