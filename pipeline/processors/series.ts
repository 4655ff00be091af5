/**
 * Series: `alephium-events.v2` → series facts of every definition (lib/series/definitions), then the
 * points, segments, archive pages and instances the batch touched, recomputed from the facts
 * (lib/series/writer.ts). A retraction marks its block's facts and recomputes what they reached.
 */
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
import { turn } from "../../lib/turns.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

export const seriesProcessor = defineProcessor<
  EventsMessage,
  SeriesDeps & { recompute: (touched: SeriesTouched) => Promise<void> },
  { touched: SeriesTouched; written: number }
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
  runs: {
    begin: () => ({ touched: new Map() as SeriesTouched, written: 0 }),
    // A run's facts of every definition, as one insert.
    async blocks(run, { deps }, batch) {
      const facts: FactRow[] = [];
      for (const m of run) {
        for (const f of factsOfMessage(m)) facts.push(f);
        const t = turn();
        if (t) await t;
      }
      await insertFacts(deps.ch, facts, batch.touched);
      batch.written += facts.length;
    },
    // A retraction marks its block's facts retracted.
    retraction: (m, { deps }, batch) =>
      retractFacts(deps.ch, { block_hash: m.block_hash, seq: m.seq }, batch.touched),
    // Then the points, segments, pages and instances the batch touched, recomputed from the facts.
    async end(batch, { deps, state }) {
      deps.metrics.pipelineRows.inc({ stage: "series", table: "series_block_facts" }, batch.written);
      await state.recompute(batch.touched);
    },
  },
});
