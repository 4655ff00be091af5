/**
 * Ingest: follows a full node and publishes main-chain blocks (with their contract events) on
 * `alephium.blocks.v2`, keyed by chain index so each chain's blocks stay in order.
 *
 * Per chain it keeps a cursor (last published height and hash) in Postgres, written after the
 * publish resolved. A block is published once CONFIRMATIONS blocks sit on top of it. A block whose
 * parent is not the cursor's hash (or a published height whose hash changed) is a reorg: ingest walks
 * back to the fork point with `/blockflow/hashes`, publishes retractions for the
 * orphaned blocks, rewinds the cursor and fetches the winning branch in the next round.
 */
import type { node } from "@alephium/web3";
import { ADDRESS_GROUPS, chainIndexOf } from "../../lib/chain/types.ts";
import { AppError } from "../../lib/errors.ts";
import { type IngestProgressRow, saveIngestProgress, setIngestGauges } from "../../lib/pipeline-progress.ts";
import { backoffMs, isRetryable, sleep } from "../../lib/retry.ts";
import { mapWithTurns } from "../../lib/turns.ts";
import type { PipelineDeps } from "../deps.ts";
import { type BlockMessage, TOPICS } from "../messages.ts";
import type { NodeClient } from "./node-client.ts";

export interface IngestOptions {
  /** Backfill start (ms); 0 = one hour before the node's tip. */
  startTs: number;
  confirmations: number;
  /** Largest window of one blocks-with-events call (the node caps it at 30 minutes). */
  maxWindowMs: number;
  /**
   * Window of the first round (default `maxWindowMs`): the window then doubles each round while answers stay
   * small, so the first round after a start is short and its events are served seconds after the start.
   */
  firstWindowMs?: number;
  /** Windows fetched at once during backfill. */
  concurrency: number;
  /** Fetch the next round's windows while a backfill round publishes (default true). */
  prefetch?: boolean;
  pollMs: number;
  /** Warn when the cursors have not moved for this long while the node has blocks to publish. */
  stallWarnMs?: number;
  /** Called after every round that published something (progress bar, logs). */
  onProgress?: (p: IngestProgress) => void;
}

export interface IngestProgress {
  startTs: number;
  /** Lowest per-chain cursor timestamp: everything before it is published. */
  cursorTs: number;
  /** Newest block timestamp seen at the node. */
  tipTs: number;
  blocks: number;
  /** Contract events the node served with those blocks (before normalization). */
  nodeEvents: number;
  /** `backfill` while whole windows of history are behind the tip, `live` once following it. */
  phase: "backfill" | "live";
}

export interface RoundResult {
  published: number;
  retracted: number;
  caughtUp: boolean;
  /**
   * A round that published every chain up to its confirmed tip (no reorg): the loop waits INGEST_POLL_MS
   * before the next round, as after one that found nothing. Without the wait, following ran a round as soon as the
   * last one's processors were done, every round's fixed statements for the one or two blocks made meanwhile.
   */
  following?: boolean;
}

export interface Ingestor {
  /** One fetch-publish-commit round. */
  runOnce(): Promise<RoundResult>;
  /** Loops rounds until stopped; errors are logged and retried with backoff. */
  start(): void;
  stop(): Promise<void>;
}

interface Cursor {
  height: number;
  hash: string;
  ts: number;
}

/** Hard limit of a reorg walk-back (the protocol's maximum reorg is 200 blocks). */
const MAX_REORG_DEPTH = 210;
/**
 * Blocks to go (over the 16 chains) above which /status says `backfill` even while ingest already fetches one
 * window per round: about half a minute of mainnet, so `live` means caught up, not "within a round's reach".
 */
const LIVE_SLACK_BLOCKS = 64;
/** How often a round asks the node for its tip block's time. */
const TIP_PROBE_MS = 10_000;
/** Published hashes kept per chain for reorg detection. */
const KEEP_HEIGHTS = 300;

function parentOf(block: node.BlockEntry): string | undefined {
  return block.deps[Math.floor(block.deps.length / 2) + block.chainTo];
}

export function createIngestor(deps: PipelineDeps, client: NodeClient, options: IngestOptions): Ingestor {
  const log = deps.log.child({ component: "ingest" });
  const chains = Array.from({ length: ADDRESS_GROUPS * ADDRESS_GROUPS }, (_, i) => i);
  const cursors = new Map<number, Cursor>();
  const recent = new Map<number, Map<number, { hash: string; ts: number }>>();
  /** Heights published since the last save, per chain. */
  const dirty = new Map<number, Set<number>>();
  let loaded = false;
  let windowMs = Math.min(options.firstWindowMs ?? options.maxWindowMs, options.maxWindowMs);
  let startTs = options.startTs;
  let tipTs = 0;
  let tipProbedAt = Number.NEGATIVE_INFINITY;
  let lastSeq = 0;
  let totals = { blocks: 0, nodeEvents: 0 };
  let phase: IngestProgress["phase"] = "backfill";
  /** When a cursor last moved, and when the last warning about it was logged. */
  let progressAt = Date.now();
  let warnedAt = 0;
  const stallWarnMs = options.stallWarnMs ?? 60_000;
  let stopped = false;
  let loop: Promise<void> | null = null;
  /**
   * During backfill, the next round's windows are fetched while this round publishes (the node's answer time and
   * the processors' work overlap instead of adding up). The next round uses them only when it asks for exactly
   * these windows; their blocks count as confirmed only up to the tips known when they were fetched.
   */
  let prefetch: { key: string; tips: number[]; result: Promise<node.BlockAndEvents[][][] | null> } | null =
    null;
  const abort = new AbortController();

  /** Published-block counts over the last 30 s (the rate behind the ETA), and when progress was last saved. */
  const samples: { at: number; blocks: number }[] = [];
  let progressSavedAt = Number.NEGATIVE_INFINITY;
  let progressSavedPhase: IngestProgress["phase"] | null = null;

  /**
   * Saves where ingest stands for /status and the metrics (ingest_progress): after every round that published,
   * and otherwise at most once a second. Blocks to go are counted once every chain has a cursor (before that,
   * the heights at the backfill start are unknown).
   */
  async function reportProgress(tips: number[], published: boolean) {
    const now = Date.now();
    samples.push({ at: now, blocks: totals.blocks });
    while (samples.length > 2 && (samples[1]?.at ?? now) <= now - 30_000) samples.shift();
    if (!published && phase === progressSavedPhase && now - progressSavedAt < 1_000) return;
    const first = samples[0] ?? { at: now, blocks: totals.blocks };
    const secs = (now - first.at) / 1000;
    const known = chains.every((c) => cursors.has(c));
    const blocksToGo = known
      ? chains.reduce(
          (sum, c) =>
            sum + Math.max(0, (tips[c] ?? 0) - options.confirmations - (cursors.get(c)?.height ?? 0)),
          0,
        )
      : null;
    const cursorTs = chains.map((c) => cursors.get(c)?.ts ?? startTs - 1);
    const shown =
      phase === "live" && blocksToGo !== null && blocksToGo > LIVE_SLACK_BLOCKS ? "backfill" : phase;
    const row: IngestProgressRow = {
      phase: shown,
      start_ts: startTs,
      cursor_ts: Math.min(...cursorTs),
      published_ts: Math.max(...cursorTs),
      tip_ts: Math.max(tipTs, ...cursorTs),
      blocks_to_go: blocksToGo,
      blocks_per_s: secs > 0 ? Math.round(((totals.blocks - first.blocks) / secs) * 10) / 10 : null,
      updated_at: now,
    };
    const rate = row.blocks_per_s;
    setIngestGauges(deps.metrics, {
      phase: shown,
      blocks_to_go: blocksToGo,
      time_to_go_ms: blocksToGo === 0 ? 0 : row.tip_ts - row.cursor_ts,
      eta_ms: blocksToGo === null ? null : blocksToGo === 0 ? 0 : rate ? (blocksToGo / rate) * 1000 : null,
      blocks_per_s: rate,
    });
    try {
      await saveIngestProgress(deps.pg, row);
      progressSavedAt = now;
      progressSavedPhase = phase;
    } catch (err) {
      log.warn({ err }, "Saving ingest progress failed; the next round saves it again.");
    }
  }

  const nextSeq = () => {
    lastSeq = Math.max(Date.now(), lastSeq + 1);
    return lastSeq;
  };
  const recentOf = (c: number) => {
    let m = recent.get(c);
    if (!m) {
      m = new Map();
      recent.set(c, m);
    }
    return m;
  };

  async function load() {
    const rows = await deps.pg.query<{
      chain_index: number;
      height: number;
      block_hash: string;
      block_ts: string;
    }>("ingest_cursor_load", "SELECT chain_index, height, block_hash, block_ts FROM ingest_cursor");
    for (const r of rows)
      cursors.set(r.chain_index, { height: r.height, hash: r.block_hash, ts: Number(r.block_ts) });
    const blocks = await deps.pg.query<{
      chain_index: number;
      height: number;
      block_hash: string;
      block_ts: string;
    }>("ingest_blocks_load", "SELECT chain_index, height, block_hash, block_ts FROM ingest_blocks");
    for (const b of blocks)
      recentOf(b.chain_index).set(b.height, { hash: b.block_hash, ts: Number(b.block_ts) });
    if (!startTs) {
      const tip = await client.chainTip(0, 0);
      const hash = await client.mainHashAt(0, 0, tip);
      const header = hash ? await client.header(hash) : undefined;
      startTs = (header?.timestamp ?? Date.now()) - 3_600_000;
    }
    loaded = true;
  }

  const groupsOf = (c: number) => [Math.floor(c / ADDRESS_GROUPS), c % ADDRESS_GROUPS] as const;

  async function walkBack(c: number, cur: Cursor): Promise<{ fork: Cursor; orphans: number[] }> {
    const [fromGroup, toGroup] = groupsOf(c);
    const ours = recentOf(c);
    const orphans: number[] = [];
    for (let h = cur.height; h >= Math.max(0, cur.height - MAX_REORG_DEPTH); h--) {
      const mine = ours.get(h);
      if (!mine) break;
      const main = await client.mainHashAt(fromGroup, toGroup, h);
      if (main === mine.hash) return { fork: { height: h, hash: mine.hash, ts: mine.ts }, orphans };
      orphans.push(h);
    }
    throw new AppError(
      "reorg_too_deep",
      `Chain ${c}: no common ancestor within ${MAX_REORG_DEPTH} blocks of height ${cur.height}; re-run ingest from an earlier start`,
    );
  }

  /**
   * A failed round may have moved cursors in memory past blocks it did not publish: the next round
   * starts again from the saved cursors (re-publishing is harmless, the sinks are idempotent).
   */
  async function runOnce(): Promise<RoundResult> {
    try {
      return await round();
    } catch (error) {
      loaded = false;
      cursors.clear();
      recent.clear();
      dirty.clear();
      prefetch = null;
      throw error;
    }
  }

  const windowsFrom = (from: number, count: number) =>
    Array.from({ length: count }, (_, i) => [from + i * windowMs, from + (i + 1) * windowMs - 1] as const);
  const windowsKey = (windows: readonly (readonly [number, number])[]) =>
    windows.map((w) => w.join("-")).join(",");

  /**
   * Fetches, in the background, the windows the next round asks for if the tips stay as they are: the same
   * pending chains, the lowest of their cursors, the same window size, still backfilling. A round that asks for
   * other windows (a chain came back into the pending set, the phase changed) fetches its own.
   */
  function startPrefetch(tips: number[]) {
    const pending = chains.filter(
      (c) => (cursors.get(c)?.height ?? -1) < (tips[c] ?? 0) - options.confirmations,
    );
    if (pending.length === 0) return;
    const from = Math.min(...pending.map((c) => cursors.get(c)?.ts ?? startTs - 1)) + 1;
    if (!(from + windowMs * options.concurrency < tipTs)) return;
    const windows = windowsFrom(from, options.concurrency);
    // A failed early fetch is not an error: the round fetches again.
    const result = Promise.all(windows.map(([a, b]) => client.blocksWithEvents(a, b))).catch(() => null);
    prefetch = { key: windowsKey(windows), tips: [...tips], result };
  }

  async function round(): Promise<RoundResult> {
    if (!loaded) await load();
    if (samples.length === 0) samples.push({ at: Date.now(), blocks: totals.blocks });
    const tips = await Promise.all(chains.map((c) => client.chainTip(...groupsOf(c))));
    const safe = (c: number) => (tips[c] ?? 0) - options.confirmations;
    const cursorOf = (c: number): Cursor => cursors.get(c) ?? { height: -1, hash: "", ts: startTs - 1 };
    const behind = chains.filter((c) => (tips[c] ?? 0) < cursorOf(c).height);
    if (behind.length > 0) warnTipBelowCursor(behind, tips);
    const pending = chains.filter((c) => cursorOf(c).height < safe(c));
    if (pending.length === 0) {
      phase = "live";
      await reportProgress(tips, false);
      return { published: 0, retracted: 0, caughtUp: true };
    }

    const from = Math.min(...pending.map((c) => cursorOf(c).ts)) + 1;
    // The fetched blocks only show the node's tip once ingest reaches it: while backfilling, ask for a tip block's
    // time (two calls, at most every 10 s), so a historical backfill stays in its phase (concurrent windows) after
    // its first round. Once live, the fetched blocks reach the tip.
    if (tipTs === 0 || (phase === "backfill" && Date.now() - tipProbedAt >= TIP_PROBE_MS)) {
      tipProbedAt = Date.now();
      const probe = pending[0] ?? 0;
      const hash = await client.mainHashAt(...groupsOf(probe), tips[probe] ?? 0);
      if (hash) tipTs = Math.max(tipTs, (await client.header(hash)).timestamp);
    }
    const backfilling = tipTs === 0 || from + windowMs * options.concurrency < tipTs;
    phase = backfilling ? "backfill" : "live";
    const windows = windowsFrom(from, backfilling ? options.concurrency : 1);
    const key = windowsKey(windows);
    const early = prefetch?.key === key ? prefetch : null;
    prefetch = null;
    const waitStarted = performance.now();
    const fetched =
      (early && (await early.result)) ??
      (await Promise.all(windows.map(([a, b]) => client.blocksWithEvents(a, b))));
    deps.metrics.ingestNodeWaitSeconds.inc((performance.now() - waitStarted) / 1000);
    // Blocks fetched early are confirmed up to the tips of then (a block may have had fewer confirmations).
    const confirmedUpTo = (c: number) =>
      early ? Math.min(safe(c), (early.tips[c] ?? 0) - options.confirmations) : safe(c);

    const messages: BlockMessage[] = [];
    const touched = new Set<number>();
    const stoppedChains = new Set<number>();
    let retracted = 0;
    let largest = 0;
    for (const perChain of fetched) {
      let size = 0;
      for (const list of perChain) {
        for (const { block, events } of list) {
          size++;
          tipTs = Math.max(tipTs, block.timestamp);
          const c = chainIndexOf(block.chainFrom, block.chainTo);
          if (stoppedChains.has(c)) continue;
          const cur = cursorOf(c);
          if (block.height <= cur.height) {
            const mine = recentOf(c).get(block.height);
            if (!mine || mine.hash === block.hash) continue;
          } else if (block.height > confirmedUpTo(c)) {
            stoppedChains.add(c);
            continue;
          } else if (cur.height >= 0 && block.height !== cur.height + 1) {
            stoppedChains.add(c); // A gap: the next round refetches from this chain's cursor.
            continue;
          } else if (cur.height < 0 || parentOf(block) === cur.hash) {
            messages.push({
              chain_index: c,
              kind: "block",
              hash: block.hash,
              height: block.height,
              timestamp: block.timestamp,
              seq: 0,
              block_json: JSON.stringify(block),
              events_json: JSON.stringify(events),
            });
            cursors.set(c, { height: block.height, hash: block.hash, ts: block.timestamp });
            recentOf(c).set(block.height, { hash: block.hash, ts: block.timestamp });
            if (!dirty.has(c)) dirty.set(c, new Set());
            dirty.get(c)?.add(block.height);
            touched.add(c);
            totals = { blocks: totals.blocks + 1, nodeEvents: totals.nodeEvents + events.length };
            continue;
          }
          // The node's main chain no longer contains what we published: retract down to the fork point.
          stoppedChains.add(c);
          const { fork, orphans } = await walkBack(c, cursorOf(c));
          log.warn(
            { chain_index: c, fork_height: fork.height, orphans: orphans.length },
            "Reorg detected; retracting.",
          );
          for (const h of orphans) {
            const mine = recentOf(c).get(h);
            if (!mine) continue;
            messages.push({
              chain_index: c,
              kind: "retraction",
              hash: mine.hash,
              height: h,
              timestamp: mine.ts,
              seq: 0,
            });
            recentOf(c).delete(h);
            retracted++;
          }
          cursors.set(c, fork);
          touched.add(c);
        }
      }
      largest = Math.max(largest, size);
    }

    for (const m of messages) m.seq = nextSeq();
    // Keep responses at 2,000–4,000 blocks: halve on big windows, double on small ones (from a small first window).
    if (largest > 4000) windowMs = Math.max(10_000, Math.floor(windowMs / 2));
    else if (largest < 2000) windowMs = Math.min(options.maxWindowMs, windowMs * 2);
    const publishing = deps.bus.publish(
      TOPICS.blocks,
      await mapWithTurns(messages, (m) => ({
        key: String(m.chain_index),
        value: deps.codecs.blocks.encode(m),
      })),
    );
    // Still backfilling and nothing to fetch again (no chain stopped, no reorg): fetch the next windows meanwhile.
    if (options.prefetch !== false && backfilling && stoppedChains.size === 0 && retracted === 0)
      startPrefetch(tips);
    await publishing;
    deps.metrics.pipelineMessages.inc({ stage: "ingest", topic: TOPICS.blocks }, messages.length);
    await saveCursors([...touched]);
    if (touched.size > 0) progressAt = Date.now();

    await reportProgress(tips, touched.size > 0);
    options.onProgress?.({
      startTs,
      cursorTs: Math.min(...chains.map((c) => cursorOf(c).ts)),
      tipTs,
      ...totals,
      phase,
    });
    const following = retracted === 0 && chains.every((c) => cursorOf(c).height >= safe(c));
    return { published: messages.length - retracted, retracted, caughtUp: false, following };
  }

  /**
   * Saves the touched chains' cursors and their recent heights in one transaction of three statements whatever the
   * number of chains (a statement per chain and table before: about 20 PGlite statements a round while following).
   */
  async function saveCursors(touched: number[]) {
    const saved: { c: number; cur: Cursor }[] = [];
    for (const c of touched) {
      const cur = cursors.get(c);
      if (cur) saved.push({ c, cur });
    }
    if (saved.length === 0) return;
    const added: { c: number; h: number; hash: string; ts: number }[] = [];
    for (const { c, cur } of saved) {
      const heights = recentOf(c);
      for (const h of [...heights.keys()])
        if (h <= cur.height - KEEP_HEIGHTS || h > cur.height) heights.delete(h);
      for (const h of dirty.get(c) ?? []) {
        const b = heights.get(h);
        if (b) added.push({ c, h, hash: b.hash, ts: b.ts });
      }
      dirty.delete(c);
    }
    await deps.pg.transaction(async (tx) => {
      await tx.query(
        "ingest_cursor_save",
        `INSERT INTO ingest_cursor (chain_index, height, block_hash, block_ts)
         SELECT c, h, b, t FROM unnest($1::smallint[], $2::integer[], $3::text[], $4::bigint[]) AS x(c, h, b, t)
         ON CONFLICT (chain_index) DO UPDATE SET height = EXCLUDED.height, block_hash = EXCLUDED.block_hash,
           block_ts = EXCLUDED.block_ts, updated_at = now()`,
        [
          saved.map((s) => s.c),
          saved.map((s) => s.cur.height),
          saved.map((s) => s.cur.hash),
          saved.map((s) => String(s.cur.ts)),
        ],
      );
      await tx.query(
        "ingest_blocks_prune",
        `DELETE FROM ingest_blocks b USING unnest($1::smallint[], $2::integer[]) AS x(c, h)
         WHERE b.chain_index = x.c AND (b.height <= x.h - ${KEEP_HEIGHTS} OR b.height > x.h)`,
        [saved.map((s) => s.c), saved.map((s) => s.cur.height)],
      );
      if (added.length === 0) return;
      await tx.query(
        "ingest_blocks_save",
        `INSERT INTO ingest_blocks (chain_index, height, block_hash, block_ts)
         SELECT c, h, b, t FROM unnest($1::smallint[], $2::integer[], $3::text[], $4::bigint[]) AS x(c, h, b, t)
         ON CONFLICT (chain_index, height) DO UPDATE SET block_hash = EXCLUDED.block_hash, block_ts = EXCLUDED.block_ts`,
        [
          added.map((a) => a.c),
          added.map((a) => a.h),
          added.map((a) => a.hash),
          added.map((a) => String(a.ts)),
        ],
      );
    });
  }

  /** A node behind our cursors (resynced, restarted from scratch, another network): say so, once a minute. */
  function warnTipBelowCursor(behind: number[], tips: number[]) {
    if (Date.now() - warnedAt < stallWarnMs) return;
    warnedAt = Date.now();
    log.warn(
      {
        chains: behind,
        node_heights: behind.map((c) => tips[c] ?? 0),
        cursor_heights: behind.map((c) => cursors.get(c)?.height ?? -1),
        node: deps.config.NODE_URL,
      },
      "The node's tip is below the ingest cursor: waiting for the node to reach it (is it the same network, fully synced?).",
    );
  }

  /** No cursor moved for a while although rounds run: say so, once a minute. */
  function warnIfStalled() {
    const idleMs = Date.now() - progressAt;
    if (idleMs < stallWarnMs || Date.now() - warnedAt < stallWarnMs) return;
    warnedAt = Date.now();
    log.warn(
      {
        idle_s: Math.round(idleMs / 1000),
        cursor_ts: Math.min(...chains.map((c) => cursors.get(c)?.ts ?? startTs)),
        node: deps.config.NODE_URL,
      },
      "Ingest has published nothing for a while: the node produces no new blocks, or they cannot be fetched.",
    );
  }

  return {
    runOnce,
    start() {
      if (loop) return;
      loop = (async () => {
        let failures = 0;
        while (!stopped) {
          try {
            const r = await runOnce();
            failures = 0;
            if (r.caughtUp) warnIfStalled();
            if (r.caughtUp || r.following) await sleep(options.pollMs, abort.signal);
          } catch (error) {
            if (stopped) break;
            failures++;
            // A final error (a bug, a refused request) is not fixed by hammering: wait the longest.
            const delay = isRetryable(error) ? 250 + backoffMs(failures, 500, 30_000) : 30_000;
            log.error(
              { err: error, attempt: failures, delay_ms: Math.round(delay), retryable: isRetryable(error) },
              "Ingest round failed; retrying.",
            );
            await sleep(delay, abort.signal);
          }
        }
      })();
    },
    async stop() {
      stopped = true;
      abort.abort();
      await loop;
    },
  };
}
