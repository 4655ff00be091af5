/**
 * The `token-holders` series, from balances. Transfer events leave out change, fees and contract inputs,
 * so holders are counted from the blocks themselves. Every output (a row per token, ALPH included) and every
 * spend is kept by output key (holder_outputs, holder_spends), and each becomes a balance move of its
 * (token, address) (holder_moves): + the output's amount at its block's time, − the amount of a spent output
 * at the spending block's time (resolved when both are known: an output may arrive after its spend, from
 * another chain's partition). The balance at time t is the sum of a pair's main-chain moves up to t.
 *
 * A batch changes a pair's moves only from its earliest touched time t0 on, so only the crossings from t0
 * can change: they are recomputed from the balance before t0 (the pair's net moves per period of 1,024 hours before
 * t0's period, holder_period_sums, per hour from that period's start to t0's hour, holder_hour_sums, plus its moves
 * since that hour's start) and the moves after it, compared
 * with the stored ones (holder_changes); the difference is stored, and each token and block time it touches gets
 * its series facts (gained, lost, holders_delta) counted from the stored crossings; then the points of those
 * times are recomputed like any other series (lib/series/recompute.ts).
 *
 * Two halves, run by two processors. `storeHolderMessages` (the `holders` processor, any number of replicas, each
 * on its chains' partitions): outputs (their moves with them, by a materialized view), spends and spend moves, then
 * the touched pairs go on the holders-touched topic keyed by token. `recomputeHolders` (`holders-recompute`, one
 * owner per token among its replicas): the net moves of the touched hours (recomputed from the stored moves) and
 * periods (from the stored hours); then
 * the moments (token, time) the pass will finish (holder_pending_token_moments), its crossings (holder_changes), the
 * facts and points of those moments counted from the stored crossings, and last an empty pending set per token. A
 * pass that dies anywhere in between leaves its moments pending, and the next pass of those tokens (the replay of its
 * batch touches them again) finishes them with its own: their facts are counted again from the stored crossings,
 * whatever blocks that pass holds (a replay may hold more than the dead pass and find other crossings, so finding
 * the same difference cannot be relied on). So replays, retractions and reprocessing leave the state of one clean
 * pass. `series backfill` of token-holders runs both halves in its own process and takes the holders-recompute
 * group's lock (its replicas hold it shared), so it never runs beside them.
 */

import type { node } from "@alephium/web3";
import { applyInRuns } from "../batch.ts";
import { mainRawBlocks } from "../chain/raw-blocks.ts";
import { ALPH_TOKEN_ID } from "../chain/types.ts";
import { atKeyParam, type Ch, inParam } from "../stores/clickhouse.ts";
import { turn } from "../turns.ts";
import { nextVersion } from "./clock.ts";
import { instanceOf } from "./definition.ts";
import { tokenHolders } from "./definitions/token-holders.ts";
import { type FactRow, type SeriesTouched, touchSeries } from "./facts.ts";
import { recomputeSeries } from "./recompute.ts";
import type { SeriesDeps } from "./settings.ts";

/** What the holders pass needs of a block message (the blocks topic's shapes). */
export type HolderMessage =
  | { kind: "block"; hash: string; timestamp: number; seq: number; block_json: string }
  | { kind: "retraction"; hash: string; seq: number };

interface OutputRow {
  key: string;
  token_id: string;
  address: string;
  amount: string;
  block_hash: string;
  ts: number;
  main_chain: boolean;
  version: number;
}

interface SpendRow {
  key: string;
  block_hash: string;
  ts: number;
  main_chain: boolean;
  version: number;
}

interface MoveRow {
  token_id: string;
  address: string;
  ts: number;
  key: string;
  kind: "output" | "spend";
  block_hash: string;
  amount: string;
  main_chain: boolean;
  version: number;
}

/** The block of the holders' facts: they belong to a block time, not to one block (see the file comment). */
const HOLDERS_FACT_BLOCK = "balances";

const pairKey = (tokenId: string, address: string) => `${tokenId}:${address}`;

/**
 * Outputs (one row per token of each output, ALPH included when non-zero) and spends (asset and contract
 * inputs) of a block's transactions; conflicted transactions change no balance.
 */
function movesOfBlock(
  block: node.BlockEntry,
  at: { hash: string; timestamp: number; seq: number },
): { outputs: OutputRow[]; spends: SpendRow[] } {
  const outputs: OutputRow[] = [];
  const spends: SpendRow[] = [];
  const conflicted = new Set(block.conflictedTxs ?? []);
  const base = { block_hash: at.hash, ts: at.timestamp, main_chain: true, version: at.seq };
  for (const tx of block.transactions) {
    if (conflicted.has(tx.unsigned.txId)) continue;
    for (const input of tx.unsigned.inputs) spends.push({ key: input.outputRef.key, ...base });
    for (const ref of tx.contractInputs) spends.push({ key: ref.key, ...base });
    for (const o of [...tx.unsigned.fixedOutputs, ...tx.generatedOutputs]) {
      const add = (token_id: string, amount: string) => {
        if (BigInt(amount) > 0n) outputs.push({ key: o.key, token_id, address: o.address, amount, ...base });
      };
      add(ALPH_TOKEN_ID, o.attoAlphAmount);
      for (const t of o.tokens ?? []) add(t.id, t.amount);
    }
  }
  return { outputs, spends };
}

/** Width of the stored net moves per hour (holder_hour_sums, clickhouse/0018; changing it needs a migration). */
const HOUR_MS = 3_600_000;
/** Width of the stored net moves per period (holder_period_sums, clickhouse/0021; changing it needs a migration). */
const PERIOD_MS = 1_024 * HOUR_MS;

/**
 * Per touched (token, address) pair (key `token:address`): the earliest time its moves changed, and the hours they
 * changed in (starts of hours, ms).
 */
export type HolderPairs = Map<string, { t0: number; hours: Set<number> }>;
type Touched = HolderPairs;
const touch = (touched: Touched, tokenId: string, address: string, ts: number) => {
  const k = pairKey(tokenId, address);
  const hour = ts - (ts % HOUR_MS);
  const pair = touched.get(k);
  if (!pair) touched.set(k, { t0: ts, hours: new Set([hour]) });
  else {
    if (ts < pair.t0) pair.t0 = ts;
    pair.hours.add(hour);
  }
};

/** Adds a pair's touched span as another pass found it (its t0 and hours) to `pairs`. */
export function mergeHolderPair(
  pairs: HolderPairs,
  tokenId: string,
  address: string,
  t0: number,
  hours: Iterable<number>,
): void {
  touch(pairs, tokenId, address, t0);
  const pair = pairs.get(pairKey(tokenId, address))!;
  for (const h of hours) pair.hours.add(h);
}

/** The touched pairs per token, for the holders-touched topic (keyed by token). */
export function holderPairsByToken(
  pairs: HolderPairs,
): Map<string, { address: string; t0: number; hours: number[] }[]> {
  const out = new Map<string, { address: string; t0: number; hours: number[] }[]>();
  for (const [k, { t0, hours }] of pairs) {
    const at = k.indexOf(":");
    const token = k.slice(0, at);
    const list = out.get(token) ?? [];
    list.push({ address: k.slice(at + 1), t0, hours: [...hours].sort((a, b) => a - b) });
    out.set(token, list);
  }
  return out;
}

/** A spend's move of one token of the output it spends. */
const spendMove = (
  s: Pick<SpendRow, "key" | "block_hash" | "ts" | "main_chain" | "version">,
  o: Pick<OutputRow, "token_id" | "address" | "amount">,
): MoveRow => ({
  token_id: o.token_id,
  address: o.address,
  ts: s.ts,
  key: s.key,
  kind: "spend",
  block_hash: s.block_hash,
  amount: o.amount,
  main_chain: s.main_chain,
  version: s.version,
});

/**
 * The spend moves a run makes, so that each spend meets its output whichever came first: the run's spends of its
 * own outputs (most of them: change is spent soon after), paired here; its other spends, paired with the stored
 * outputs they spend; and the stored spends of its outputs from blocks outside the run (a spend that arrived
 * first, from another chain's partition, or a sibling block's). A spend of an output never seen (indexing started
 * after it) moves no balance we know. The outputs and spends are stored before this runs (crash order), and before
 * its reads: when replicas store a spend and its output at once, at least one of them reads the other's row (each
 * reads after its own insert), and a move both find is one row (holder_moves is keyed by the move).
 */
async function spendMoves(
  ch: Ch,
  outputs: readonly OutputRow[],
  spends: readonly SpendRow[],
  blocks: readonly string[],
): Promise<MoveRow[]> {
  // The run's outputs by key, a row per token (one row per token when sibling blocks hold the same output).
  const byKey = new Map<string, Map<string, OutputRow>>();
  for (const o of outputs) {
    const tokens = byKey.get(o.key);
    if (!tokens) byKey.set(o.key, new Map([[o.token_id, o]]));
    else if (!tokens.has(o.token_id)) tokens.set(o.token_id, o);
  }
  const moves: MoveRow[] = [];
  const elsewhere = new Set<string>();
  for (const s of spends) {
    const tokens = byKey.get(s.key);
    if (tokens) for (const o of tokens.values()) moves.push(spendMove(s, o));
    else elsewhere.add(s.key);
  }
  type Stored = { ts: string; version: string; main_chain: boolean | number };
  const [spent, earlier] = await Promise.all([
    elsewhere.size === 0
      ? []
      : ch.query<Pick<OutputRow, "key" | "token_id" | "address" | "amount">>(
          "holder_spent_outputs",
          `SELECT key, token_id, any(address) AS address, toString(any(amount)) AS amount
           FROM holder_outputs FINAL WHERE key IN ${inParam("keys")} GROUP BY key, token_id`,
          { keys: [...elsewhere] },
        ),
    byKey.size === 0
      ? []
      : ch.query<Omit<SpendRow, "ts" | "version" | "main_chain"> & Stored>(
          "holder_earlier_spends",
          `SELECT key, block_hash, ts, main_chain, version FROM holder_spends FINAL
           WHERE key IN ${inParam("keys")} AND block_hash NOT IN ${inParam("blocks")}`,
          { keys: [...byKey.keys()], blocks: [...new Set(blocks)] },
        ),
  ]);
  const outputsOf = new Map<string, (typeof spent)[number][]>();
  for (const o of spent) {
    const list = outputsOf.get(o.key);
    if (list) list.push(o);
    else outputsOf.set(o.key, [o]);
  }
  for (const s of spends) for (const o of outputsOf.get(s.key) ?? []) moves.push(spendMove(s, o));
  for (const r of earlier) {
    const s = { ...r, ts: Number(r.ts), version: Number(r.version), main_chain: Boolean(r.main_chain) };
    for (const o of byKey.get(r.key)!.values()) moves.push(spendMove(s, o));
  }
  return moves;
}

export interface HoldersPass {
  outputs: number;
  spends: number;
  /** Zero crossings that appeared or disappeared. */
  changes: number;
}

/**
 * Handles a batch of block messages in order: stores their outputs, spends and balance moves (a retraction
 * flips its block's rows), then recomputes the crossings of every (token, address) they touched. The processors
 * run the two halves apart: `holders` stores (`storeHolderMessages`), `holders-recompute` recomputes
 * (`recomputeHolders`) the pairs it publishes.
 */
export async function handleHolderMessages(
  deps: SeriesDeps,
  messages: readonly HolderMessage[],
): Promise<HoldersPass> {
  const stored = await storeHolderMessages(deps.ch, messages);
  const changes = await recomputeHolders(deps, stored.touched);
  return { outputs: stored.outputs, spends: stored.spends, changes };
}

/**
 * Stores a batch's outputs, spends and balance moves in message order (a retraction flips its block's rows); the
 * (token, address) pairs whose moves they changed. Every replica may run it at once: each spend meets its output
 * whichever replica stores which (see `spendMoves`), and a move found by two is one row.
 */
export async function storeHolderMessages(
  ch: Ch,
  messages: readonly HolderMessage[],
): Promise<{ touched: HolderPairs; outputs: number; spends: number }> {
  const touched: Touched = new Map();
  const pass = { outputs: 0, spends: 0 };
  await applyInRuns(messages, {
    async blocks(run) {
      const outputs: OutputRow[] = [];
      const spends: SpendRow[] = [];
      for (const m of run) {
        const moves = movesOfBlock(JSON.parse(m.block_json) as node.BlockEntry, m);
        // Loops, not push(...rows): a backfill batch can hold more rows than a call takes arguments.
        for (const o of moves.outputs) outputs.push(o);
        for (const s of moves.spends) spends.push(s);
        const t = turn();
        if (t) await t;
      }
      // The outputs' own moves come with them (holder_output_moves_mv, clickhouse/0016).
      if (outputs.length > 0) await ch.insert("holder_outputs_insert", "holder_outputs", outputs);
      if (spends.length > 0) await ch.insert("holder_spends_insert", "holder_spends", spends);
      // The run's outputs move their owners' balances; its spends and the earlier spends of its outputs too.
      const moves = await spendMoves(
        ch,
        outputs,
        spends,
        run.map((m) => m.hash),
      );
      if (moves.length > 0) await ch.insert("holder_moves_insert", "holder_moves", moves);
      for (const o of outputs) touch(touched, o.token_id, o.address, o.ts);
      for (const m of moves) touch(touched, m.token_id, m.address, m.ts);
      pass.outputs += outputs.length;
      pass.spends += spends.length;
    },
    async retraction(m) {
      // The retracted block's moves (its outputs, and the outputs it spent) change balances from their time on.
      // (Flipped ones too: a replay after a crash past the flip must still recompute their pairs.)
      const moved = await ch.query<{ token_id: string; address: string; times: string[] }>(
        "holder_retracted_moves",
        `SELECT token_id, address, arrayMap(t -> toString(t), groupUniqArray(ts)) AS times FROM holder_moves FINAL
         WHERE block_hash = {hash:String} GROUP BY token_id, address`,
        { hash: m.hash },
      );
      for (const r of moved) for (const t of r.times) touch(touched, r.token_id, r.address, Number(t));
      for (const table of ["holder_outputs", "holder_spends", "holder_moves"])
        await ch.command(
          `${table}_retract`,
          `INSERT INTO ${table} SELECT * REPLACE (false AS main_chain, {seq:UInt64} AS version)
           FROM ${table} FINAL WHERE block_hash = {hash:String}`,
          { seq: m.seq, hash: m.hash },
        );
    },
  });
  return { touched, ...pass };
}

interface Crossing {
  token_id: string;
  address: string;
  ts: string;
  change: number;
}

/**
 * The touched pairs, their t0, the start of t0's hour and every touched hour as parameters: the key prefixes
 * narrow the read, the pairs decide.
 */
export const pairParams = (touched: Touched) => {
  const pairs = [...touched.keys()];
  const split = pairs.map((p) => p.split(":") as [string, string]);
  const t0s = pairs.map((p) => touched.get(p)!.t0);
  const pairHours: string[] = [];
  const periods = new Set<string>();
  for (const [p, { hours }] of touched)
    for (const h of hours) {
      pairHours.push(`${p}:${h}`);
      periods.add(`${p}:${h - (h % PERIOD_MS)}`);
    }
  const h0s = t0s.map((t) => t - (t % HOUR_MS));
  const p0s = t0s.map((t) => t - (t % PERIOD_MS));
  // The earliest t0: a constant bound the tables' sort keys can use (the per-pair ones are not). A loop: a backfill
  // batch touches more pairs than a call takes arguments.
  let tmin = Number.POSITIVE_INFINITY;
  for (const t of t0s) if (t < tmin) tmin = t;
  return {
    pairs,
    t0s,
    h0s,
    p0s,
    tmin,
    hmin: tmin - (tmin % HOUR_MS),
    pmin: tmin - (tmin % PERIOD_MS),
    pairHours,
    pairPeriods: [...periods],
    tokens: [...new Set(split.map(([t]) => t))],
    addresses: [...new Set(split.map(([, a]) => a))],
  };
};
const PAIR_WHERE = `token_id IN ${inParam("tokens")} AND address IN ${inParam("addresses")}
  AND concat(token_id, ':', address) IN ${inParam("pairs")}`;
/** The pair's t0 (for a row of a touched pair). */
const T0 = atKeyParam("concat(token_id, ':', address)", "pairs", "t0s");
/** The start of the hour of the pair's t0. */
const H0 = atKeyParam("concat(token_id, ':', address)", "pairs", "h0s");
/** The start of the period of the pair's t0. */
const P0 = atKeyParam("concat(token_id, ':', address)", "pairs", "p0s");

/**
 * Each move's amount capped at 2^250 before it is summed as Int256: a bridge pool's u256Max supply would overflow
 * a signed 256-bit sum. Only the sign of a balance matters here, and it is exact: a balance is the sum of the
 * pair's unspent outputs (an output and its spend move the same capped amount), positive whenever one of them is.
 */
const CAP = "toUInt256('1809251394333065553493296640760748560207343510400633813116524750123642650624')";

/** A move's signed, capped amount. */
const SIGNED = `if(kind = 'output', 1, -1) * toInt256(least(amount, ${CAP}))`;

/**
 * The touched hours' net moves, recomputed from the stored moves (main chain; an hour whose moves all left it
 * sums to 0). Later passes read them; this one writes them beside its crossings read and awaits them before it
 * writes its moments, so a pass that dies first leaves hours its replay recomputes (it touches the same ones).
 */
const HOUR_SUMS_SQL = `
  INSERT INTO holder_hour_sums (token_id, address, hour, net, version)
  SELECT token_id, address, ts - ts % ${HOUR_MS} AS h, sumIf(${SIGNED}, main_chain), toUInt64({version:String})
  FROM holder_moves FINAL
  WHERE ${PAIR_WHERE} AND ts >= {hmin:UInt64} AND ts >= ${H0}
    AND concat(token_id, ':', address, ':', toString(ts - ts % ${HOUR_MS})) IN ${inParam("pairHours")}
  GROUP BY token_id, address, h`;

/**
 * The touched periods' net moves, recomputed from the stored hours once this pass has written its own (so after
 * HOUR_SUMS_SQL): a pass that dies between the two leaves periods its replay recomputes (it touches the same hours).
 */
const PERIOD_SUMS_SQL = `
  INSERT INTO holder_period_sums (token_id, address, period, net, version)
  SELECT token_id, address, hour - hour % ${PERIOD_MS} AS p, sum(net), toUInt64({version:String})
  FROM holder_hour_sums FINAL
  WHERE ${PAIR_WHERE} AND hour >= {pmin:UInt64} AND hour >= ${P0}
    AND concat(token_id, ':', address, ':', toString(hour - hour % ${PERIOD_MS})) IN ${inParam("pairPeriods")}
  GROUP BY token_id, address, p`;

/**
 * The hours of a pair's opening balance not summed in its periods: from its t0's period start to its t0's hour.
 * The constant bound lets the primary key skip the pair's older hours (without it, each batch that touched a miner's
 * address read every hour since its first).
 */
export const OPENING_HOURS_WHERE = `${PAIR_WHERE} AND hour >= {pmin:UInt64} AND hour >= ${P0} AND hour < ${H0}`;

/**
 * The zero crossings of each pair's balance from its t0 on: its net moves of the periods before t0's period, of the
 * hours from that period's start to t0's hour, and its moves from that hour to t0 collapse into one opening balance
 * (time -1), the later moves are summed per block time (blocks of one time count as one change, whatever their
 * order), and a time where the balance goes from ≤ 0 to > 0 gains a holder, from > 0 to ≤ 0 loses one. The read
 * grows with the pair's periods (about 8.6 a year), at most 1,023 hours and the moves of t0's hour, not its moves.
 */
export const CROSSINGS_SQL = `
  SELECT token_id, address, toString(t) AS ts, toInt8((bal > 0) - (bal - d > 0)) AS change
  FROM (
    SELECT token_id, address, t, d,
      sum(d) OVER (PARTITION BY token_id, address ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS bal
    FROM (
      SELECT token_id, address, t, sum(d) AS d
      FROM (
        SELECT token_id, address, toInt64(-1) AS t, net AS d
        FROM holder_period_sums FINAL
        WHERE ${PAIR_WHERE} AND period < ${P0}
        UNION ALL
        SELECT token_id, address, toInt64(-1) AS t, net AS d
        FROM holder_hour_sums FINAL
        WHERE ${OPENING_HOURS_WHERE}
        UNION ALL
        SELECT token_id, address, if(ts >= ${T0}, toInt64(ts), toInt64(-1)) AS t, ${SIGNED} AS d
        FROM holder_moves FINAL
        WHERE main_chain AND ${PAIR_WHERE} AND ts >= {hmin:UInt64} AND ts >= ${H0}
      )
      GROUP BY token_id, address, t
    )
  )
  WHERE t >= 0 AND change != 0`;

/**
 * Recomputes the crossings of the touched pairs from their t0; writes what changed (facts, points, then
 * holder_changes). One pass per token at a time: the holders-recompute replicas each own the tokens of their
 * partitions (`series backfill` of token-holders takes the group's lock, so it never runs beside them).
 */
export async function recomputeHolders(deps: SeriesDeps, pairs: HolderPairs): Promise<number> {
  if (pairs.size === 0) return 0;
  const { ch } = deps;
  const { pairHours, pairPeriods, ...params } = pairParams(pairs);
  const version = await nextVersion(deps);
  const [, fresh, stored] = await Promise.all([
    // A pair's touched hours are all at or after its t0's hour (its periods at or after its t0's period), and the
    // crossings read only its hours before that hour and its periods before that period: the statements are
    // independent. The hours and periods are for later passes; this one awaits them before it goes on.
    ch
      .command("holder_hour_sums_recompute", HOUR_SUMS_SQL, { ...params, pairHours, version })
      .then(() =>
        ch.command("holder_period_sums_recompute", PERIOD_SUMS_SQL, { ...params, pairPeriods, version }),
      ),
    ch.query<Crossing>("holder_crossings", CROSSINGS_SQL, params),
    ch.query<Crossing>(
      "holder_changes_read",
      `SELECT token_id, address, toString(t) AS ts, change FROM (
         SELECT token_id, address, ts AS t, change FROM holder_changes FINAL
         WHERE change != 0 AND ${PAIR_WHERE} AND ts >= {tmin:UInt64} AND ts >= ${T0}
       )`,
      params,
    ),
  ]);
  const at = (c: Crossing) => `${c.token_id}:${c.address}:${c.ts}`;
  const before = new Map(stored.map((c) => [at(c), c]));
  const after = new Map(fresh.map((c) => [at(c), c]));
  const changed: Crossing[] = [];
  for (const [k, c] of after) if (before.get(k)?.change !== c.change) changed.push(c);
  for (const [k, c] of before) if (!after.has(k)) changed.push({ ...c, change: 0 });

  // The moments of these tokens a pass that died left unfinished: their facts may not match the stored crossings (a
  // replay may hold more blocks than the dead pass and find other crossings, so it cannot be trusted to find the same
  // difference). The replay of the dead pass's batch touches its tokens again, so it reads them here.
  const left = await ch.query<{ token_id: string; times: string[] }>(
    "holder_pending_read",
    `SELECT token_id, arrayMap(t -> toString(t), times) AS times FROM holder_pending_token_moments FINAL
     WHERE token_id IN ${inParam("tokens")} AND notEmpty(times)`,
    { tokens: params.tokens },
  );
  const moments = new Map<string, { token_id: string; ts: string }>();
  for (const { token_id, times } of left)
    for (const ts of times) moments.set(`${token_id}:${ts}`, { token_id, ts });
  for (const c of changed) moments.set(`${c.token_id}:${c.ts}`, { token_id: c.token_id, ts: c.ts });
  if (moments.size === 0) return 0;

  // What this pass finishes, then its crossings: from here on the stored crossings are the truth of every moment.
  const list = [...moments.values()];
  const timesOf = new Map<string, number[]>();
  for (const m of list) {
    const times = timesOf.get(m.token_id) ?? [];
    times.push(Number(m.ts));
    timesOf.set(m.token_id, times);
  }
  await ch.insert(
    "holder_pending_insert",
    "holder_pending_token_moments",
    [...timesOf].map(([token_id, times]) => ({ token_id, times, version })),
  );
  if (changed.length > 0)
    await ch.insert(
      "holder_changes_insert",
      "holder_changes",
      changed.map((c) => ({ token_id: c.token_id, address: c.address, ts: c.ts, change: c.change, version })),
    );

  // Per (token, time): the gains and losses of the stored crossings.
  const totals = await ch.query<{ token_id: string; ts: string; gained: string; lost: string }>(
    "holder_changes_totals",
    `SELECT token_id, toString(ts) AS ts, countIf(change > 0) AS gained, countIf(change < 0) AS lost
     FROM holder_changes FINAL
     WHERE token_id IN {tokens:Array(String)} AND ts IN {times:Array(UInt64)}
       AND concat(token_id, ':', toString(ts)) IN {moments:Array(String)}
     GROUP BY token_id, ts`,
    {
      tokens: [...new Set(list.map((m) => m.token_id))],
      times: [...new Set(list.map((m) => Number(m.ts)))],
      moments: [...moments.keys()],
    },
  );
  const totalOf = new Map(totals.map((t) => [`${t.token_id}:${t.ts}`, t]));

  const touched: SeriesTouched = new Map();
  const facts: FactRow[] = [];
  for (const [k, m] of moments) {
    const gained = Number(totalOf.get(k)?.gained ?? 0);
    const lost = Number(totalOf.get(k)?.lost ?? 0);
    const instance = instanceOf(tokenHolders.id, { token_id: m.token_id });
    const instance_id = instance.id;
    // One literal per fact (a spread of `row` plus more properties gives each fact its own hidden class on Node 20).
    const fact = (key: string, agg: string, value: string) => ({
      series_id: tokenHolders.id,
      instance_id,
      dimensions: instance.json,
      ts: Number(m.ts),
      block_hash: HOLDERS_FACT_BLOCK,
      last_id: "",
      members: [],
      // No crossing left at this time: the facts leave the series like a retracted block's.
      main_chain: gained + lost > 0,
      // The write clock (decimal text: UInt64 past 2^53), newer than the facts this replaces.
      version,
      key,
      agg,
      value,
    });
    facts.push(
      fact("gained", "sum", String(gained)),
      fact("lost", "sum", String(lost)),
      fact("holders_delta", "net", String(gained - lost)),
    );
    touchSeries(touched, instance_id, tokenHolders.id, Number(m.ts));
  }
  await ch.insert("holder_facts_insert", "series_block_facts", facts);
  await recomputeSeries(deps, touched);
  // Finished: nothing pending for these tokens.
  const done = await nextVersion(deps);
  await ch.insert(
    "holder_pending_done",
    "holder_pending_token_moments",
    [...timesOf.keys()].map((token_id) => ({ token_id, times: [], version: done })),
  );
  return changed.length;
}

/**
 * Builds token-holders from the stored raw blocks (main chain, in time order), through the same passes as the
 * processors: what `series backfill --series token-holders` runs. Idempotent: what is already stored is
 * found unchanged. Never beside holders-recompute (both read and then write holder_changes): the command takes
 * that group's lock.
 */
export async function backfillHolders(
  deps: SeriesDeps,
  onProgress?: (p: { blocks: number; total: number; changes: number }) => void,
): Promise<{ blocks: number; changes: number }> {
  const { ch } = deps;
  const [count] = await ch.query<{ n: string }>(
    "holders_backfill_count",
    "SELECT count() AS n FROM raw_blocks FINAL WHERE main_chain",
  );
  const total = Number(count?.n ?? 0);
  const result = { blocks: 0, changes: 0 };
  for await (const rows of mainRawBlocks(ch)) {
    const pass = await handleHolderMessages(
      deps,
      rows.map((r) => ({
        kind: "block",
        hash: r.hash,
        timestamp: r.ts,
        seq: r.version,
        block_json: r.block_json,
      })),
    );
    result.blocks += rows.length;
    result.changes += pass.changes;
    onProgress?.({ blocks: result.blocks, total, changes: result.changes });
  }
  return result;
}
