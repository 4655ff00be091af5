/**
 * Token registry (Postgres): the list and details served by the API, admin updates that remember which
 * fields an admin changed, soft deletes, and the discovery upsert the pipeline calls for tokens it sees
 * minted on chain. Seeding (lib/tokens/seed.ts) writes through `upsertListedTokens` and `upsertBridgedRows`.
 */

import { badRequest, notFound } from "../errors.ts";
import type { FigureNotes } from "../figures/compute.ts";
import type { Pg, PgQueryable } from "../stores/postgres.ts";
import type { BridgedRowInput } from "./bridge.ts";
import {
  ALEPHIUM_CHAIN_ID,
  checkCategories,
  contractAddressOf,
  HEX_ID,
  now,
  num,
  pageWithTotal,
} from "./repo-shared.ts";

/** The Token details object (SPEC "Token (details object)"). */
export interface Token {
  id: string;
  contractAddress: string;
  name: string | null;
  symbol: string | null;
  symbolOnChain: string | null;
  decimals: number | null;
  categories: string[];
  dapp: string | null;
  logoURI: string | null;
  unchainedLogoURI: string | null;
  description: string | null;
  originChain: string | null;
  maxSupply: string | null;
  circulatingSupply: string | null;
  burnedSupply: string | null;
  lockSupply: string | null;
  createdAt: number;
  updatedAt: number;
  minter: string | null;
  mintTx: string | null;
  mintTime: number | null;
  registered: boolean;
  source: string;
  chainId: number;
  moderation: "show" | "hide";
  marketDisplay: boolean;
  circulatingSupplyUsd: number | null;
  /** USD price by the figures processor's rule (lib/figures/compute.ts); null when no watched pair prices it. */
  priceUsd: number | null;
  /** USD value of the token in pools with includeInTVL. */
  tvlUsd: number | null;
  /** Each null market figure with why it is null (lib/figures/compute.ts `tokenFigures`). */
  unknownFigures: FigureNotes;
  website: string | null;
  metadata: Record<string, unknown>;
}

/** One row of `GET /token/all` (a subset of Token). */
export type TokenListEntry = Pick<
  Token,
  | "id"
  | "contractAddress"
  | "name"
  | "symbol"
  | "symbolOnChain"
  | "decimals"
  | "logoURI"
  | "categories"
  | "dapp"
  | "originChain"
  | "registered"
  | "source"
  | "chainId"
  | "moderation"
  | "marketDisplay"
  | "circulatingSupplyUsd"
  | "priceUsd"
  | "tvlUsd"
  | "unknownFigures"
  | "mintTime"
>;

export interface BridgedRow extends BridgedRowInput {
  id: string;
}

export type TokenSort = "symbol" | "circulating_supply_usd" | "mint_time";

export interface TokenListQuery {
  page: number;
  /** -1 returns every matching token. */
  pageSize: number;
  chain?: number;
  registered?: boolean;
  moderation?: "show" | "hide";
  marketDisplay?: boolean;
  dapps?: string[];
  category?: string;
  search?: string;
  sort: TokenSort;
  order: "asc" | "desc";
}

/** Body of `POST /token/{tokenid}/update`; null means "not given". */
export interface TokenUpdate {
  category_ids?: string[] | null;
  dapp?: string | null;
  decimals?: number | null;
  symbol?: string | null;
  symbol_onchain?: string | null;
  name?: string | null;
  metadata?: Record<string, unknown> | null;
  metadata_merge?: Record<string, unknown> | null;
  logo_uri?: string | null;
  website?: string | null;
  registered?: boolean | null;
  deleted?: boolean | null;
}

/** A token first seen on chain (the pipeline's genesis-mint detection). */
export interface DiscoveredToken {
  id: string;
  minter: string | null;
  mintTx: string | null;
  mintTime: number | null;
  decimals?: number | null;
  name?: string | null;
  symbol?: string | null;
  totalSupply?: string | null;
}

/** A token of the official list, as seeding writes it. */
export interface ListedToken {
  id: string;
  networkId: number;
  name: string;
  symbol: string;
  decimals: number;
  description: string | null;
  logoURI: string | null;
  nameOnChain: string | null;
  symbolOnChain: string | null;
  originChain: string | null;
  unchainedLogoURI: string | null;
  /** Dapp that issued the token, when known to the seed. */
  dapp: string | null;
}

export type UpsertOutcome = "inserted" | "updated" | "unchanged";

interface TokenRow {
  id: string;
  contract_address: string;
  name: string | null;
  symbol: string | null;
  symbol_onchain: string | null;
  decimals: number | null;
  categories: string[];
  dapp: string | null;
  logo_uri: string | null;
  unchained_logo_uri: string | null;
  description: string | null;
  origin_chain: string | null;
  max_supply: string | null;
  circulating_supply: string | null;
  burned_supply: string | null;
  lock_supply: string | null;
  created_at: unknown;
  updated_at: unknown;
  minter: string | null;
  mint_tx: string | null;
  mint_time: unknown;
  registered: boolean;
  source: string;
  chain_id: number;
  moderation: "show" | "hide";
  market_display: boolean;
  circulating_supply_usd: number | null;
  price_usd: number | null;
  tvl_usd: number | null;
  figure_notes: unknown;
  metadata: Record<string, unknown> | null;
  deleted: boolean;
  admin_edited_fields: string[];
}

// Categories soft-deleted by an admin disappear from tokens without losing the links.
const TOKEN_COLUMNS = `t.id, t.contract_address, t.name, t.symbol, t.symbol_onchain, t.decimals, t.dapp,
  t.logo_uri, t.unchained_logo_uri, t.description, t.origin_chain, t.max_supply, t.circulating_supply,
  t.burned_supply, t.lock_supply, t.created_at, t.updated_at, t.minter, t.mint_tx, t.mint_time, t.registered,
  t.source, t.chain_id, t.moderation, t.market_display, t.circulating_supply_usd, t.price_usd, t.tvl_usd, t.figure_notes, t.metadata, t.deleted,
  t.admin_edited_fields,
  ARRAY(SELECT tc.category_id FROM token_categories tc JOIN categories c ON c.id = tc.category_id
        WHERE tc.token_id = t.id AND NOT c.deleted ORDER BY tc.position) AS categories`;

// The list reads only what a TokenListEntry shows: PGlite's cost is mostly in moving and parsing columns.
const LIST_COLUMNS = `t.id, t.contract_address, t.name, t.symbol, t.symbol_onchain, t.decimals, t.dapp, t.logo_uri,
  t.metadata->>'logoURI' AS metadata_logo_uri, t.origin_chain, t.registered, t.source, t.chain_id, t.moderation,
  t.market_display, t.circulating_supply_usd, t.price_usd, t.tvl_usd, t.figure_notes, t.mint_time,
  ARRAY(SELECT tc.category_id FROM token_categories tc JOIN categories c ON c.id = tc.category_id
        WHERE tc.token_id = t.id AND NOT c.deleted ORDER BY tc.position) AS categories`;

type ListRow = Pick<
  TokenRow,
  | "id"
  | "contract_address"
  | "name"
  | "symbol"
  | "symbol_onchain"
  | "decimals"
  | "dapp"
  | "logo_uri"
  | "origin_chain"
  | "registered"
  | "source"
  | "chain_id"
  | "moderation"
  | "market_display"
  | "circulating_supply_usd"
  | "price_usd"
  | "tvl_usd"
  | "figure_notes"
  | "mint_time"
  | "categories"
> & { metadata_logo_uri: string | null };

const nullableNumber = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (typeof v === "string" && v.length > 0 ? v : null);

/** The stored notes (jsonb: an object, or its text from a driver that does not parse it). */
function figureNotes(v: unknown): FigureNotes {
  const o = typeof v === "string" ? (JSON.parse(v) as unknown) : v;
  return o !== null && typeof o === "object" && !Array.isArray(o) ? (o as FigureNotes) : {};
}

function toToken(row: TokenRow): Token {
  const metadata = row.metadata ?? {};
  return {
    id: row.id,
    contractAddress: row.contract_address,
    name: row.name,
    symbol: row.symbol,
    symbolOnChain: row.symbol_onchain,
    decimals: row.decimals,
    categories: row.categories ?? [],
    dapp: row.dapp,
    // An admin's metadata.logoURI (POST .../update logo_uri) wins over the list's logo.
    logoURI: str(metadata.logoURI) ?? row.logo_uri,
    unchainedLogoURI: row.unchained_logo_uri,
    description: row.description,
    originChain: row.origin_chain,
    maxSupply: row.max_supply,
    circulatingSupply: row.circulating_supply,
    burnedSupply: row.burned_supply,
    lockSupply: row.lock_supply,
    createdAt: num(row.created_at) ?? 0,
    updatedAt: num(row.updated_at) ?? 0,
    minter: row.minter,
    mintTx: row.mint_tx,
    mintTime: num(row.mint_time),
    registered: row.registered,
    source: row.source,
    chainId: row.chain_id,
    moderation: row.moderation,
    marketDisplay: row.market_display,
    circulatingSupplyUsd: row.circulating_supply_usd === null ? null : Number(row.circulating_supply_usd),
    priceUsd: nullableNumber(row.price_usd),
    tvlUsd: nullableNumber(row.tvl_usd),
    unknownFigures: figureNotes(row.figure_notes),
    website: str(metadata.website),
    metadata,
  };
}

function toListEntry(row: ListRow): TokenListEntry {
  return {
    id: row.id,
    contractAddress: row.contract_address,
    name: row.name,
    symbol: row.symbol,
    symbolOnChain: row.symbol_onchain,
    decimals: row.decimals,
    logoURI: str(row.metadata_logo_uri) ?? row.logo_uri,
    categories: row.categories ?? [],
    dapp: row.dapp,
    originChain: row.origin_chain,
    registered: row.registered,
    source: row.source,
    chainId: row.chain_id,
    moderation: row.moderation,
    marketDisplay: row.market_display,
    circulatingSupplyUsd: row.circulating_supply_usd === null ? null : Number(row.circulating_supply_usd),
    priceUsd: nullableNumber(row.price_usd),
    tvlUsd: nullableNumber(row.tvl_usd),
    unknownFigures: figureNotes(row.figure_notes),
    mintTime: num(row.mint_time),
  };
}

function toBridged(row: BridgedRow & { id: unknown }): BridgedRow {
  return { ...row, id: String(row.id) };
}

const ORDER: Record<TokenSort, string> = {
  symbol: "lower(t.symbol)",
  circulating_supply_usd: "t.circulating_supply_usd",
  mint_time: "t.mint_time",
};

/** Builds the WHERE clause of the list; pure, so the rules can be unit-tested. */
export function tokenListWhere(q: Omit<TokenListQuery, "page" | "pageSize" | "sort" | "order">): {
  where: string;
  params: (string | number | boolean | string[])[];
} {
  const clauses = ["NOT t.deleted"];
  const params: (string | number | boolean | string[])[] = [];
  const add = (value: string | number | boolean | string[]) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (q.chain !== undefined) clauses.push(`t.chain_id = ${add(q.chain)}`);
  if (q.registered !== undefined) clauses.push(`t.registered = ${add(q.registered)}`);
  if (q.moderation !== undefined) clauses.push(`t.moderation = ${add(q.moderation)}`);
  if (q.marketDisplay !== undefined) clauses.push(`t.market_display = ${add(q.marketDisplay)}`);
  if (q.dapps && q.dapps.length > 0) clauses.push(`t.dapp = ANY(${add(q.dapps)}::text[])`);
  if (q.category !== undefined) {
    clauses.push(
      `EXISTS (SELECT 1 FROM token_categories tc WHERE tc.token_id = t.id AND tc.category_id = ${add(q.category)})`,
    );
  }
  if (q.search) {
    // position() instead of LIKE: the search text needs no escaping of % and _.
    const p = add(q.search.toLowerCase());
    const fields = ["t.id", "t.contract_address", "t.symbol", "t.symbol_onchain", "t.name"];
    clauses.push(`(${fields.map((f) => `position(${p} in lower(coalesce(${f}, ''))) > 0`).join(" OR ")})`);
  }
  return { where: clauses.join(" AND "), params };
}

export interface TokensRepo {
  listTokens(q: TokenListQuery): Promise<{ tokens: TokenListEntry[]; total: number }>;
  /** Resolves a 64-hex id or a base58 contract address; deleted tokens only with `includeDeleted`. */
  getToken(tokenid: string, options?: { includeDeleted?: boolean }): Promise<Token | null>;
  getTokenDetails(tokenid: string): Promise<{ token: Token; bridged: BridgedRow[] }>;
  updateToken(tokenid: string, update: TokenUpdate): Promise<Token>;
  deleteToken(tokenid: string): Promise<Token>;
  filterOptionDapps(): Promise<string[]>;
  upsertDiscoveredToken(token: DiscoveredToken): Promise<UpsertOutcome>;
  upsertDiscoveredTokens(tokens: DiscoveredToken[]): Promise<Map<string, UpsertOutcome>>;
  upsertListedTokens(tokens: ListedToken[]): Promise<number>;
  upsertBridgedRows(rows: BridgedRowInput[]): Promise<number>;
  /** Adds seed category links to tokens whose categories no admin has edited; existing links stay. */
  seedTokenCategories(links: { tokenId: string; categoryId: string }[]): Promise<number>;
  countTokens(): Promise<number>;
}

const EDITABLE = [
  "category_ids",
  "dapp",
  "decimals",
  "symbol",
  "symbol_onchain",
  "name",
  "metadata",
  "metadata_merge",
  "logo_uri",
  "website",
  "registered",
  "deleted",
] as const;

export function createTokensRepo(pg: Pg): TokensRepo {
  const resolve = async (db: PgQueryable, tokenid: string, lock: boolean): Promise<TokenRow | null> => {
    const byId = HEX_ID.test(tokenid);
    const rows = await db.query<TokenRow>(
      byId ? "tokens_get_by_id" : "tokens_get_by_address",
      `SELECT ${TOKEN_COLUMNS} FROM tokens t WHERE ${byId ? "t.id" : "t.contract_address"} = $1
       ${lock ? "FOR UPDATE OF t" : ""}`,
      [byId ? tokenid.toLowerCase() : tokenid],
    );
    return rows[0] ?? null;
  };

  const upsertDiscovered = async (tokens: DiscoveredToken[]) => {
    const unique = new Map<string, DiscoveredToken>();
    for (const t of tokens) {
      if (!HEX_ID.test(t.id)) throw badRequest(`Token id ${t.id} is not 64 hex characters`);
      const id = t.id.toLowerCase();
      if (!unique.has(id)) unique.set(id, { ...t, id });
    }
    const outcome = new Map<string, UpsertOutcome>([...unique.keys()].map((id) => [id, "unchanged"]));
    if (unique.size === 0) return outcome;
    const rows = [...unique.values()].map((t) => ({
      id: t.id,
      contract_address: contractAddressOf(t.id),
      minter: t.minter ?? null,
      mint_tx: t.mintTx ?? null,
      mint_time: t.mintTime ?? null,
      decimals: t.decimals ?? null,
      name: t.name ?? null,
      symbol: t.symbol ?? null,
      max_supply: t.totalSupply ?? null,
    }));
    // Existing tokens (the official list, admin edits) only get their missing on-chain facts filled in.
    const result = await pg.query<{ id: string; inserted: boolean }>(
      "tokens_upsert_discovered",
      `INSERT INTO tokens AS t (id, contract_address, minter, mint_tx, mint_time, decimals, name, symbol,
         symbol_onchain, name_onchain, max_supply, registered, source, chain_id, created_at, updated_at)
       SELECT x.id, x.contract_address, x.minter, x.mint_tx, x.mint_time, x.decimals, x.name, x.symbol,
         x.symbol, x.name, x.max_supply, false, 'chain', ${ALEPHIUM_CHAIN_ID}, $2, $2
       FROM jsonb_to_recordset($1::jsonb) AS x(id text, contract_address text, minter text, mint_tx text,
         mint_time bigint, decimals integer, name text, symbol text, max_supply text)
       ON CONFLICT (id) DO UPDATE SET
         minter = COALESCE(t.minter, EXCLUDED.minter),
         mint_tx = COALESCE(t.mint_tx, EXCLUDED.mint_tx),
         mint_time = COALESCE(t.mint_time, EXCLUDED.mint_time),
         symbol_onchain = CASE WHEN 'symbol_onchain' = ANY(t.admin_edited_fields) THEN t.symbol_onchain
                               ELSE COALESCE(t.symbol_onchain, EXCLUDED.symbol_onchain) END,
         name_onchain = COALESCE(t.name_onchain, EXCLUDED.name_onchain),
         decimals = CASE WHEN 'decimals' = ANY(t.admin_edited_fields) THEN t.decimals
                         ELSE COALESCE(t.decimals, EXCLUDED.decimals) END,
         max_supply = COALESCE(t.max_supply, EXCLUDED.max_supply),
         updated_at = EXCLUDED.updated_at
       WHERE (t.minter IS NULL AND EXCLUDED.minter IS NOT NULL)
          OR (t.mint_tx IS NULL AND EXCLUDED.mint_tx IS NOT NULL)
          OR (t.mint_time IS NULL AND EXCLUDED.mint_time IS NOT NULL)
          OR (t.symbol_onchain IS NULL AND EXCLUDED.symbol_onchain IS NOT NULL
              AND NOT 'symbol_onchain' = ANY(t.admin_edited_fields))
          OR (t.name_onchain IS NULL AND EXCLUDED.name_onchain IS NOT NULL)
          OR (t.decimals IS NULL AND EXCLUDED.decimals IS NOT NULL AND NOT 'decimals' = ANY(t.admin_edited_fields))
          OR (t.max_supply IS NULL AND EXCLUDED.max_supply IS NOT NULL)
       RETURNING t.id, (t.xmax = 0) AS inserted`,
      [JSON.stringify(rows), now()],
    );
    for (const r of result) outcome.set(r.id, r.inserted ? "inserted" : "updated");
    return outcome;
  };

  return {
    async listTokens(q) {
      const { where, params } = tokenListWhere(q);
      const dir = q.order === "desc" ? "DESC" : "ASC";
      const orderBy = `ORDER BY ${ORDER[q.sort]} ${dir} NULLS LAST, t.id ${dir}`;
      const { rows, total } = await pageWithTotal<ListRow>(pg, "tokens", {
        // Page first, then build the category arrays for the page's rows only.
        select: (limit) =>
          `SELECT ${LIST_COLUMNS} FROM (SELECT * FROM tokens t WHERE ${where} ${orderBy} ${limit}) t ${orderBy}`,
        from: `FROM tokens t WHERE ${where}`,
        params,
        page: q.page,
        pageSize: q.pageSize,
      });
      return { tokens: rows.map(toListEntry), total };
    },

    async getToken(tokenid, options = {}) {
      const row = await resolve(pg, tokenid, false);
      if (!row || (row.deleted && !options.includeDeleted)) return null;
      return toToken(row);
    },

    async getTokenDetails(tokenid) {
      const row = await resolve(pg, tokenid, false);
      if (!row || row.deleted) throw notFound(`Token ${tokenid} not found`, { tokenid });
      // Rule 5: for hex ids, rows keyed by the contract address (plain or with its group) join the id matches.
      const addresses = HEX_ID.test(tokenid)
        ? [row.contract_address, `${row.contract_address}:${Number.parseInt(row.id.slice(-2), 16) % 4}`]
        : [];
      const bridged = await pg.query<BridgedRow>(
        "bridged_for_token",
        `SELECT DISTINCT ON (id) * FROM bridged_tokens
         WHERE native_token_id = $1 OR contract_address = ANY($2::text[]) ORDER BY id`,
        [row.id, addresses],
      );
      return { token: toToken(row), bridged: bridged.map(toBridged) };
    },

    async updateToken(tokenid, update) {
      const given = EDITABLE.filter((k) => update[k] !== null && update[k] !== undefined);
      const fields = given.filter(
        (k) => !((k === "logo_uri" || k === "website") && (update[k] as string).trim() === ""),
      );
      if (fields.length === 0) throw badRequest("No fields to update", { allowed: [...EDITABLE] });
      return pg.transaction(async (tx) => {
        const row = await resolve(tx, tokenid, true);
        if (!row) throw notFound(`Token ${tokenid} not found`, { tokenid });
        const sets: string[] = [];
        const params: (string | number | boolean | null | string[] | Record<string, unknown>)[] = [row.id];
        const set = (column: string, value: (typeof params)[number]) => {
          params.push(value);
          sets.push(`${column} = $${params.length}`);
        };
        const edited = new Set<string>();
        for (const column of [
          "dapp",
          "decimals",
          "symbol",
          "symbol_onchain",
          "name",
          "registered",
          "deleted",
        ] as const) {
          const value = update[column];
          if (value === null || value === undefined) continue;
          set(column, value);
          edited.add(column);
        }
        const has = (k: (typeof EDITABLE)[number]) => fields.includes(k);
        if (has("metadata") || has("metadata_merge") || has("logo_uri") || has("website")) {
          // metadata replaces; metadata_merge merges shallowly and is ignored when metadata is present.
          let metadata: Record<string, unknown> = update.metadata
            ? { ...update.metadata }
            : { ...(row.metadata ?? {}), ...(update.metadata_merge ?? {}) };
          if (has("logo_uri")) metadata = { ...metadata, logoURI: update.logo_uri };
          if (has("website")) metadata = { ...metadata, website: update.website };
          set("metadata", metadata);
          edited.add("metadata");
        }
        if (update.category_ids) {
          const ids = await checkCategories(tx, update.category_ids);
          await tx.query("token_categories_clear", "DELETE FROM token_categories WHERE token_id = $1", [
            row.id,
          ]);
          if (ids.length > 0) {
            await tx.query(
              "token_categories_set",
              `INSERT INTO token_categories (token_id, category_id, position)
               SELECT $1, c, (o - 1)::smallint FROM unnest($2::text[]) WITH ORDINALITY AS u(c, o)`,
              [row.id, ids],
            );
          }
          edited.add("categories");
        }
        set("updated_at", now());
        params.push([...edited]);
        await tx.query(
          "tokens_update",
          `UPDATE tokens SET ${sets.join(", ")},
             admin_edited_fields = ARRAY(SELECT DISTINCT f FROM unnest(admin_edited_fields || $${params.length}::text[]) AS f ORDER BY f)
           WHERE id = $1`,
          params,
        );
        const updated = await resolve(tx, row.id, false);
        return toToken(updated as TokenRow);
      });
    },

    async deleteToken(tokenid) {
      const row = await resolve(pg, tokenid, false);
      if (!row) throw notFound(`Token ${tokenid} not found`, { tokenid });
      await pg.query(
        "tokens_soft_delete",
        `UPDATE tokens SET deleted = true, updated_at = $2,
           admin_edited_fields = ARRAY(SELECT DISTINCT f FROM unnest(admin_edited_fields || ARRAY['deleted']) AS f ORDER BY f)
         WHERE id = $1 AND NOT deleted`,
        [row.id, now()],
      );
      return toToken({ ...row, deleted: true });
    },

    async filterOptionDapps() {
      const rows = await pg.query<{ dapp: string }>(
        "tokens_dapps",
        "SELECT DISTINCT dapp FROM tokens WHERE dapp IS NOT NULL AND NOT deleted ORDER BY dapp",
      );
      return rows.map((r) => r.dapp);
    },

    async upsertDiscoveredToken(token) {
      const outcome = await upsertDiscovered([token]);
      return outcome.get(token.id.toLowerCase()) ?? "unchanged";
    },

    upsertDiscoveredTokens: upsertDiscovered,

    async upsertListedTokens(tokens) {
      if (tokens.length === 0) return 0;
      const rows = tokens.map((t) => ({
        id: t.id.toLowerCase(),
        network_id: t.networkId,
        contract_address: contractAddressOf(t.id),
        name: t.name,
        symbol: t.symbol,
        symbol_onchain: t.symbolOnChain,
        name_onchain: t.nameOnChain,
        decimals: t.decimals,
        description: t.description,
        logo_uri: t.logoURI,
        origin_chain: t.originChain,
        unchained_logo_uri: t.unchainedLogoURI,
        dapp: t.dapp,
      }));
      // A field an admin edited keeps the admin's value; nothing is written when nothing differs.
      const keep = (col: string, field = col) =>
        `CASE WHEN '${field}' = ANY(t.admin_edited_fields) THEN t.${col} ELSE EXCLUDED.${col} END`;
      const listed = {
        name: keep("name"),
        symbol: keep("symbol"),
        symbol_onchain: `CASE WHEN 'symbol_onchain' = ANY(t.admin_edited_fields) THEN t.symbol_onchain
          ELSE COALESCE(EXCLUDED.symbol_onchain, t.symbol_onchain) END`,
        name_onchain: "COALESCE(EXCLUDED.name_onchain, t.name_onchain)",
        decimals: keep("decimals"),
        dapp: `CASE WHEN 'dapp' = ANY(t.admin_edited_fields) THEN t.dapp ELSE COALESCE(EXCLUDED.dapp, t.dapp) END`,
        description: "EXCLUDED.description",
        logo_uri: "EXCLUDED.logo_uri",
        origin_chain: "EXCLUDED.origin_chain",
        unchained_logo_uri: "EXCLUDED.unchained_logo_uri",
        network_id: "EXCLUDED.network_id",
        registered: `CASE WHEN 'registered' = ANY(t.admin_edited_fields) THEN t.registered ELSE true END`,
        source: "'token-list'",
      };
      const cols = Object.keys(listed);
      const result = await pg.query<{ id: string }>(
        "tokens_upsert_listed",
        `INSERT INTO tokens AS t (id, network_id, contract_address, name, symbol, symbol_onchain, name_onchain,
           decimals, dapp, description, logo_uri, origin_chain, unchained_logo_uri, registered, source, chain_id,
           created_at, updated_at)
         SELECT x.id, x.network_id, x.contract_address, x.name, x.symbol, x.symbol_onchain, x.name_onchain,
           x.decimals, x.dapp, x.description, x.logo_uri, x.origin_chain, x.unchained_logo_uri, true, 'token-list',
           ${ALEPHIUM_CHAIN_ID}, $2, $2
         FROM jsonb_to_recordset($1::jsonb) AS x(id text, network_id integer, contract_address text, name text,
           symbol text, symbol_onchain text, name_onchain text, decimals integer, dapp text, description text,
           logo_uri text, origin_chain text, unchained_logo_uri text)
         ON CONFLICT (id) DO UPDATE SET
           ${cols.map((c) => `${c} = ${listed[c as keyof typeof listed]}`).join(",\n           ")},
           updated_at = EXCLUDED.updated_at
         WHERE (${cols.map((c) => `t.${c}`).join(", ")}) IS DISTINCT FROM
               (${cols.map((c) => listed[c as keyof typeof listed]).join(", ")})
         RETURNING t.id`,
        [JSON.stringify(rows), now()],
      );
      return result.length;
    },

    async upsertBridgedRows(rows) {
      if (rows.length === 0) return 0;
      const result = await pg.query<{ id: string }>(
        "bridged_upsert",
        `INSERT INTO bridged_tokens AS b (native_token_id, chain_id, contract_address, mapping_kind,
           origin_wormhole_chain_id, origin_token_id_hex, alephium_contract_id_hex, external_asset_id,
           origin_evm_contract_address, wormhole_pool_decimals, origin_wormhole_chain_name, origin_token_explorer_url)
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(native_token_id text, chain_id integer,
           contract_address text, mapping_kind text, origin_wormhole_chain_id integer, origin_token_id_hex text,
           alephium_contract_id_hex text, external_asset_id text, origin_evm_contract_address text,
           wormhole_pool_decimals integer, origin_wormhole_chain_name text, origin_token_explorer_url text)
         ON CONFLICT (native_token_id, chain_id, contract_address, mapping_kind) DO UPDATE SET
           origin_wormhole_chain_id = EXCLUDED.origin_wormhole_chain_id,
           origin_token_id_hex = EXCLUDED.origin_token_id_hex,
           alephium_contract_id_hex = EXCLUDED.alephium_contract_id_hex,
           external_asset_id = EXCLUDED.external_asset_id,
           origin_evm_contract_address = EXCLUDED.origin_evm_contract_address,
           wormhole_pool_decimals = EXCLUDED.wormhole_pool_decimals,
           origin_wormhole_chain_name = EXCLUDED.origin_wormhole_chain_name,
           origin_token_explorer_url = EXCLUDED.origin_token_explorer_url
         WHERE (b.origin_wormhole_chain_id, b.origin_token_id_hex, b.alephium_contract_id_hex,
                b.external_asset_id, b.origin_evm_contract_address, b.wormhole_pool_decimals,
                b.origin_wormhole_chain_name, b.origin_token_explorer_url)
           IS DISTINCT FROM (EXCLUDED.origin_wormhole_chain_id, EXCLUDED.origin_token_id_hex,
                EXCLUDED.alephium_contract_id_hex, EXCLUDED.external_asset_id, EXCLUDED.origin_evm_contract_address,
                EXCLUDED.wormhole_pool_decimals, EXCLUDED.origin_wormhole_chain_name, EXCLUDED.origin_token_explorer_url)
         RETURNING b.id`,
        [JSON.stringify(rows)],
      );
      return result.length;
    },

    async seedTokenCategories(links) {
      if (links.length === 0) return 0;
      const result = await pg.query<{ token_id: string }>(
        "token_categories_seed",
        `INSERT INTO token_categories (token_id, category_id, position)
         SELECT x.token_id, x.category_id,
           (COALESCE((SELECT max(position) + 1 FROM token_categories e WHERE e.token_id = x.token_id), 0)
             + row_number() OVER (PARTITION BY x.token_id ORDER BY x.category_id) - 1)::smallint
         FROM jsonb_to_recordset($1::jsonb) AS x(token_id text, category_id text)
         JOIN tokens t ON t.id = x.token_id AND NOT 'categories' = ANY(t.admin_edited_fields)
         WHERE NOT EXISTS (SELECT 1 FROM token_categories e WHERE e.token_id = x.token_id AND e.category_id = x.category_id)
           AND (SELECT count(*) FROM token_categories e WHERE e.token_id = x.token_id) < 3
         ON CONFLICT DO NOTHING
         RETURNING token_id`,
        [JSON.stringify(links.map((l) => ({ token_id: l.tokenId, category_id: l.categoryId })))],
      );
      return result.length;
    },

    async countTokens() {
      const rows = await pg.query<{ n: number }>("tokens_total", "SELECT count(*)::int AS n FROM tokens");
      return Number(rows[0]?.n ?? 0);
    },
  };
}
