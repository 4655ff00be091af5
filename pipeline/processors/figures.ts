/**
 * Figures: `alephium.events.v2` → the facts behind token market figures (burned and locked amounts,
 * DEX pool reserve changes; lib/figures/facts.ts), then, every FIGURES_REFRESH_MS, the figures
 * themselves (price_usd, supplies, circulatingSupplyUsd, TVL of tokens and dapps) recomputed from
 * those facts and the price tables (lib/figures/store.ts), and ALPH's supply from the explorer backend and
 * the index (lib/figures/alph-supply.ts). Its first start rebuilds the facts of
 * events stored before it existed.
 */

import type { Config } from "../../lib/config.ts";
import { createExplorerClient } from "../../lib/explorer-client.ts";
import { type AlphSupplyReader, createAlphSupplyReader } from "../../lib/figures/alph-supply.ts";
import { backfillFigures, figuresBackfilled } from "../../lib/figures/backfill.ts";
import {
  BlockReserves,
  type FactContext,
  factContext,
  type ReserveChangeRow,
  type SupplyChangeRow,
  supplyChangeOf,
} from "../../lib/figures/facts.ts";
import {
  insertFacts,
  recordSupply,
  refreshFigures,
  retractFacts,
  tokensNeedingSupply,
} from "../../lib/figures/store.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import { turn } from "../../lib/turns.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";
import { type MetadataSource, nodeMetadataSource } from "./registry.ts";

/** Tokens whose total supply one round reads from the node, and the time a round may take. */
const SUPPLY_READS_PER_ROUND = 50;
const SUPPLY_ROUND_MS = 3_000;

/**
 * One round of total-supply reads (maxSupply is registry metadata from the node's getTotalSupply, not a
 * fact of the events): up to 50 tokens, for at most 3 s; returns how many were read.
 */
export async function readTokenSupplies(pg: Pg, metadata: MetadataSource, now: number): Promise<number> {
  let read = 0;
  const started = performance.now();
  for (const id of await tokensNeedingSupply(pg, SUPPLY_READS_PER_ROUND)) {
    if (performance.now() - started > SUPPLY_ROUND_MS) break;
    const meta = await metadata(id);
    await recordSupply(pg, id, meta?.totalSupply ?? null, now);
    read++;
  }
  return read;
}

interface FiguresState {
  ctx: FactContext;
  metadata: MetadataSource;
  alphSupply: AlphSupplyReader;
  refreshedAt: number;
  supplyReadAt: number;
}

export const figuresProcessor = defineProcessor<EventsMessage, FiguresState>({
  name: "figures",
  topic: "events",
  group: CONSUMER_GROUPS.figures,
  codec: (codecs) => codecs.events,
  async setup(deps) {
    const ctx = factContext(deps.config);
    if (!(await figuresBackfilled(deps.pg))) await backfillFigures(deps, ctx);
    return {
      ctx,
      // One attempt of at most 5 s: a token the node cannot answer is read again in a later round.
      metadata: nodeMetadataSource(deps, { retries: 0, timeoutMs: 5_000 }),
      alphSupply: createAlphSupplyReader(
        {
          ch: deps.ch,
          explorer: deps.config.EXPLORER_URL
            ? createExplorerClient({
                baseUrl: deps.config.EXPLORER_URL,
                timeoutMs: deps.config.EXPLORER_TIMEOUT_MS,
                log: deps.log,
                connections: 1,
              })
            : null,
          log: deps.log,
        },
        { refreshMs: deps.config.ALPH_SUPPLY_REFRESH_MS },
      ),
      refreshedAt: Number.NEGATIVE_INFINITY,
      supplyReadAt: Number.NEGATIVE_INFINITY,
    };
  },
  runs: {
    // A run's supply and pool reserve facts as one write.
    async blocks(run, { deps, state }) {
      const supply: SupplyChangeRow[] = [];
      const reserves: ReserveChangeRow[] = [];
      for (const m of run) {
        const offloaded = new Map(m.offloaded.map((o) => [o.ref, o.payload_json]));
        const block = new BlockReserves();
        for (const w of m.events) {
          const e = {
            ...w,
            block_hash: m.block_hash,
            timestamp: m.block_timestamp,
            payload: (w.payload_ref ? offloaded.get(w.payload_ref) : undefined) ?? w.payload_json,
          };
          const s = supplyChangeOf(e, state.ctx, true, m.seq);
          if (s) supply.push(s);
          block.add(e);
        }
        reserves.push(...block.rows({ block_hash: m.block_hash, ts: m.block_timestamp }, true, m.seq));
        const t = turn();
        if (t) await t;
      }
      await insertFacts(deps.ch, supply, reserves);
      deps.metrics.pipelineRows.inc({ stage: "figures", table: "supply_changes" }, supply.length);
      deps.metrics.pipelineRows.inc({ stage: "figures", table: "pool_reserve_changes" }, reserves.length);
    },
    retraction: (m, { deps }) => retractFacts(deps.ch, { block_hash: m.block_hash, seq: m.seq }),
    // Then, every refresh interval, the token supplies and the figures.
    end: (_batch, { deps, state }) => refreshAfterBatch(deps, state),
  },
});

/** Every refresh interval: the token supplies read from the node, then the figures recomputed from the facts. */
async function refreshAfterBatch(
  { ch, pg, config }: { ch: Ch; pg: Pg; config: Config },
  state: FiguresState,
): Promise<void> {
  const now = Date.now();
  if (config.FIGURES_SUPPLY_REFRESH_MS > 0 && now - state.supplyReadAt >= config.FIGURES_SUPPLY_REFRESH_MS) {
    state.supplyReadAt = now;
    await readTokenSupplies(pg, state.metadata, now);
  }
  if (now - state.refreshedAt < config.FIGURES_REFRESH_MS) return;
  state.refreshedAt = now;
  await refreshFigures(
    { ch, pg },
    { now, maxPriceAgeMs: config.FIGURES_MAX_PRICE_AGE_MS, alphSupply: await state.alphSupply.read(now) },
  );
}
