/** Small helpers shared by the registry repositories (tokens, catalog, on-chain objects). */
import { addressFromContractId } from "@alephium/web3";
import { badRequest } from "../errors.ts";
import type { PgParam, PgQueryable } from "../stores/postgres.ts";

/** Network id of the Alephium mainnet in `@alephium/token-list` (served as `networkId`). */
export const MAINNET_NETWORK_ID = 0;
/** Chain id of the indexed Alephium chain in the registry. */
export const ALEPHIUM_CHAIN_ID = 8738;
/** Most categories a token or a dapp may carry. */
export const MAX_CATEGORIES = 3;

export const HEX_ID = /^[0-9a-fA-F]{64}$/;

/** bigint columns arrive as numbers from PGlite and as strings from pg: one numeric form for both. */
export const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const now = (): number => Date.now();

/** Base58 contract address of a 64-hex contract (= token) id. */
export function contractAddressOf(id: string): string {
  return addressFromContractId(id.toLowerCase());
}

/** Group of a contract: Alephium puts it in the last byte of the contract id. */
export function groupOfContractId(id: string): number {
  return Number.parseInt(id.slice(-2), 16) % 4;
}

/**
 * One page of a filtered list and the total count of the same filter, in two queries run together.
 * `select` gets the `LIMIT … OFFSET …` clause (bound parameters; empty for `pageSize` -1 = all) to
 * place where the page is cut; `from` is the `FROM … WHERE …` the count shares.
 */
export async function pageWithTotal<T>(
  db: PgQueryable,
  label: string,
  q: { select: (limit: string) => string; from: string; params: PgParam[]; page: number; pageSize: number },
): Promise<{ rows: T[]; total: number }> {
  const all = q.pageSize === -1;
  const n = q.params.length;
  const [rows, count] = await Promise.all([
    db.query<T>(
      `${label}_list`,
      q.select(all ? "" : `LIMIT $${n + 1} OFFSET $${n + 2}`),
      all ? q.params : [...q.params, q.pageSize, (q.page - 1) * q.pageSize],
    ),
    db.query<{ total: number }>(`${label}_count`, `SELECT count(*)::int AS total ${q.from}`, q.params),
  ]);
  return { rows, total: Number(count[0]?.total ?? 0) };
}

/** Cleans a category list: trims, de-duplicates, enforces the limit of 3 and that every id exists (400). */
export async function checkCategories(db: PgQueryable, ids: string[]): Promise<string[]> {
  const unique = [...new Set(ids.map((c) => c.trim()).filter((c) => c.length > 0))];
  if (unique.length > MAX_CATEGORIES) {
    throw badRequest(`At most ${MAX_CATEGORIES} categories are allowed, got ${unique.length}`, {
      max: MAX_CATEGORIES,
      given: unique.length,
    });
  }
  if (unique.length === 0) return unique;
  const found = await db.query<{ id: string }>(
    "categories_check",
    "SELECT id FROM categories WHERE id = ANY($1::text[]) AND NOT deleted",
    [unique],
  );
  const known = new Set(found.map((r) => r.id));
  const missing = unique.filter((c) => !known.has(c));
  if (missing.length > 0) {
    throw badRequest(`Unknown category ${missing.join(", ")}`, { unknown_categories: missing });
  }
  return unique;
}
