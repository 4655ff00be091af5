/**
 * ALPH's supply, in attoALPH, each figure with where it came from:
 * - `maximum`: 1,000,000,000 ALPH, a protocol constant (`protocol`).
 * - `total`: ALPH in the main chain's unspent outputs. From the index (`index`: the holders processor's ALPH
 *   balance moves, outputs − spends) when the index holds the chain from its 16 genesis blocks, where that
 *   sum is exact; otherwise the explorer backend's (`explorer`).
 * - `reserved`: ALPH of the addresses the explorer backend counts as reserved (its own list): `explorer`.
 * - `locked`: ALPH in outputs whose lock time is still ahead: `explorer` (the index knows the lock times of
 *   mining rewards and genesis allocations only, not those of time-locked transfers).
 * - `circulating`: total − reserved − locked: `explorer` when the three are the explorer's, `computed`
 *   when the total is the index's.
 * A figure above the maximum, or a circulating figure above the total, is refused: null with `refused` saying why.
 * The explorer is read at most every ALPH_SUPPLY_REFRESH_MS; while it fails, its last figures are kept
 * (with `explorer.status` `unavailable` and the time they were read), and are null until a first read.
 */
import { ALPH_TOKEN_ID } from "../chain/types.ts";
import type { ExplorerClient } from "../explorer-client.ts";
import type { Logger } from "../logger.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Pg } from "../stores/postgres.ts";

/** 10^9 ALPH in attoALPH (18 decimals). */
export const ALPH_MAX_SUPPLY = (10n ** 27n).toString();
export const ALPH_DECIMALS = 18;

export type SupplySource = "index" | "explorer" | "computed" | "protocol";

export interface SupplyFigure {
  /** attoALPH, or null when no source has it or it was refused. */
  value: string | null;
  source: SupplySource | null;
  /**
   * Set when the source gave a figure that could not exist, refused instead of published: above the protocol's
   * maximum (`exceeds_maximum`), or a circulating supply above the total (`exceeds_total`).
   */
  refused?: "exceeds_maximum" | "exceeds_total";
}

export interface AlphSupply {
  maximum: SupplyFigure;
  total: SupplyFigure;
  circulating: SupplyFigure;
  reserved: SupplyFigure;
  locked: SupplyFigure;
  /** Whether the index holds the chain from its genesis blocks (then `total` is the index's). */
  index_from_genesis: boolean;
  explorer: {
    status: "ok" | "unavailable" | "not_configured";
    /** When the explorer's figures in use were read (ms); null before a first read. */
    fetched_at: number | null;
    /** The explorer's own snapshot time (`TokenSupply.timestamp`, ms). */
    snapshot_ts: number | null;
    /** The last failure, while the explorer fails. */
    error: string | null;
  };
  updated_at: number;
}

/** The explorer's `TokenSupply` (attoALPH strings). */
export interface ExplorerSupply {
  timestamp: number;
  total: string;
  circulating: string;
  reserved: string;
  locked: string;
}

const U256 = /^\d{1,78}$/;

/** The first `TokenSupply` of an `/infos/supply` answer, or null when it is not shaped like one. */
export function parseExplorerSupply(list: readonly Record<string, unknown>[]): ExplorerSupply | null {
  const s = list[0];
  if (!s || typeof s.timestamp !== "number") return null;
  const fields = ["total", "circulating", "reserved", "locked"] as const;
  for (const f of fields) if (typeof s[f] !== "string" || !U256.test(s[f] as string)) return null;
  return {
    timestamp: s.timestamp,
    total: s.total as string,
    circulating: s.circulating as string,
    reserved: s.reserved as string,
    locked: s.locked as string,
  };
}

/** The figures from their inputs (pure). `indexTotal` is null when the index does not hold genesis. */
export function combineAlphSupply(
  explorer: ExplorerSupply | null,
  indexTotal: string | null,
): Pick<AlphSupply, "maximum" | "total" | "circulating" | "reserved" | "locked"> {
  const fromExplorer = (v: string | undefined): SupplyFigure =>
    v === undefined ? { value: null, source: null } : { value: v, source: "explorer" };
  const reserved = fromExplorer(explorer?.reserved);
  const locked = fromExplorer(explorer?.locked);
  const total: SupplyFigure =
    indexTotal !== null ? { value: indexTotal, source: "index" } : fromExplorer(explorer?.total);
  let circulating: SupplyFigure = fromExplorer(explorer?.circulating);
  if (indexTotal !== null) {
    const rest = explorer ? BigInt(indexTotal) - BigInt(explorer.reserved) - BigInt(explorer.locked) : null;
    circulating =
      rest === null
        ? { value: null, source: null }
        : { value: (rest > 0n ? rest : 0n).toString(), source: "computed" };
  }
  const max = BigInt(ALPH_MAX_SUPPLY);
  const bounded = (f: SupplyFigure): SupplyFigure =>
    f.value !== null && BigInt(f.value) > max ? { value: null, source: null, refused: "exceeds_maximum" } : f;
  const [t, c] = [bounded(total), bounded(circulating)];
  return {
    maximum: { value: ALPH_MAX_SUPPLY, source: "protocol" },
    total: t,
    circulating:
      c.value !== null && t.value !== null && BigInt(c.value) > BigInt(t.value)
        ? { value: null, source: null, refused: "exceeds_total" }
        : c,
    reserved: bounded(reserved),
    locked: bounded(locked),
  };
}

/** Whether the index holds the 16 genesis blocks (ingest started at or before genesis). */
export async function indexHoldsGenesis(ch: Ch): Promise<boolean> {
  const rows = await ch.query<{ n: string }>(
    "alph_supply_genesis",
    "SELECT toString(uniqExact(chain_index)) AS n FROM raw_blocks FINAL WHERE height = 0 AND main_chain",
  );
  return Number(rows[0]?.n ?? 0) === 16;
}

/**
 * ALPH in the main chain's unspent outputs the index knows of: the sum of ALPH's net moves per (address, period of
 * 1,024 hours) (`holder_period_sums`, the sums of `holder_hour_sums`: outputs − spends of the main chain, kept by
 * holders-recompute), so the read grows with the periods addresses moved in, not with their hours or with every
 * output and spend ever made (`npm run bench:holders` times it beside the sum of every move).
 */
export async function indexAlphTotal(ch: Ch): Promise<string> {
  const rows = await ch.query<{ total: string }>(
    "alph_supply_total",
    `SELECT toString(sum(net)) AS total FROM holder_period_sums FINAL WHERE token_id = {alph:String}`,
    { alph: ALPH_TOKEN_ID },
  );
  return rows[0]?.total ?? "0";
}

/** The same total summed over every one of ALPH's balance moves (the read before holder_hour_sums; bench:holders). */
export async function indexAlphTotalFromMoves(ch: Ch): Promise<string> {
  const rows = await ch.query<{ total: string }>(
    "alph_supply_total_moves",
    `SELECT toString(sumIf(toInt256(amount), kind = 'output') - sumIf(toInt256(amount), kind = 'spend')) AS total
     FROM holder_moves FINAL WHERE token_id = {alph:String} AND main_chain`,
    { alph: ALPH_TOKEN_ID },
  );
  return rows[0]?.total ?? "0";
}

export interface AlphSupplyReader {
  /** The figures as of `now`: reads the explorer and the index again once `refreshMs` passed since the last read. */
  read(now: number): Promise<AlphSupply>;
}

/**
 * Keeps ALPH's supply between reads: the explorer (and the index's total, a sum of ALPH's net moves per period)
 * are read at most every `refreshMs`; a failing explorer leaves its last figures in place.
 */
export function createAlphSupplyReader(
  deps: { ch: Ch; explorer: ExplorerClient | null; log: Logger },
  options: { refreshMs: number },
): AlphSupplyReader {
  const log = deps.log.child({ component: "alph-supply" });
  let readAt = Number.NEGATIVE_INFINITY;
  let explorerSupply: ExplorerSupply | null = null;
  let fetchedAt: number | null = null;
  let error: string | null = null;
  let indexTotal: string | null = null;
  let fromGenesis = false;
  let current: AlphSupply | null = null;

  async function refresh(now: number) {
    readAt = now;
    if (deps.explorer) {
      try {
        const answer = await deps.explorer.supply({ page: 1, limit: 1 });
        const parsed = parseExplorerSupply(answer.json);
        if (!parsed)
          throw new Error("The explorer backend sent an /infos/supply answer without a TokenSupply.");
        explorerSupply = parsed;
        fetchedAt = now;
        error = null;
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
        log.warn({ err: e }, "ALPH supply: the explorer backend failed; keeping its last figures.");
      }
    }
    fromGenesis = await indexHoldsGenesis(deps.ch);
    indexTotal = fromGenesis ? await indexAlphTotal(deps.ch) : null;
  }

  return {
    async read(now) {
      if (now - readAt >= options.refreshMs || current === null) await refresh(now);
      current = {
        ...combineAlphSupply(explorerSupply, indexTotal),
        index_from_genesis: fromGenesis,
        explorer: {
          status: !deps.explorer
            ? "not_configured"
            : error === null && fetchedAt !== null
              ? "ok"
              : "unavailable",
          fetched_at: fetchedAt,
          snapshot_ts: explorerSupply?.timestamp ?? null,
          error,
        },
        updated_at: now,
      };
      return current;
    },
  };
}

/** Stores the figures for GET /token/alph/supply. */
export async function saveAlphSupply(pg: Pg, supply: AlphSupply): Promise<void> {
  await pg.query(
    "alph_supply_save",
    `INSERT INTO alph_supply (id, figures, updated_at) VALUES (1, $1, $2)
     ON CONFLICT (id) DO UPDATE SET figures = EXCLUDED.figures, updated_at = EXCLUDED.updated_at`,
    [JSON.stringify(supply), supply.updated_at],
  );
}

/** The stored figures, or null before the figures processor first put them together. */
export async function loadAlphSupply(pg: Pg): Promise<AlphSupply | null> {
  const rows = await pg.query<{ figures: AlphSupply | string }>(
    "alph_supply_load",
    "SELECT figures FROM alph_supply WHERE id = 1",
  );
  const f = rows[0]?.figures;
  if (f === undefined) return null;
  return typeof f === "string" ? (JSON.parse(f) as AlphSupply) : f;
}
