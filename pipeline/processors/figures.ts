/**
 * Figures: `alephium.events.v2` → the facts behind token market figures (burned and locked amounts,
 * DEX pool reserve changes; lib/figures/facts.ts), then, every FIGURES_REFRESH_MS, the figures
 * themselves (price_usd, supplies, circulatingSupplyUsd, TVL of tokens and dapps) recomputed from
 * those facts and the price tables (lib/figures/store.ts), and ALPH's supply from the explorer backend and
 * the index (lib/figures/alph-supply.ts). Its first start rebuilds the facts of
 * events stored before it existed.
 */

import { NodeProvider } from "@alephium/web3";
import type { Config } from "../../lib/config.ts";
import { createExplorerClient } from "../../lib/explorer-client.ts";
import { type AlphSupplyReader, createAlphSupplyReader } from "../../lib/figures/alph-supply.ts";
import { backfillFigures, figuresBackfilled } from "../../lib/figures/backfill.ts";
import { bridgedOut } from "../../lib/figures/compute.ts";
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
import type { PipelineDeps } from "../deps.ts";
import { nodeError } from "../ingest/node-client.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";
import { type MetadataSource, nodeMetadataSource } from "./registry.ts";

/** Tokens whose total supply one round reads from the node, and the time a round may take. */
const SUPPLY_READS_PER_ROUND = 50;
const SUPPLY_ROUND_MS = 3_000;

/** What a contract holds of a token, from the node's contract state (smallest units); null when unknown. */
export type HoldingSource = (contractAddress: string, tokenId: string) => Promise<string | null>;

/** A {@link HoldingSource} reading `GET /contracts/{address}/state`: one attempt of at most `timeoutMs`. */
export function nodeHoldingSource(
  deps: Pick<PipelineDeps, "config" | "log">,
  options: { timeoutMs: number },
): HoldingSource {
  const provider = new NodeProvider(deps.config.NODE_URL, deps.config.NODE_API_KEY || undefined);
  return async (address, tokenId) => {
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("contract-state timed out")), options.timeoutMs);
      });
      const state = await Promise.race([
        provider.contracts.getContractsAddressState(address).catch((error: unknown) => {
          throw nodeError("contract-state", error);
        }),
        timeout,
      ]);
      return state.asset.tokens?.find((t) => t.id === tokenId)?.amount ?? "0";
    } catch (error) {
      deps.log.debug({ contract_address: address, err: String(error) }, "No contract state for bridge pool.");
      return null;
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * One round of total-supply reads (maxSupply is registry metadata from the node, not a fact of the events): up
 * to 50 tokens, for at most 3 s; returns how many were read. A bridged token's supply is what left its bridge
 * pool (the pool's issuance minus what it still holds), never its getTotalSupply: a pool that answers with its
 * issuance would count the unissued supply. Its maxSupply is left as it was while the pool cannot be read.
 */
export async function readTokenSupplies(
  pg: Pg,
  sources: { metadata: MetadataSource; holding: HoldingSource },
  now: number,
): Promise<number> {
  let read = 0;
  const started = performance.now();
  for (const due of await tokensNeedingSupply(pg, SUPPLY_READS_PER_ROUND)) {
    if (performance.now() - started > SUPPLY_ROUND_MS) break;
    let supply: string | null;
    if (due.bridge_pool) {
      const held = await sources.holding(due.contract_address, due.id);
      supply = held === null ? null : (bridgedOut(held)?.toString() ?? null);
    } else supply = (await sources.metadata(due.id))?.totalSupply ?? null;
    await recordSupply(pg, due.id, supply, now);
    read++;
  }
  return read;
}

interface FiguresState {
  ctx: FactContext;
  metadata: MetadataSource;
  holding: HoldingSource;
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
      holding: nodeHoldingSource(deps, { timeoutMs: 5_000 }),
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
    await readTokenSupplies(pg, state, now);
  }
  if (now - state.refreshedAt < config.FIGURES_REFRESH_MS) return;
  state.refreshedAt = now;
  await refreshFigures(
    { ch, pg },
    { now, maxPriceAgeMs: config.FIGURES_MAX_PRICE_AGE_MS, alphSupply: await state.alphSupply.read(now) },
  );
}
