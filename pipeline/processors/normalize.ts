/**
 * Normalize processor: `alephium.blocks.v1` → pure `normalizeBlock` → `alephium.events.v1`.
 * Dapp attribution comes from Postgres (`contracts.dapp_id`, seeded with known mainnet contracts);
 * pools learned from factory events are kept in `dex_pools` so a restart decodes the same swaps.
 */
import type { node } from "@alephium/web3";
import type { RawBlock } from "../../lib/chain/types.ts";
import type { Subscription } from "../../lib/stores/bus.ts";
import type { PipelineDeps } from "../deps.ts";
import { type BlockMessage, type EventsMessage, GROUPS, TOPICS, toWireEvent } from "../messages.ts";
import {
  createPoolRegistry,
  createStaticDappRegistry,
  extractPools,
  KNOWN_DAPP_CONTRACTS,
  KNOWN_FACTORIES,
  KNOWN_POOLS,
  normalizeBlock,
  type PoolFactory,
  type PoolInfo,
} from "../normalize/index.ts";

/** How long a loaded dapp/factory registry is trusted before it is read again. */
const REGISTRY_TTL_MS = 30_000;

export interface Processor {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

async function loadContext(deps: PipelineDeps) {
  const dappRows = await deps.pg.query<{ address: string; dapp_id: string }>(
    "normalize_dapps",
    "SELECT address, dapp_id FROM contracts WHERE dapp_id IS NOT NULL",
  );
  const dapps = createStaticDappRegistry([
    ...dappRows.map((r) => ({ contract_address: r.address, dapp_id: r.dapp_id, label: "" })),
    ...KNOWN_DAPP_CONTRACTS,
  ]);
  const factoryRows = await deps.pg.query<PoolFactory>(
    "normalize_factories",
    `SELECT factory_address, dapp_id, created_event_index, token0_field, token1_field, pool_field,
            swap_event_index, mint_event_index, burn_event_index FROM dex_factories`,
  );
  const factories = [...KNOWN_FACTORIES, ...factoryRows];
  const poolRows = await deps.pg.query<{
    pool_address: string;
    dapp_id: string;
    token0_id: string;
    token1_id: string;
    factory_address: string | null;
  }>("normalize_pools", "SELECT pool_address, dapp_id, token0_id, token1_id, factory_address FROM dex_pools");
  const pools = createPoolRegistry(KNOWN_POOLS);
  pools.add(
    poolRows.map((r) => {
      const f = factories.find((x) => x.factory_address === r.factory_address);
      return {
        pool_address: r.pool_address,
        dapp_id: r.dapp_id,
        token0_id: r.token0_id,
        token1_id: r.token1_id,
        swap_event_index: f?.swap_event_index ?? 2,
        mint_event_index: f?.mint_event_index ?? 0,
        burn_event_index: f?.burn_event_index ?? 1,
      } satisfies PoolInfo;
    }),
  );
  return { dapps, factories, pools, loadedAt: Date.now() };
}

/** The RawBlock a main-chain block message carries. */
export function rawBlockOf(m: BlockMessage): RawBlock {
  return {
    chainIndex: m.chain_index,
    block: JSON.parse(m.block_json) as node.BlockEntry,
    events: JSON.parse(m.events_json) as node.ContractEventByBlockHash[],
    mainChain: true,
  };
}

/** Pure part: one block message to its events message (pool discovery happens before, by the caller). */
export function toEventsMessage(
  m: BlockMessage,
  ctx: Parameters<typeof normalizeBlock>[1],
  parsed?: RawBlock,
): { message: EventsMessage; raw: RawBlock | null } {
  if (!m.main_chain) {
    return {
      raw: null,
      message: {
        chain_index: m.chain_index,
        block_hash: m.hash,
        block_height: m.height,
        block_timestamp: m.timestamp,
        main_chain: false,
        seq: m.seq,
        events: [],
        offloaded: [],
      },
    };
  }
  const raw = parsed ?? rawBlockOf(m);
  const result = normalizeBlock(raw, ctx);
  return {
    raw,
    message: {
      chain_index: m.chain_index,
      block_hash: m.hash,
      block_height: m.height,
      block_timestamp: m.timestamp,
      main_chain: true,
      seq: m.seq,
      events: result.events.map(toWireEvent),
      offloaded: result.offloaded.map((o) => ({ ref: o.ref, payload_json: JSON.stringify(o.payload) })),
    },
  };
}

export function createNormalizeProcessor(deps: PipelineDeps): Processor {
  const log = deps.log.child({ component: "normalize" });
  let ctx: Awaited<ReturnType<typeof loadContext>> | null = null;
  let sub: Subscription | null = null;
  return {
    name: "normalize",
    async start() {
      sub = await deps.bus.subscribe({
        topic: TOPICS.blocks,
        group: GROUPS.normalize,
        handle: async (records) => {
          if (!ctx || Date.now() - ctx.loadedAt > REGISTRY_TTL_MS) ctx = await loadContext(deps);
          const out: EventsMessage[] = [];
          const learned: PoolInfo[] = [];
          for (const record of records) {
            const m = deps.codecs.blocks.decode(record.value);
            const raw = m.main_chain ? rawBlockOf(m) : undefined;
            if (raw) {
              // Pools created in this block must be known before its own swaps are decoded.
              const pools = extractPools(raw, ctx.factories);
              if (pools.length > 0) {
                ctx.pools.add(pools);
                learned.push(...pools);
              }
            }
            out.push(
              toEventsMessage(
                m,
                {
                  dapps: ctx.dapps,
                  pools: ctx.pools,
                  maxPayloadBytes: deps.config.PAYLOAD_MAX_BYTES,
                },
                raw,
              ).message,
            );
          }
          for (const p of learned) {
            await deps.pg.query(
              "normalize_pool_save",
              `INSERT INTO dex_pools (pool_address, dapp_id, token0_id, token1_id, factory_address)
               VALUES ($1, $2, $3, $4, $5) ON CONFLICT (pool_address) DO NOTHING`,
              [
                p.pool_address,
                p.dapp_id,
                p.token0_id,
                p.token1_id,
                ctx.factories.find((f) => f.dapp_id === p.dapp_id)?.factory_address ?? null,
              ],
            );
          }
          await deps.bus.publish(
            TOPICS.events,
            out.map((m) => ({ key: String(m.chain_index), value: deps.codecs.events.encode(m) })),
          );
          deps.metrics.pipelineMessages.inc({ stage: "normalize", topic: TOPICS.blocks }, records.length);
          log.debug({ blocks: records.length, pools_learned: learned.length }, "Blocks normalized.");
        },
      });
    },
    async stop() {
      await sub?.stop();
      sub = null;
    },
  };
}
