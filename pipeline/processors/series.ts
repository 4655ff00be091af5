/**
 * Series: `alephium.events.v2` → series facts of every definition (lib/series/definitions); then the span of
 * every instance the batch touched goes on `alephium.series-touched.v1`, keyed by instance id, for
 * series-recompute (./series-recompute.ts), which recomputes the points, segments, archive pages and instances
 * from the facts. A retraction marks its block's facts and touches what they reached.
 *
 * Every replica works at once, each on its partitions: facts are keyed and versioned rows, and the spans are
 * published after the facts they cover were written (a replay writes the same facts and publishes again).
 */
import { CHAIN_COUNT } from "../../lib/series/definition.ts";
import {
  type FactRow,
  factsOfMessage,
  insertFacts,
  retractFacts,
  type SeriesTouched,
} from "../../lib/series/facts.ts";
import { turn } from "../../lib/turns.ts";
import { CONSUMER_GROUPS, type EventsMessage, type SeriesTouchedMessage, TOPICS } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

export const seriesProcessor = defineProcessor<
  EventsMessage,
  undefined,
  { touched: SeriesTouched; written: number; newest: number }
>({
  name: "series",
  topic: "events",
  group: CONSUMER_GROUPS.series,
  codec: (codecs) => codecs.events,
  // Inserts and publishes only: batches of several partitions may run at once.
  concurrentPartitions: CHAIN_COUNT,
  runs: {
    begin: () => ({ touched: new Map() as SeriesTouched, written: 0, newest: 0 }),
    // A run's facts of every definition, as one insert.
    async blocks(run, { deps }, batch) {
      const facts: FactRow[] = [];
      for (const m of run) {
        for (const f of factsOfMessage(m)) facts.push(f);
        if (m.block_timestamp > batch.newest) batch.newest = m.block_timestamp;
        const t = turn();
        if (t) await t;
      }
      await insertFacts(deps.ch, facts, batch.touched);
      batch.written += facts.length;
    },
    // A retraction marks its block's facts retracted.
    async retraction(m, { deps }, batch) {
      if (m.block_timestamp > batch.newest) batch.newest = m.block_timestamp;
      await retractFacts(deps.ch, { block_hash: m.block_hash, seq: m.seq }, batch.touched);
    },
    // Then the touched spans, one message per instance, for series-recompute.
    async end(batch, { deps }) {
      deps.metrics.pipelineRows.inc({ stage: "series", table: "series_block_facts" }, batch.written);
      const messages: SeriesTouchedMessage[] = [];
      for (const [id, span] of batch.touched)
        messages.push({
          kind: "touched",
          instance_id: id,
          series_id: span.seriesId,
          lo: span.lo,
          hi: span.hi,
          block_timestamp: batch.newest,
        });
      await deps.bus.publish(
        TOPICS.seriesTouched,
        messages.map((m) => ({ key: m.instance_id, value: deps.codecs.seriesTouched.encode(m) })),
      );
    },
  },
});
