/**
 * Token market figures and TVL from their inputs; pure, so the rules are unit-tested apart from I/O.
 *
 * USD price of a token (`price_usd`):
 * 1. USDT and USDC (tokens of those symbols) are taken as 1 USD.
 * 2. A route is an enabled watched pair of an enabled source whose base is the token, with a spot price
 *    (newest trade or oracle value) no older than FIGURES_MAX_PRICE_AGE_MS, quoted either in USD (an oracle's
 *    `X/USD`, an exchange's `USD`/`USDT`/`USDC` quote, a pool against USDT or USDC) or in ALPH (then
 *    times ALPH's USD price, found first by the same rule from its USD routes).
 * 3. The best route is the one with the largest 24 h volume in USD (base volume of its 1h candles ×
 *    its USD price); on a tie (oracles have no volume) a USD route before an ALPH one, then the newest
 *    spot, then the lowest pair id.
 *
 * Supplies, in the token's smallest unit: burned = Furnace burns + transfers to burn addresses; locked =
 * outputs whose lock time is still ahead; circulating = maxSupply - burned - locked; circulatingSupplyUsd =
 * circulating / 10^decimals × price_usd. A bridged token's maxSupply is what left its bridge pool (the pool's
 * issuance minus what it still holds, {@link bridgedOut}). A figure that could not exist is refused, never
 * published: it is null with a reason in the token's notes ({@link tokenFigures}).
 *
 * TVL of a pool with `includeInTVL`: reserve × price_usd of each leg with a price; when only one leg has a
 * price the other is valued the same (a constant-product pool holds equal values of both). A token's TVL
 * is the sum of its legs' values over those pools, a dapp's the sum of its pools' values.
 */
import { ALPH_TOKEN_ID } from "../chain/types.ts";
import { shiftToNumber } from "../prices/decimal.ts";

export const USD_QUOTES: ReadonlySet<string> = new Set(["USD", "USDT", "USDC"]);
export const STABLE_SYMBOLS: ReadonlySet<string> = new Set(["USDT", "USDC"]);

/** A watched pair with its spot price and 24 h volume (decimals applied). */
export interface PriceRoute {
  pair_id: number;
  token_id: string;
  quote_token_id: string | null;
  denomination: string;
  /** Quote per base, whole units. */
  price: number;
  spot_ts: number;
  /** Base volume over the last 24 h, whole tokens. */
  volume_24h: number;
}

export interface UsdPrice {
  price: number;
  /** The pair it came from; null for a stablecoin taken as 1 USD. */
  pair_id: number | null;
}

interface Ranked {
  route: PriceRoute;
  usd: number;
  viaUsd: boolean;
}

function better(a: Ranked, b: Ranked): boolean {
  const [va, vb] = [a.route.volume_24h * a.usd, b.route.volume_24h * b.usd];
  if (va !== vb) return va > vb;
  if (a.viaUsd !== b.viaUsd) return a.viaUsd;
  if (a.route.spot_ts !== b.route.spot_ts) return a.route.spot_ts > b.route.spot_ts;
  return a.route.pair_id < b.route.pair_id;
}

/** USD prices of every token a route or the stablecoin rule prices. */
export function resolveUsdPrices(
  routes: readonly PriceRoute[],
  stableTokenIds: ReadonlySet<string>,
  options: { now: number; maxAgeMs: number },
): Map<string, UsdPrice> {
  const out = new Map<string, UsdPrice>();
  for (const id of stableTokenIds) out.set(id, { price: 1, pair_id: null });
  const fresh = routes.filter(
    (r) =>
      r.spot_ts >= options.now - options.maxAgeMs &&
      Number.isFinite(r.price) &&
      r.price > 0 &&
      r.token_id !== "",
  );
  const isUsd = (r: PriceRoute) =>
    (r.quote_token_id !== null && stableTokenIds.has(r.quote_token_id)) ||
    (r.quote_token_id === null && USD_QUOTES.has(r.denomination.toUpperCase()));
  const isAlph = (r: PriceRoute) =>
    r.quote_token_id === ALPH_TOKEN_ID ||
    (r.quote_token_id === null && r.denomination.toUpperCase() === "ALPH");
  const pick = (tokenId: string, alphUsd: number | null): UsdPrice | null => {
    let best: Ranked | null = null;
    for (const route of fresh) {
      if (route.token_id !== tokenId) continue;
      let candidate: Ranked | null = null;
      if (isUsd(route)) candidate = { route, usd: route.price, viaUsd: true };
      else if (isAlph(route) && alphUsd !== null && tokenId !== ALPH_TOKEN_ID)
        candidate = { route, usd: route.price * alphUsd, viaUsd: false };
      if (candidate && (!best || better(candidate, best))) best = candidate;
    }
    return best ? { price: best.usd, pair_id: best.route.pair_id } : null;
  };
  const alph = out.get(ALPH_TOKEN_ID) ?? pick(ALPH_TOKEN_ID, null);
  if (alph) out.set(ALPH_TOKEN_ID, alph);
  const tokens = new Set(fresh.map((r) => r.token_id));
  for (const id of tokens) {
    if (out.has(id)) continue;
    const p = pick(id, alph?.price ?? null);
    if (p) out.set(id, p);
  }
  return out;
}

/** What a Wormhole RemoteTokenPool issues to itself when it is created: the whole u256 range (`u256Max!()`). */
export const BRIDGE_POOL_ISSUANCE = (1n << 256n) - 1n;

const U256 = /^\d{1,78}$/;

/**
 * What left a bridge pool: its issuance minus what it still holds of its own token (the unissued supply).
 * Null when the holding is not a u256 at most the issuance.
 */
export function bridgedOut(held: string | bigint, issued: bigint = BRIDGE_POOL_ISSUANCE): bigint | null {
  const h = typeof held === "bigint" ? held : U256.test(held) ? BigInt(held) : null;
  if (h === null || h < 0n || h > issued) return null;
  return issued - h;
}

/** The figures a token's notes may name, as the API names them. */
export type FigureName = "circulatingSupply" | "circulatingSupplyUsd" | "priceUsd" | "tvlUsd";

/** Why a figure is null (docs/prices.md, Token market figures and TVL). */
export const UNKNOWN_REASONS = [
  /** maxSupply is unknown (the node gave no total supply yet). */
  "max_supply_unknown",
  /** A bridged token whose maxSupply still holds its pool's unissued supply (the pool's balance is not read yet). */
  "unissued_supply",
  /** burned + locked exceed maxSupply: one of them is wrong, so no difference is published. */
  "supply_inconsistent",
  /** The circulating supply would exceed maxSupply (ALPH: its supply sources refused it above the maximum or total). */
  "exceeds_max_supply",
  /** ALPH's supply sources gave no circulating figure (the explorer backend not read yet). */
  "supply_source_unavailable",
  /** No fresh price route prices the token. */
  "no_price",
  /** The token's decimals are unknown. */
  "decimals_unknown",
  /** circulatingSupplyUsd without a circulating supply. */
  "circulating_supply_unknown",
  /** The USD value would exceed maxSupply × priceUsd, or is not a finite number. */
  "exceeds_max_supply_value",
  /** No pool counted in TVL holds the token. */
  "not_in_tvl_pools",
] as const;
export type UnknownReason = (typeof UNKNOWN_REASONS)[number];

/** Each null figure of a token with why it is null. */
export type FigureNotes = Partial<Record<FigureName, UnknownReason>>;

export interface TokenFiguresInput {
  max_supply: string | null;
  decimals: number | null;
  burned: bigint;
  locked: bigint;
  /** Issued by a bridge pool (a Wormhole RemoteTokenPool): maxSupply at the pool's issuance counts what it holds. */
  bridge_pool?: boolean;
  /** A circulating supply from elsewhere (ALPH's supply sources), replacing maxSupply - burned - locked. */
  circulating?: { value: string | null; refused?: string };
  price_usd: number | null;
  tvl_usd: number | null;
}

export interface TokenFigures {
  burned_supply: string;
  lock_supply: string;
  circulating_supply: string | null;
  circulating_supply_usd: number | null;
  notes: FigureNotes;
}

/**
 * A token's supply figures and their USD value from their inputs, each refused (null, with its reason in
 * `notes`) when it could not exist: a circulating supply above maxSupply or from burned + locked above it, a
 * bridged token's supply that still counts its pool's unissued tokens, a USD value above maxSupply × price.
 */
export function tokenFigures(t: TokenFiguresInput): TokenFigures {
  const notes: FigureNotes = {};
  const max = t.max_supply !== null && U256.test(t.max_supply) ? BigInt(t.max_supply) : null;
  let circulating: bigint | null = null;
  if (t.circulating) {
    const v = t.circulating.value;
    if (v !== null && U256.test(v)) circulating = BigInt(v);
    else notes.circulatingSupply = t.circulating.refused ? "exceeds_max_supply" : "supply_source_unavailable";
  } else if (max === null) notes.circulatingSupply = "max_supply_unknown";
  else if (t.bridge_pool && max >= BRIDGE_POOL_ISSUANCE) notes.circulatingSupply = "unissued_supply";
  else if (t.burned + t.locked > max) notes.circulatingSupply = "supply_inconsistent";
  else circulating = max - t.burned - t.locked;
  if (circulating !== null && max !== null && circulating > max) {
    circulating = null;
    notes.circulatingSupply = "exceeds_max_supply";
  }
  let usd: number | null = null;
  if (circulating === null) notes.circulatingSupplyUsd = "circulating_supply_unknown";
  else if (t.price_usd === null) notes.circulatingSupplyUsd = "no_price";
  else if (t.decimals === null) notes.circulatingSupplyUsd = "decimals_unknown";
  else {
    usd = usdValue(circulating, t.decimals, t.price_usd);
    const ceiling = max === null ? null : usdValue(max, t.decimals, t.price_usd);
    // The ceiling is the same float computation on a larger amount: no tolerance is needed.
    if (usd === null || !Number.isFinite(usd) || (ceiling !== null && usd > ceiling)) {
      usd = null;
      notes.circulatingSupplyUsd = "exceeds_max_supply_value";
    }
  }
  if (t.price_usd === null) notes.priceUsd = "no_price";
  if (t.tvl_usd === null) notes.tvlUsd = "not_in_tvl_pools";
  return {
    burned_supply: t.burned.toString(),
    lock_supply: t.locked.toString(),
    circulating_supply: circulating === null ? null : circulating.toString(),
    circulating_supply_usd: usd,
    notes,
  };
}

/** `amount / 10^decimals × price`, or null when any is unknown. */
export function usdValue(
  amount: string | bigint | null,
  decimals: number | null,
  price: number | null,
): number | null {
  if (amount === null || decimals === null || price === null) return null;
  return shiftToNumber(amount.toString(), -decimals) * price;
}

/** A pool counted in TVL, with its reserves in smallest units. */
export interface TvlPool {
  pool: string;
  dapp_id: string | null;
  legs: { token_id: string; reserve: bigint }[];
}

export interface Tvl {
  pools: Map<string, number>;
  tokens: Map<string, number>;
  dapps: Map<string, number>;
}

export function computeTvl(
  pools: readonly TvlPool[],
  price: (tokenId: string) => number | null,
  decimals: (tokenId: string) => number | null,
): Tvl {
  const out: Tvl = { pools: new Map(), tokens: new Map(), dapps: new Map() };
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  for (const p of pools) {
    const values = p.legs.map((l) =>
      usdValue(l.reserve > 0n ? l.reserve : 0n, decimals(l.token_id), price(l.token_id)),
    );
    const known = values.filter((v): v is number => v !== null);
    if (known.length === 0) continue;
    // Only one leg priced: a constant-product pool holds the same value on both sides.
    const fill = known.length < values.length ? known.reduce((a, b) => a + b, 0) / known.length : 0;
    const legValues = values.map((v) => v ?? fill);
    const total = legValues.reduce((a, b) => a + b, 0);
    out.pools.set(p.pool, total);
    for (const [i, l] of p.legs.entries()) add(out.tokens, l.token_id, legValues[i] ?? 0);
    if (p.dapp_id) add(out.dapps, p.dapp_id, total);
  }
  return out;
}
