/**
 * Candles: `alephium.events.v2` → trades (every on-chain swap and oracle value), then the candles of
 * the watched pairs and the spot rows those trades touch, recomputed from `trades FINAL`
 * (lib/prices/writer.ts). Pairs added since the last batch are rebuilt from stored events first.
 */
import { backfillPair } from "../../lib/prices/backfill.ts";
import {
  isOracleCandidate,
  type OracleContracts,
  type TradeRow,
  tradesOfBlock,
} from "../../lib/prices/trades.ts";
import { loadCandlePairs, loadOracleContracts } from "../../lib/prices/watched.ts";
import {
  insertTrades,
  recomputeCandles,
  recomputeSpot,
  retractTrades,
  type Touched,
  touch,
} from "../../lib/prices/writer.ts";
import { turn } from "../../lib/turns.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

/** How often a batch without trades still looks for pairs to rebuild. */
const PENDING_CHECK_MS = 5000;

interface CandlesBatch {
  /** Oracle contracts (read only for a batch that holds a candidate OracleUpdate event). */
  oracles: OracleContracts;
  touched: Touched;
  written: number;
}

export const candlesProcessor = defineProcessor<EventsMessage, { pendingCheckedAt: number }, CandlesBatch>({
  name: "candles",
  topic: "events",
  group: CONSUMER_GROUPS.candles,
  codec: (codecs) => codecs.events,
  setup: () => ({ pendingCheckedAt: Number.NEGATIVE_INFINITY }),
  runs: {
    begin: async (messages, { deps }) => ({
      oracles: messages.some((m) => m.kind === "block" && m.events.some(isOracleCandidate))
        ? await loadOracleContracts(deps.pg)
        : (new Map() as OracleContracts),
      touched: new Map(),
      written: 0,
    }),
    // A run's trades (every on-chain swap and oracle value) as one insert.
    async blocks(run, { deps }, batch) {
      const trades: TradeRow[] = [];
      for (const m of run) {
        for (const t of tradesOfBlock(m, batch.oracles)) {
          trades.push(t);
          touch(batch.touched, t.pool, t.ts);
        }
        const next = turn();
        if (next) await next;
      }
      await insertTrades(deps.ch, trades);
      batch.written += trades.length;
    },
    retraction: (m, { deps }, batch) =>
      retractTrades(deps.ch, [{ block_hash: m.block_hash, seq: m.seq }], batch.touched),
    // Then the candles and spot rows the trades touched, and the candles of pairs added since.
    async end(batch, { deps, log, state }) {
      const { ch, pg } = deps;
      deps.metrics.pipelineRows.inc({ stage: "candles", table: "trades" }, batch.written);
      // A batch without trades has nothing to recompute: it only looks for pairs to rebuild, now and then.
      if (batch.touched.size === 0 && performance.now() - state.pendingCheckedAt < PENDING_CHECK_MS) return;
      state.pendingCheckedAt = performance.now();
      // Read after the trades are written: a pair added later finds them when it is backfilled.
      const pairs = await loadCandlePairs(pg);
      // Spot before candles: a reader that sees a batch's candles sees its spot rows too.
      await recomputeSpot(ch, batch.touched);
      await recomputeCandles(ch, pairs, batch.touched);
      for (const pair of pairs) {
        if (pair.backfilled_at !== null) continue;
        const r = await backfillPair({ ch, pg, log }, pair);
        log.info({ pair_id: pair.id, trades: r.trades }, "New pair's candles rebuilt.");
      }
    },
  },
});
