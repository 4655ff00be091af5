/**
 * Series: `alephium-events.v2` → series facts of every definition (lib/series/definitions), then the
 * points, segments, archive pages and instances the batch touched, recomputed from the facts
 * (lib/series/writer.ts). A retraction marks its block's facts and recomputes what they reached.
 */
import { applyInRuns } from "../../lib/batch.ts";
import { CHAIN_COUNT } from "../../lib/series/definition.ts";
import { createSeriesDeps } from "../../lib/series/settings.ts";
import {
  createRecomputeQueue,
  type FactRow,
  factsOfMessage,
  insertFacts,
  recomputeSeries,
  retractFacts,
  type SeriesDeps,
  type SeriesTouched,
} from "../../lib/series/writer.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

export const seriesProcessor = defineProcessor<
  EventsMessage,
  SeriesDeps & { recompute: (touched: SeriesTouched) => Promise<void> }
>({
  name: "series",
  topic: "events",
  group: CONSUMER_GROUPS.series,
  codec: (codecs) => codecs.events,
  // Each batch reads what the previous one wrote (and recomputes from it): one process at a time.
  singleton: true,
  // Every partition touches the `all` instances: batches of all partitions (one per chain at most) share
  // one recompute pass.
  concurrentPartitions: CHAIN_COUNT,
  setup: (deps) => {
    const seriesDeps = createSeriesDeps({ ...deps, log: deps.log.child({ component: "series" }) });
    return {
      ...seriesDeps,
      recompute: createRecomputeQueue((touched) => recomputeSeries(seriesDeps, touched)),
    };
  },
  async handle(messages, { deps, state }) {
    const touched: SeriesTouched = new Map();
    let written = 0;
    await applyInRuns(messages, {
      async blocks(run) {
        const facts: FactRow[] = [];
        for (const m of run) for (const f of factsOfMessage(m)) facts.push(f);
        await insertFacts(deps.ch, facts, touched);
        written += facts.length;
      },
      retraction: (m) => retractFacts(deps.ch, { block_hash: m.block_hash, seq: m.seq }, touched),
    });
    deps.metrics.pipelineRows.inc({ stage: "series", table: "series_block_facts" }, written);
    await state.recompute(touched);
  },
});
