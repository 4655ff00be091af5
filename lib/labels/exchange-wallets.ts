/**
 * Exchange wallets (Postgres `exchange_wallets`): the addresses of centralized exchanges on
 * Alephium, which make the normalizer's `cex` deposit / withdraw events. Every query on the table
 * lives here, for the admin routes, the CLI and the normalizer.
 *
 * Determinism: a wallet classifies the transfers of a block when applies_from <= block time <
 * applies_until. A change made now takes effect from just after the newest block ingest has
 * published (or the clock, if later): blocks already normalized keep their events, so replays give the
 * same events, and new blocks see the change. `backdate` moves applies_from back; a `reprocess` of the
 * range then brings the wallet to history.
 */
import { isValidAddress } from "@alephium/web3";
import { badRequest } from "../errors.ts";
import type { Pg, PgQueryable } from "../stores/postgres.ts";

export interface ExchangeWallet {
  address: string;
  exchange_id: string;
  label: string | null;
  /** Block time (ms) from which it classifies transfers. */
  applies_from: number;
  /** Block time (ms) from which it no longer does (removed), or null. */
  applies_until: number | null;
  source: "seed" | "admin";
  created_at: number;
  updated_at: number;
}

export interface ExchangeWalletInput {
  address: string;
  exchange_id: string;
  label?: string | null;
  /** Block time from which it applies; default: after the newest published block. */
  applies_from?: number;
}

export interface ExchangeWalletsRepo {
  list(options?: { exchange_id?: string; include_removed?: boolean }): Promise<ExchangeWallet[]>;
  /** Adds a wallet, or re-opens / relabels an existing one (its range starts again from `applies_from`). */
  add(input: ExchangeWalletInput): Promise<ExchangeWallet>;
  /** Closes a wallet's range from after the newest published block; false when unknown or already closed. */
  remove(address: string): Promise<ExchangeWallet | null>;
  /** Moves applies_from back (to history); the caller reprocesses the range. */
  backdate(filter: { address?: string; exchange_id?: string }, from: number): Promise<ExchangeWallet[]>;
  /** Changes whenever a wallet changes (the normalizer reloads on a new value). */
  version(): Promise<string>;
}

const COLUMNS = `address, exchange_id, label, applies_from, applies_until, source, created_at, updated_at`;

interface Row {
  address: string;
  exchange_id: string;
  label: string | null;
  applies_from: string;
  applies_until: string | null;
  source: "seed" | "admin";
  created_at: string;
  updated_at: string;
}

const toWallet = (r: Row): ExchangeWallet => ({
  ...r,
  applies_from: Number(r.applies_from),
  applies_until: r.applies_until === null ? null : Number(r.applies_until),
  created_at: Number(r.created_at),
  updated_at: Number(r.updated_at),
});

/** The first block time a change made now may affect: after every published block, and not before now. */
export async function effectiveFrom(pg: PgQueryable, now = Date.now()): Promise<number> {
  const rows = await pg.query<{ ts: string | null }>(
    "exchange_wallets_published",
    "SELECT max(block_ts) AS ts FROM ingest_cursor",
  );
  return Math.max(now, Number(rows[0]?.ts ?? 0) + 1);
}

export function validateWalletAddress(address: string): void {
  let ok = false;
  try {
    ok = isValidAddress(address);
  } catch {
    ok = false;
  }
  if (!ok) {
    throw badRequest(`Invalid address ${JSON.stringify(address)}: expected a base58 Alephium address.`, {
      field: "address",
    });
  }
}

export function createExchangeWalletsRepo(pg: Pg): ExchangeWalletsRepo {
  return {
    async list(options = {}) {
      const rows = await pg.query<Row>(
        "exchange_wallets_list",
        `SELECT ${COLUMNS} FROM exchange_wallets
         WHERE ($1::text IS NULL OR exchange_id = $1) AND ($2 OR applies_until IS NULL)
         ORDER BY exchange_id, address`,
        [options.exchange_id ?? null, options.include_removed ?? false],
      );
      return rows.map(toWallet);
    },
    async add(input) {
      validateWalletAddress(input.address);
      const now = Date.now();
      const from = input.applies_from ?? (await effectiveFrom(pg, now));
      const [row] = await pg.query<Row>(
        "exchange_wallets_add",
        `INSERT INTO exchange_wallets (address, exchange_id, label, applies_from, applies_until, source,
           created_at, updated_at)
         VALUES ($1, $2, $3, $4, NULL, 'admin', $5, $5)
         ON CONFLICT (address) DO UPDATE SET exchange_id = EXCLUDED.exchange_id, label = EXCLUDED.label,
           applies_from = EXCLUDED.applies_from, applies_until = NULL, source = 'admin',
           updated_at = EXCLUDED.updated_at
         RETURNING ${COLUMNS}`,
        [input.address, input.exchange_id, input.label ?? null, from, now],
      );
      return toWallet(row!);
    },
    async remove(address) {
      const now = Date.now();
      const until = await effectiveFrom(pg, now);
      const [row] = await pg.query<Row>(
        "exchange_wallets_remove",
        `UPDATE exchange_wallets SET applies_until = greatest($2::bigint, applies_from), updated_at = $3
         WHERE address = $1 AND applies_until IS NULL RETURNING ${COLUMNS}`,
        [address, until, now],
      );
      return row ? toWallet(row) : null;
    },
    async backdate(filter, from) {
      const rows = await pg.query<Row>(
        "exchange_wallets_backdate",
        `UPDATE exchange_wallets SET applies_from = $3, updated_at = $4
         WHERE applies_until IS NULL AND applies_from > $3
           AND ($1::text IS NULL OR address = $1) AND ($2::text IS NULL OR exchange_id = $2)
         RETURNING ${COLUMNS}`,
        [filter.address ?? null, filter.exchange_id ?? null, from, Date.now()],
      );
      return rows.map(toWallet);
    },
    async version() {
      const rows = await pg.query<{ v: string }>(
        "exchange_wallets_version",
        "SELECT count(*)::text || ':' || coalesce(max(updated_at), 0)::text AS v FROM exchange_wallets",
      );
      return rows[0]?.v ?? "0:0";
    },
  };
}

/** The wallets as the normalizer uses them: by address, each with its block-time range. */
export type WalletRanges = ReadonlyMap<
  string,
  readonly { exchange_id: string; from: number; until: number }[]
>;

export async function loadWalletRanges(pg: PgQueryable): Promise<WalletRanges> {
  const rows = await pg.query<Row>("exchange_wallets_ranges", `SELECT ${COLUMNS} FROM exchange_wallets`);
  const out = new Map<string, { exchange_id: string; from: number; until: number }[]>();
  for (const r of rows.map(toWallet)) {
    const list = out.get(r.address) ?? [];
    list.push({
      exchange_id: r.exchange_id,
      from: r.applies_from,
      until: r.applies_until ?? Number.POSITIVE_INFINITY,
    });
    out.set(r.address, list);
  }
  return out;
}

/** The exchange registry the normalizer uses for a block of time `blockTs` (pure). */
export function exchangeBookAt(
  wallets: WalletRanges,
  blockTs: number,
): { exchangeOf(address: string): string | undefined } {
  return {
    exchangeOf(address) {
      const ranges = wallets.get(address);
      if (!ranges) return undefined;
      for (const r of ranges) if (r.from <= blockTs && blockTs < r.until) return r.exchange_id;
      return undefined;
    },
  };
}
