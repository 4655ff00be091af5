/**
 * Holders recompute: `alephium.holders-touched.v1` (keyed by token, from the holders processor) → the zero
 * crossings of the touched (token, address) balances, the `token-holders` facts of the moments they changed and
 * the series points of those (lib/series/holders.ts `recomputeHolders`).
 *
 * The key gives every token one owner: replicas of this group each recompute the tokens of their partitions, so
 * a pass that reads the crossings the token's previous pass wrote never runs beside another of the same token. The
 * replicas hold the group's lock shared, so `series backfill` of token-holders (which takes it exclusively) never
 * runs beside them. After a rebalance the write clock is read again from the stored versions, as series-recompute's.
 */

import { refreshVersionClock } from "../../lib/series/clock.ts";
import { type HolderPairs, mergeHolderPair, recomputeHolders } from "../../lib/series/holders.ts";
import type { SeriesDeps } from "../../lib/series/settings.ts";
import { createSeriesDeps } from "../../lib/series/settings.ts";
import { CONSUMER_GROUPS, type HoldersTouchedMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";
import { RECOMPUTE_LINGER_MS } from "./series-recompute.ts";

export const holdersRecomputeProcessor = defineProcessor<HoldersTouchedMessage, SeriesDeps>({
  name: "holders-recompute",
  topic: "holdersTouched",
  group: CONSUMER_GROUPS.holdersRecompute,
  codec: (codecs) => codecs.holdersTouched,
  sharedLock: true,
  lingerMs: RECOMPUTE_LINGER_MS,
  setup: (deps) => createSeriesDeps({ ...deps, log: deps.log.child({ component: "holders-recompute" }) }),
  onAssigned: ({ state }) => refreshVersionClock(state.ch),
  // Following the chain, small rounds are held and recomputed together (RECOMPUTE_COALESCE_MS).
  hold: {
    spanOf: (messages) => {
      let lo = Number.POSITIVE_INFINITY;
      let hi = 0;
      for (const m of messages) {
        hi = Math.max(hi, m.block_timestamp);
        for (const p of m.pairs) lo = Math.min(lo, p.t0);
      }
      return { lo: Math.min(lo, hi), hi };
    },
  },
  async handle(messages, { deps, state }) {
    const pairs: HolderPairs = new Map();
    for (const m of messages)
      for (const p of m.pairs) mergeHolderPair(pairs, m.token_id, p.address, p.t0, p.hours);
    const changes = await recomputeHolders(state, pairs);
    deps.metrics.pipelineRows.inc({ stage: "holders-recompute", table: "holder_changes" }, changes);
  },
});
