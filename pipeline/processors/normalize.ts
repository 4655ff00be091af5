/**
 * Normalize: `alephium.blocks.v2` → pure `normalizeBlock` → `alephium.events.v2`.
 * What the normalizer knows besides the block (contract → dapp attribution and decoder kind, DEX pools)
 * is its own state, learned from the blocks it normalized (`normalize_contract_dapps`, `dex_pools`) on
 * top of the built-in seed lists and the operator's `dex_factories` and `decoder_contracts` (read at
 * start). It is saved before the events are published, so the same blocks give the same events
 * whatever other processors do.
 */
import type { node } from "@alephium/web3";
import type { RawBlock } from "../../lib/chain/types.ts";
import {
  type CodeCheckRound,
  type CodeHashSource,
  checkCodeHashes,
  stillNew,
} from "../../lib/dapps/code-check.ts";
import { type DecoderKind, isDecoderKind } from "../../lib/dapps/kinds.ts";
import {
  createExchangeWalletsRepo,
  exchangeBookAt,
  loadWalletRanges,
  type WalletRanges,
} from "../../lib/labels/exchange-wallets.ts";
import type { Metrics } from "../../lib/metrics.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import { mapWithTurns, turn } from "../../lib/turns.ts";
import type { PipelineDeps } from "../deps.ts";
import { nodeError } from "../ingest/node-client.ts";
import {
  type BlockEventsMessage,
  type BlockMessage,
  type BlockPosition,
  CONSUMER_GROUPS,
  type EventsMessage,
  eventsRetractionOf,
  type RawBlockMessage,
  TOPICS,
  toWireEvent,
} from "../messages.ts";
import {
  type CodeChange,
  createCodeHashBook,
  createDappBook,
  createDecoderBook,
  createPoolBook,
  extractCodeChanges,
  extractContractDapps,
  extractContractKinds,
  extractPools,
  isLiquidityLayout,
  KNOWN_DAPP_CONTRACTS,
  KNOWN_FACTORIES,
  KNOWN_POOLS,
  type MutableCodeHashBook,
  type MutableDappBook,
  type MutableDecoderBook,
  type MutablePoolBook,
  type NormalizeContext,
  type NormalizeResult,
  normalizeBlock,
  type PoolFactory,
  type PoolInfo,
} from "../normalize/index.ts";
import {
  createMarketBook,
  extractMarkets,
  type LendingMarket,
  type MutableMarketBook,
} from "../normalize/markets.ts";
import { defineProcessor } from "../processor.ts";

export interface NormalizeState {
  dapps: MutableDappBook;
  decoders: MutableDecoderBook;
  /** Expected code hashes (operator rows, then the built-in list) and the live ones blocks changed. */
  codeHashes: MutableCodeHashBook;
  factories: PoolFactory[];
  pools: MutablePoolBook;
  /** Exchange wallets with their block-time ranges, and the table's version they were read at. */
  wallets: WalletRanges;
  walletsVersion: string;
  /** Set when this replica's partitions may have changed: the next batch reads the saved state first. */
  stale?: boolean;
  /** Lending markets learned from MarketCreated (their later events carry the market's tokens). */
  markets: MutableMarketBook;
  /** Contracts the node check reads: every contract with a decoder or an expected code hash. */
  codeCheckContracts: Set<string>;
  /** The node check's schedule and its finished round not applied yet (kept across reloads of the state). */
  codeCheck?: CodeCheckState;
}

/** The normalizer's state as saved: seed lists, registered factories and decoders, and what it learned from blocks. */
export async function loadNormalizeState(pg: Pg): Promise<NormalizeState> {
  const factoryRows = await pg.query<Omit<PoolFactory, "liquidity_layout"> & { liquidity_layout: string }>(
    "normalize_factories",
    `SELECT factory_address, dapp_id, created_event_index, token0_field, token1_field, pool_field,
            swap_event_index, mint_event_index, burn_event_index, stable_field, liquidity_layout FROM dex_factories`,
  );
  const factories: PoolFactory[] = [
    ...KNOWN_FACTORIES,
    ...factoryRows.map((f) => ({
      ...f,
      // An unknown layout name decodes no liquidity event rather than a wrong one.
      liquidity_layout: isLiquidityLayout(f.liquidity_layout) ? f.liquidity_layout : "ayin",
      mint_event_index: isLiquidityLayout(f.liquidity_layout) ? f.mint_event_index : null,
      burn_event_index: isLiquidityLayout(f.liquidity_layout) ? f.burn_event_index : null,
    })),
  ];
  const operatorRows = await pg.query<{
    contract_address: string;
    dapp_id: string;
    decoder: string;
    label: string;
    code_hash: string | null;
  }>(
    "normalize_decoder_contracts",
    "SELECT contract_address, dapp_id, decoder, label, code_hash FROM decoder_contracts ORDER BY contract_address",
  );
  const operator = operatorRows.flatMap((r) =>
    isDecoderKind(r.decoder) ? [{ ...r, decoder: r.decoder }] : [],
  );
  const learned = await pg.query<{
    address: string;
    dapp_id: string;
    decoder: string | null;
    code_hash: string | null;
    code_since_ts: string | null;
  }>(
    "normalize_contract_dapps_load",
    "SELECT address, dapp_id, decoder, code_hash, code_since_ts FROM normalize_contract_dapps",
  );
  const baselines = await pg.query<{ contract_address: string; code_hash: string }>(
    "normalize_code_baselines_load",
    "SELECT contract_address, code_hash FROM code_hash_baselines ORDER BY contract_address",
  );
  // An operator's row names the code its layout fits, ahead of the built-in list's artifact hash, ahead of the
  // node's first answer for a contract with neither.
  const codeHashes = createCodeHashBook(
    [...operatorRows, ...KNOWN_DAPP_CONTRACTS, ...baselines],
    learned.flatMap((r) =>
      r.code_hash
        ? [{ contract_address: r.address, code_hash: r.code_hash, since_ts: Number(r.code_since_ts ?? 0) }]
        : [],
    ),
  );
  // A registered factory belongs to its dapp, and so do the contracts it creates.
  const dapps = createDappBook([
    ...KNOWN_DAPP_CONTRACTS,
    ...operator,
    ...factories.map((f) => ({ contract_address: f.factory_address, dapp_id: f.dapp_id, label: "factory" })),
    ...learned.map((r) => ({ contract_address: r.address, dapp_id: r.dapp_id, label: "" })),
  ]);
  const decoders = createDecoderBook([
    ...KNOWN_DAPP_CONTRACTS,
    ...operator,
    ...learned.flatMap((r) =>
      r.decoder && isDecoderKind(r.decoder) ? [{ contract_address: r.address, decoder: r.decoder }] : [],
    ),
  ]);
  const poolRows = await pg.query<{
    pool_address: string;
    dapp_id: string;
    token0_id: string;
    token1_id: string;
    factory_address: string | null;
    stable: boolean | null;
  }>(
    "normalize_pools",
    "SELECT pool_address, dapp_id, token0_id, token1_id, factory_address, stable FROM dex_pools",
  );
  const pools = createPoolBook(KNOWN_POOLS);
  pools.add(
    poolRows.map((r) => {
      const f = factories.find((x) => x.factory_address === r.factory_address);
      return {
        pool_address: r.pool_address,
        dapp_id: r.dapp_id,
        token0_id: r.token0_id,
        token1_id: r.token1_id,
        swap_event_index: f?.swap_event_index ?? 2,
        mint_event_index: f ? f.mint_event_index : 0,
        burn_event_index: f ? f.burn_event_index : 1,
        stable: r.stable,
        liquidity_layout: f?.liquidity_layout ?? "ayin",
      } satisfies PoolInfo;
    }),
  );
  const marketRows = await pg.query<LendingMarket>(
    "normalize_markets",
    "SELECT contract_address, market_id, loan_token, collateral_token FROM lending_markets",
  );
  const walletsVersion = await createExchangeWalletsRepo(pg).version();
  return {
    markets: createMarketBook(marketRows),
    dapps,
    decoders,
    codeHashes,
    codeCheckContracts: new Set([
      ...KNOWN_DAPP_CONTRACTS.map((r) => r.contract_address),
      ...operator.map((r) => r.contract_address),
      ...learned.flatMap((r) => (r.decoder ? [r.address] : [])),
    ]),
    factories,
    pools,
    wallets: await loadWalletRanges(pg),
    walletsVersion,
  };
}

/** Time a node check may wait for one contract's state. */
const CODE_CHECK_TIMEOUT_MS = 5_000;

/** A {@link CodeHashSource} reading the node's `GET /contracts/{address}/state` (404: null). */
export function nodeCodeHashSource(deps: Pick<PipelineDeps, "config">): CodeHashSource {
  const base = deps.config.NODE_URL.replace(/\/+$/, "");
  const headers: Record<string, string> = deps.config.NODE_API_KEY
    ? { "X-API-KEY": deps.config.NODE_API_KEY }
    : {};
  return async (address) => {
    const res = await fetch(`${base}/contracts/${encodeURIComponent(address)}/state`, {
      headers,
      signal: AbortSignal.timeout(CODE_CHECK_TIMEOUT_MS),
    });
    if (res.status === 404) return null;
    if (!res.ok) throw nodeError("contract-state", { status: res.status });
    const state = (await res.json()) as Partial<node.ContractState>;
    if (typeof state.codeHash !== "string") throw new Error(`contract-state of ${address} has no codeHash`);
    return state.codeHash;
  };
}

/** The node check's schedule, its finished round not applied yet, and the queue batches and rounds apply in. */
export interface CodeCheckState {
  nextAt: number;
  running: boolean;
  done: CodeCheckRound | null;
  queue: Promise<unknown>;
}

/** Runs `fn` after every batch and round queued before it (a batch and a round never interleave their writes). */
function serialized<T>(check: CodeCheckState, fn: () => Promise<T>): Promise<T> {
  const run = check.queue.then(fn);
  check.queue = run.catch(() => undefined);
  return run;
}

/**
 * Starts a node check in the background when one is due (CODE_HASH_CHECK_INTERVAL_S; the first with the first
 * batch). Its round is applied between batches ({@link applyCodeCheck}), so what it finds is saved before an event
 * it changes is published; a round that could not be saved is applied again before the next batch.
 */
export function startCodeCheck(
  deps: PipelineDeps,
  state: NormalizeState,
  log: PipelineDeps["log"],
  source?: CodeHashSource,
): void {
  const intervalS = deps.config.CODE_HASH_CHECK_INTERVAL_S;
  if (intervalS <= 0 || !deps.config.DAPP_DECODERS) return;
  const check = codeCheckOf(state);
  const now = Date.now();
  if (check.running || check.done || now < check.nextAt) return;
  check.running = true;
  check.nextAt = now + intervalS * 1000;
  void checkCodeHashes(
    [...state.codeCheckContracts],
    state.codeHashes,
    source ?? nodeCodeHashSource(deps),
    now,
  )
    .then((round) => {
      check.done = round;
      return serialized(check, () => applyCodeCheck(deps, state, log));
    })
    .catch((error: unknown) =>
      log.warn({ err: String(error) }, "Code-hash check not saved; the next batch saves it."),
    )
    .finally(() => {
      check.running = false;
    });
}

const codeCheckOf = (state: NormalizeState): CodeCheckState =>
  (state.codeCheck ??= { nextAt: 0, running: false, done: null, queue: Promise.resolve() });

/**
 * Saves and applies a finished node check: the node's first answers as expected hashes, changed code as live code
 * since the check's time (blocks published before it keep their decoding, on a replay too), and counts them.
 */
export async function applyCodeCheck(
  deps: PipelineDeps,
  state: NormalizeState,
  log: PipelineDeps["log"],
): Promise<void> {
  const check = state.codeCheck;
  const done = check?.done;
  if (!check || !done) return;
  const round = stillNew(done, state.codeHashes);
  if (round.baselines.length > 0)
    await deps.pg.query(
      "normalize_code_baselines_save",
      `INSERT INTO code_hash_baselines (contract_address, code_hash, seen_at)
         SELECT *, $3::bigint FROM unnest($1::text[], $2::text[]) ON CONFLICT (contract_address) DO NOTHING`,
      [round.baselines.map((b) => b.contract_address), round.baselines.map((b) => b.code_hash), Date.now()],
    );
  if (round.changes.length > 0)
    // Another replica may have saved the same change first: its time stays.
    await deps.pg.query(
      "normalize_code_checks_save",
      `INSERT INTO normalize_contract_dapps (address, dapp_id, code_hash, code_since_ts, code_source)
         SELECT *, 'node' FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
         ON CONFLICT (address) DO UPDATE
           SET code_hash = EXCLUDED.code_hash, code_since_ts = EXCLUDED.code_since_ts, code_source = 'node'
           WHERE normalize_contract_dapps.code_hash IS DISTINCT FROM EXCLUDED.code_hash`,
      [
        round.changes.map((c) => c.contract_address),
        round.changes.map((c) => state.dapps.dappOf(c.contract_address) ?? "unknown"),
        round.changes.map((c) => c.code_hash),
        round.changes.map((c) => c.since_ts),
      ],
    );
  // Saved: now this replica applies it (a failed save above leaves the round for the next batch).
  check.done = null;
  state.codeHashes.addExpected(round.baselines);
  state.codeHashes.add(round.changes);
  for (const c of round.changes)
    log.warn(
      { contract_address: c.contract_address, live_code_hash: c.code_hash },
      "A dapp contract runs code its decoder was not written for: its events are published generic from now on. Register its layout with a decoder_contracts row naming the new code_hash (docs/dapps.md).",
    );
  for (const [result, n] of Object.entries(done.counts))
    if (n > 0) deps.metrics.codeChecks.inc({ result }, n);
  if (done.error !== undefined) {
    deps.metrics.codeChecks.inc({ result: "error" });
    log.warn(
      { err: String((done.error as Error).cause ?? done.error) },
      "Code-hash check stopped: the node did not answer a contract's state; the next check reads them all again.",
    );
  }
}

/** Counts the events a decoder refused (payload `decode_error`), by decoder kind and contract event index. */
export function countDecodeErrors(
  metrics: Pick<Metrics, "decodeErrors" | "codeHashRefusals">,
  messages: readonly EventsMessage[],
): void {
  for (const m of messages) {
    if (m.kind !== "block") continue;
    for (const e of m.events) {
      if (e.type !== "undecoded") continue;
      // An offloaded payload travels beside the event.
      const json = e.payload_ref
        ? (m.offloaded.find((o) => o.ref === e.payload_ref)?.payload_json ?? "{}")
        : e.payload_json;
      if (!json.includes('"decode_error"')) continue;
      const payload = JSON.parse(json) as { decoder?: unknown; decode_error?: unknown };
      if (typeof payload.decode_error !== "string") continue;
      metrics.decodeErrors.inc({
        decoder: String(payload.decoder ?? ""),
        event_index: String(e.contract_event_index ?? ""),
      });
      if (payload.decode_error === "code_hash_changed")
        metrics.codeHashRefusals.inc({ contract_address: e.contract_address });
    }
  }
}

/** The RawBlock a block message carries. */
export function rawBlockOf(m: RawBlockMessage): RawBlock {
  return {
    chainIndex: m.chain_index,
    block: JSON.parse(m.block_json) as node.BlockEntry,
    events: JSON.parse(m.events_json) as node.ContractEventByBlockHash[],
    mainChain: true,
  };
}

/** Pure part: one block message to its events message (what the block teaches is learned by the caller first). */
export function toEventsMessage(m: BlockMessage, ctx: NormalizeContext, parsed?: RawBlock): EventsMessage {
  if (m.kind === "retraction") return eventsRetractionOf(m);
  return blockEventsMessage(m, normalizeBlock(parsed ?? rawBlockOf(m), ctx));
}

/** The events message of a block at `pos` from what normalizing it gave. */
export function blockEventsMessage(pos: BlockPosition, result: NormalizeResult): BlockEventsMessage {
  return {
    kind: "block",
    chain_index: pos.chain_index,
    block_hash: pos.hash,
    block_height: pos.height,
    block_timestamp: pos.timestamp,
    seq: pos.seq,
    events: result.events.map(toWireEvent),
    offloaded: result.offloaded.map((o) => ({ ref: o.ref, payload_json: JSON.stringify(o.payload) })),
  };
}

export const normalizeProcessor = defineProcessor<BlockMessage, NormalizeState>({
  name: "normalize",
  topic: "blocks",
  group: CONSUMER_GROUPS.normalize,
  codec: (codecs) => codecs.blocks,
  setup: (deps) => loadNormalizeState(deps.pg),
  // A partition taken over from another replica comes with what that replica learned (V3 games, rooms, pools,
  // code changes): read the saved state again before the first batch of a new assignment.
  onAssigned: ({ state }) => {
    state.stale = true;
  },
  async handle(messages, { deps, state, log }) {
    if (state.stale) {
      Object.assign(state, await loadNormalizeState(deps.pg));
      state.stale = false;
    }
    try {
      await serialized(codeCheckOf(state), async () => {
        await applyCodeCheck(deps, state, log);
        await normalizeBatch(messages, deps, state);
      });
      startCodeCheck(deps, state, log);
    } catch (error) {
      // What this batch taught may not be saved: start again from the saved state.
      Object.assign(state, await loadNormalizeState(deps.pg));
      throw error;
    }
    log.debug({ blocks: messages.length }, "Blocks normalized.");
  },
});

/** Normalizes a batch: learns what its blocks create, saves it, counts decode errors, then publishes. */
export async function normalizeBatch(messages: BlockMessage[], deps: PipelineDeps, state: NormalizeState) {
  // Exchange wallets are read again when they changed (one small query per batch): a change applies
  // to blocks after every published one, so reading it before this batch is all determinism needs.
  const version = await createExchangeWalletsRepo(deps.pg).version();
  if (version !== state.walletsVersion) {
    state.wallets = await loadWalletRanges(deps.pg);
    state.walletsVersion = version;
  }
  const out: EventsMessage[] = [];
  const pools: PoolInfo[] = [];
  const contracts: { contract_address: string; dapp_id: string }[] = [];
  const kinds: { contract_address: string; decoder: DecoderKind }[] = [];
  const codeChanges: CodeChange[] = [];
  const markets: LendingMarket[] = [];
  for (const m of messages) {
    const raw = m.kind === "block" ? rawBlockOf(m) : undefined;
    if (raw) {
      // What a block creates must be known before its own events are decoded.
      const newPools = extractPools(raw, state.factories);
      state.pools.add(newPools);
      pools.push(...newPools);
      const newContracts = extractContractDapps(raw, state.dapps, state.decoders);
      state.dapps.add(newContracts);
      contracts.push(...newContracts);
      const newKinds = extractContractKinds(raw, state.decoders);
      state.decoders.add(newKinds);
      kinds.push(...newKinds);
      for (const k of newKinds) state.codeCheckContracts.add(k.contract_address);
      if (deps.config.DAPP_DECODERS) {
        const newMarkets = extractMarkets(raw, state.decoders);
        state.markets.add(newMarkets);
        markets.push(...newMarkets);
      }
    }
    const ctx = {
      dapps: state.dapps,
      decoders: deps.config.DAPP_DECODERS ? state.decoders : undefined,
      codeHashes: state.codeHashes,
      markets: state.markets,
      factories: state.factories,
      pools: state.pools,
      exchanges: exchangeBookAt(state.wallets, m.kind === "block" ? m.timestamp : 0),
      maxPayloadBytes: deps.config.PAYLOAD_MAX_BYTES,
    };
    out.push(toEventsMessage(m, ctx, raw));
    if (raw) {
      // A migrated contract's later blocks follow its new code (this block's later txs already did).
      const changes = extractCodeChanges(raw, state.decoders);
      state.codeHashes.add(changes);
      codeChanges.push(...changes);
    }
    const t = turn();
    if (t) await t;
  }
  if (contracts.length > 0) {
    await deps.pg.query(
      "normalize_contract_dapps_save",
      `INSERT INTO normalize_contract_dapps (address, dapp_id)
         SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (address) DO NOTHING`,
      [contracts.map((c) => c.contract_address), contracts.map((c) => c.dapp_id)],
    );
  }
  if (kinds.length > 0) {
    // A room's dapp row may have been saved just above (its parent's dapp); the kind completes it.
    await deps.pg.query(
      "normalize_contract_kinds_save",
      `INSERT INTO normalize_contract_dapps (address, dapp_id, decoder)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
         ON CONFLICT (address) DO UPDATE SET decoder = COALESCE(normalize_contract_dapps.decoder, EXCLUDED.decoder)`,
      [
        kinds.map((k) => k.contract_address),
        kinds.map((k) => state.dapps.dappOf(k.contract_address) ?? "unknown"),
        kinds.map((k) => k.decoder),
      ],
    );
  }
  if (codeChanges.length > 0) {
    // The last change of a contract in the batch is its live code.
    const last = [...new Map(codeChanges.map((c) => [c.contract_address, c])).values()];
    await deps.pg.query(
      "normalize_code_hashes_save",
      `INSERT INTO normalize_contract_dapps (address, dapp_id, code_hash, code_since_ts, code_source)
         SELECT *, 'migration' FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
         ON CONFLICT (address) DO UPDATE
           SET code_hash = EXCLUDED.code_hash, code_since_ts = EXCLUDED.code_since_ts, code_source = 'migration'`,
      [
        last.map((c) => c.contract_address),
        last.map((c) => state.dapps.dappOf(c.contract_address) ?? "unknown"),
        last.map((c) => c.code_hash),
        last.map((c) => c.since_ts),
      ],
    );
  }
  if (markets.length > 0)
    await deps.pg.query(
      "normalize_markets_save",
      `INSERT INTO lending_markets (contract_address, market_id, loan_token, collateral_token)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) ON CONFLICT DO NOTHING`,
      [
        markets.map((m) => m.contract_address),
        markets.map((m) => m.market_id),
        markets.map((m) => m.loan_token),
        markets.map((m) => m.collateral_token),
      ],
    );
  for (const p of pools) {
    await deps.pg.query(
      "normalize_pool_save",
      `INSERT INTO dex_pools (pool_address, dapp_id, token0_id, token1_id, factory_address, stable)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (pool_address) DO NOTHING`,
      [
        p.pool_address,
        p.dapp_id,
        p.token0_id,
        p.token1_id,
        p.factory_address ?? state.factories.find((f) => f.dapp_id === p.dapp_id)?.factory_address ?? null,
        p.stable ?? null,
      ],
    );
  }
  countDecodeErrors(deps.metrics, out);
  await deps.bus.publish(
    TOPICS.events,
    await mapWithTurns(out, (m) => ({ key: String(m.chain_index), value: deps.codecs.events.encode(m) })),
  );
}
