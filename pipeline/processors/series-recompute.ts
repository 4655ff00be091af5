/**
 * Series recompute: `alephium.series-touched.v1` (keyed by instance id, from the series processor) → the
 * points at every scale, segments, archive pages and instance rows of the touched spans, recomputed from the
 * stored facts (lib/series/recompute.ts `recomputeSeries`).
 *
 * The key gives every instance one owner: replicas of this group each recompute the instances of their
 * partitions, so a recompute that reads what the instance's previous one wrote (segments, archive pages) never
 * runs beside another of the same instance, and no lock is taken. The facts of a span were written before it was
 * published, so the recompute reads them; a replay recomputes the same spans from the same facts. After a
 * rebalance the write clock is read again from the stored versions, so an instance taken over from another
 * machine gets newer versions than its previous owner wrote, whatever the two clocks say.
 */

import { refreshVersionClock } from "../../lib/series/clock.ts";
import { type SeriesTouched, touchSeries } from "../../lib/series/facts.ts";
import { createRecomputeQueue, recomputeSeries } from "../../lib/series/recompute.ts";
import type { SeriesDeps } from "../../lib/series/settings.ts";
import { createSeriesDeps } from "../../lib/series/settings.ts";
import { CONSUMER_GROUPS, type SeriesTouchedMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

/** Partition batches handled at once (their spans merge into one recompute pass). */
const CONCURRENT_PARTITIONS = 16;

/**
 * Over Kafka, how long a batch waits for the rest of its publish (one batch of the series processor reaches this
 * group's partitions in several fetch responses): a pass costs about the same whatever it holds. bench:pipeline over
 * the kcat mock cluster (4,000 blocks, one process): 39 series passes and 19 holders passes without a linger where
 * the processors before the split made 21 and 10, and process CPU 46–52 s against 30–38 s; with 100 ms still
 * 43–50 s; with 300 ms 35–40 s (docs/benchmarks.md).
 */
export const RECOMPUTE_LINGER_MS = 300;

export const seriesRecomputeProcessor = defineProcessor<
  SeriesTouchedMessage,
  SeriesDeps & { recompute: (touched: SeriesTouched) => Promise<void> }
>({
  name: "series-recompute",
  topic: "seriesTouched",
  group: CONSUMER_GROUPS.seriesRecompute,
  codec: (codecs) => codecs.seriesTouched,
  concurrentPartitions: CONCURRENT_PARTITIONS,
  lingerMs: RECOMPUTE_LINGER_MS,
  setup: (deps) => {
    const seriesDeps = createSeriesDeps({ ...deps, log: deps.log.child({ component: "series-recompute" }) });
    return {
      ...seriesDeps,
      // Batches of several partitions handled at once share one pass (a request joins the next one).
      recompute: createRecomputeQueue((touched) => recomputeSeries(seriesDeps, touched)),
    };
  },
  onAssigned: ({ state }) => refreshVersionClock(state.ch),
  // Following the chain, small rounds are held and recomputed together (RECOMPUTE_COALESCE_MS).
  hold: {
    spanOf: (messages) => {
      let lo = Number.POSITIVE_INFINITY;
      let hi = 0;
      for (const m of messages) {
        lo = Math.min(lo, m.lo);
        hi = Math.max(hi, m.hi, m.block_timestamp);
      }
      return { lo: Math.min(lo, hi), hi };
    },
  },
  async handle(messages, { state }) {
    const touched: SeriesTouched = new Map();
    for (const m of messages) {
      touchSeries(touched, m.instance_id, m.series_id, m.lo);
      touchSeries(touched, m.instance_id, m.series_id, m.hi);
    }
    await state.recompute(touched);
  },
});
