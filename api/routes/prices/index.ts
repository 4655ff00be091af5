/**
 * Price group: sources, their available and configured (watched) pairs with token legs, spot prices and
 * OHLCV candles of a pair, and the pairs of a token. The registry is Postgres (lib/prices/pairs.ts);
 * candles and spot are ClickHouse (lib/prices/reader.ts).
 */
import { binToHex, contractIdFromAddress, isContractAddress, isValidAddress } from "@alephium/web3";
import { Type } from "@sinclair/typebox";
import type { CsvColumn } from "../../../lib/csv.ts";
import { badRequest, notFound } from "../../../lib/errors.ts";
import type { ConfiguredPair, LegInput, LegUpdate, PricedPair } from "../../../lib/prices/pairs.ts";
import type { ScalesMeta } from "../../../lib/prices/reader.ts";
import { SCALES } from "../../../lib/prices/scales.ts";
import { CSV_NOTE, jsonOrCsv, responseFormat, sendCsv, urlWith, varyOnAccept } from "../../csv.ts";
import { requireDb } from "../../require-db.ts";
import { NoBody, Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { TokenIdParam } from "../tokens/schemas.ts";
import {
  AddLegBody,
  AddPairBody,
  AvailablePairSchema,
  CandleSchema,
  ConfiguredPairSchema,
  DeleteLegBody,
  OhlcvQuery,
  PairParams,
  PriceSourceSchema,
  SourcePairParams,
  SourceParams,
  SpotQuery,
  TokenMappingSchema,
  TokenPairSchema,
  TokenPairsQuery,
  UpdateLegBody,
  UpdatePairBody,
} from "./schemas.ts";

const NotFound = Type.Ref("Problem");

interface CandleRow {
  pair_id: number;
  pair: string;
  source: string;
  denomination: string;
  scale: string;
  t: number;
  o: number;
  h: number;
  l: number;
  c: number;
  v: number;
}
/** CSV columns of OHLCV: the response's pair fields on every row, then the candle's (with `t_iso`). */
const CANDLE_CSV_COLUMNS: CsvColumn<CandleRow>[] = [
  { name: "pair_id", kind: "number" },
  { name: "pair", kind: "text" },
  { name: "source", kind: "text" },
  { name: "denomination", kind: "text" },
  { name: "scale", kind: "text" },
  { name: "t", kind: "number" },
  { name: "t_iso", kind: "iso", get: (r) => r.t },
  ...(["o", "h", "l", "c", "v"] as const).map((name) => ({ name, kind: "number" as const })),
];
const OkId = Type.Object({ ok: Type.Boolean(), id: Type.Integer() });
const OkDeleted = Type.Object({
  ok: Type.Boolean(),
  deleted: Type.Integer({ description: "Rows deleted (1)." }),
});

const ERRORS_NOTE =
  "Errors are `application/problem+json` (the shared `Problem` body): 400 names the refused field in `detail` " +
  "(and in `errors` for schema failures), 404 names the missing source, pair or mapping.";

const PAIR_NOTE =
  "`pair` is the pair's `pair_label` (`BASE/QUOTE` symbols), `source` its source id, `denomination` what the " +
  "price is expressed in.";

/** Hex token id of a path `tokenid` (64 hex, or the token's base58 contract address); 400 otherwise. */
function tokenIdOf(tokenid: string): string {
  if (/^[0-9a-fA-F]{64}$/.test(tokenid)) return tokenid.toLowerCase();
  let contract = false;
  try {
    contract = isValidAddress(tokenid) && isContractAddress(tokenid);
  } catch {
    contract = false;
  }
  if (!contract) {
    throw badRequest(`tokenid ${tokenid} is neither a 64-hex token id nor a contract address`, {
      field: "tokenid",
    });
  }
  return binToHex(contractIdFromAddress(tokenid));
}

export async function priceRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(PriceSourceSchema);
  app.addSchema(TokenMappingSchema);
  app.addSchema(ConfiguredPairSchema);
  app.addSchema(AvailablePairSchema);
  app.addSchema(CandleSchema);

  const prices = () => need("prices");

  /** Scales meta of pairs by market (ClickHouse); {} for a pair without candles. */
  const scalesOf = async (markets: string[]): Promise<Map<string, ScalesMeta>> =>
    deps.priceReads ? deps.priceReads.scalesMeta(markets) : new Map();

  const withScales = async (pairs: ConfiguredPair[]) => {
    const meta = await scalesOf(pairs.map((p) => p.market));
    return pairs.map(({ market, ...p }) => ({ ...p, scales_meta: meta.get(market) ?? {} }));
  };

  const pricedPair = async (pairId: number): Promise<PricedPair> => {
    const pair = await prices().getPricedPair(pairId);
    if (!pair) throw notFound(`Pair ${pairId} not found`, { pairid: pairId });
    return pair;
  };

  app.get(
    "/price/source/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "List price sources with their available and watched pair counts",
        description: "Every source, enabled or not, by id.",
        response: { 200: Type.Object({ sources: Type.Array(Type.Ref("PriceSource")) }) },
      },
    },
    async () => ({ sources: await prices().listSources() }),
  );

  app.get(
    "/price/source/:srcid/pair/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Configured (watched) pairs of a source, with their token legs and candle scales",
        description: `Pairs by id. \`scales_meta\` gives, per scale, the first and last candle times. ${ERRORS_NOTE}`,
        params: SourceParams,
        response: {
          200: Type.Object({ source_id: Type.String(), pairs: Type.Array(Type.Ref("ConfiguredPair")) }),
          404: NotFound,
        },
      },
    },
    async (request) => {
      const { srcid } = request.params;
      return { source_id: srcid, pairs: await withScales(await prices().listPairs(srcid)) };
    },
  );

  app.get(
    "/price/source/:srcid/pair/available",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Pairs a source offers (an on-chain DEX: its discovered pools)",
        description:
          "For an `onchain_dex` source: the pools of its dapp the indexer discovered, by pool number (`id`), with " +
          "`pair_symbol` = the pool address. Other sources: their list of markets or feeds. An unknown source " +
          `answers 404. ${ERRORS_NOTE}`,
        params: SourceParams,
        response: {
          200: Type.Object({ source_id: Type.String(), available: Type.Array(Type.Ref("AvailableCexPair")) }),
          404: NotFound,
        },
      },
    },
    async (request) => {
      const { srcid } = request.params;
      return { source_id: srcid, available: await prices().listAvailable(srcid) };
    },
  );

  app.post(
    "/price/source/:srcid/pair/add",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Watch a pair of a source (idempotent)",
        description: [
          "Give `pair_symbol` or `pair_id` (400 naming both when neither is given).",
          "**List flow** (CEX, oracle, API, aggregator sources, and `pair_id` on any source): the pair must be in",
          "the source's available list, else 404; `token_id` defaults to the registry token of the listed base",
          "symbol when exactly one token has it.",
          "**On-chain DEX by pool** (`onchain_dex`): `pair_symbol` is the pool's base58 contract address (400",
          "`invalid pool address` otherwise) and `token_id` (64 hex) is required; when the indexer knows the pool,",
          "`token_id` must be one of its two tokens (the other is the quote) and the pool must be of the source's",
          "dapp. The pool need not be in the available list; an unknown pool's quote shows as `?` until re-added.",
          "By `pair_id` (a pool number of the available list) `token_id` defaults to the listed base.",
          "**EVM DEX by pool** (`uniswap`, `pancakeswap`): `pair_symbol` is `0x` + 40 hex (stored lower-case) and",
          "`token_id` is required.",
          "`chain_id` (default 8738) must name a known chain; on-chain sources take 8738 only.",
          "**Idempotent:** adding a pair symbol the source already watches answers 200 with the existing `id` and",
          "`created: false`, and changes nothing (use pair/update or pair/del).",
          "A new pair of an on-chain source (`onchain_dex`, `oracle`) is rebuilt from the stored events (trades,",
          "candles, spot) by the candles processor, the one writer of candles, within seconds of its next batch;",
          "its candles appear when that ends.",
          ERRORS_NOTE,
        ].join(" "),
        params: SourceParams,
        body: AddPairBody,
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            id: Type.Integer(),
            pair_symbol: Type.String({ description: "As stored (EVM pool addresses lower-cased)." }),
            created: Type.Boolean({ description: "False when the pair was already watched." }),
          }),
          404: NotFound,
        },
      },
    },
    async (request) => {
      const result = await prices().addPair(request.params.srcid, request.body);
      return { ok: true, id: result.id, pair_symbol: result.pair_symbol, created: result.created };
    },
  );

  app.post(
    "/price/source/:srcid/pair/:pairid/update",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Change a pair's flags (enabled, available, enable_trades, includeInTVL)",
        description:
          "Only `enabled`, `available`, `enable_trades` and `includeInTVL` (alias `include_in_tvl`) may be " +
          "given, all boolean; any other field answers 400 naming it, an empty or absent body 400 `No fields to " +
          `update\`. A pair of another source answers 404. ${ERRORS_NOTE}`,
        params: SourcePairParams,
        body: UpdatePairBody,
        response: { 200: OkId, 404: NotFound },
      },
    },
    async (request) => {
      const body = (request.body ?? {}) as {
        enabled?: boolean;
        available?: boolean;
        enable_trades?: boolean;
        includeInTVL?: boolean;
      };
      const { id } = await prices().updatePair(request.params.srcid, request.params.pairid, {
        enabled: body.enabled,
        available: body.available,
        enable_trades: body.enable_trades,
        include_in_tvl: body.includeInTVL,
      });
      return { ok: true, id };
    },
  );

  app.post(
    "/price/source/:srcid/pair/:pairid/del",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Stop watching a pair (watched → removed)",
        description:
          "Deletes the pair row and its token legs. Its candles stay in ClickHouse and are rebuilt if the pair " +
          `is added again. ${ERRORS_NOTE}`,
        params: SourcePairParams,
        body: NoBody,
        response: { 200: OkDeleted, 404: NotFound },
      },
    },
    async (request) => ({
      ok: true,
      deleted: await prices().deletePair(request.params.srcid, request.params.pairid),
    }),
  );

  app.get(
    "/price/source/:srcid/pair/:pairid/token/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Token legs of a pair",
        description: `Legs by id. ${ERRORS_NOTE}`,
        params: SourcePairParams,
        response: {
          200: Type.Object({
            source_id: Type.String(),
            pair_id: Type.Integer(),
            pair_symbol: Type.String(),
            tokens: Type.Array(Type.Ref("TokenMapping")),
          }),
          404: NotFound,
        },
      },
    },
    async (request) => prices().listLegs(request.params.srcid, request.params.pairid),
  );

  app.post(
    "/price/source/:srcid/pair/:pairid/token/add",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Add a token leg to a pair",
        description: `\`type\`, \`chain\` and \`token_id\` are required. ${ERRORS_NOTE}`,
        params: SourcePairParams,
        body: AddLegBody,
        response: { 200: OkId, 404: NotFound },
      },
    },
    async (request) => {
      // Nullable fields type as unknown through the type provider; the schema guarantees LegInput.
      const body = request.body as LegInput;
      const { id } = await prices().addLeg(request.params.srcid, request.params.pairid, body);
      return { ok: true, id };
    },
  );

  app.post(
    "/price/source/:srcid/pair/:pairid/token/update",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Change a token leg of a pair",
        description:
          "`id` names the mapping; the other given fields are set (`dapp` and `token_contract` may be null to " +
          "clear them). No field besides `id`: 400. A mapping of another pair answers 404. " +
          ERRORS_NOTE,
        params: SourcePairParams,
        body: UpdateLegBody,
        response: { 200: OkId, 404: NotFound },
      },
    },
    async (request) => {
      const { id: legId, ...update } = request.body as LegUpdate & { id: number };
      const { id } = await prices().updateLeg(request.params.srcid, request.params.pairid, legId, update);
      return { ok: true, id };
    },
  );

  app.post(
    "/price/source/:srcid/pair/:pairid/token/del",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Delete a token leg of a pair",
        description: `A mapping of another pair answers 404. ${ERRORS_NOTE}`,
        params: SourcePairParams,
        body: DeleteLegBody,
        response: { 200: OkDeleted, 404: NotFound },
      },
    },
    async (request) => ({
      ok: true,
      deleted: await prices().deleteLeg(request.params.srcid, request.params.pairid, request.body.id),
    }),
  );

  app.get(
    "/price/pair/:pairid/spot",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Spot price of a pair (latest, at a time, or averaged over a window)",
        description: [
          "Without `timestamp` and `averageWindow`: the newest trade or oracle value (`from_spot_table` true;",
          "`scale` is not used). With `timestamp` only: the close of the last `scale` candle starting at or before",
          "it. With `averageWindow`: the mean close of the `scale` candles overlapping the window that ends at",
          "`timestamp` (or now); a window shorter than `scale` answers 400. `timestamp` is then the time the price",
          "is for (the trade, the candle's start, or the window's end) and `updated_at` the time of its data (the",
          "trade, or the end of the candle or window). No data: `price`, `timestamp` and `updated_at` are null.",
          PAIR_NOTE,
          ERRORS_NOTE,
        ].join(" "),
        params: PairParams,
        querystring: SpotQuery,
        response: {
          200: Type.Object({
            pair_id: Type.Integer(),
            pair: Type.String({ description: "The pair's pair_label." }),
            source: Type.String({ description: "Source id." }),
            denomination: Type.String(),
            token_id: Nullable(Type.String()),
            price: Nullable(Type.Number()),
            timestamp: Nullable(Type.Number({ description: "Unix ms." })),
            updated_at: Nullable(Type.String({ format: "date-time" })),
            from_spot_table: Type.Boolean({
              description: "True for the latest trade or value; false for a price from candles.",
            }),
          }),
          404: NotFound,
        },
      },
    },
    async (request) => {
      const pair = await pricedPair(request.params.pairid);
      const q = request.query;
      const spot = await need("priceReads").spot(pair, {
        timestamp: q.timestamp,
        averageWindow: q.averageWindow,
        scale: q.scale,
      });
      return {
        pair_id: pair.id,
        pair: pair.pair_label,
        source: pair.source_id,
        denomination: pair.denomination,
        token_id: pair.token_id,
        ...spot,
      };
    },
  );

  app.get(
    "/price/pair/:pairid/ohlcv",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "OHLCV candles of a pair, latest first",
        description: [
          "Page mode (no `start`/`end`): `page` 0 is the latest `pageSize` candles, page 1 the ones before, and so",
          "on. Range mode (`start` and/or `end` given): candles starting in [start, end], at most `limit`, the latest",
          "first; `page` and `pageSize` are then not used (nor `limit` in page mode). `end` before `start`: 400.",
          "No candles: `ohlcv` is [].",
          "An identical request is answered from the last read for `OHLCV_CACHE_MS` (1 s), then for `OHLCV_STALE_MS`",
          "(5 s) more while one new read runs: the newest candle may lag the trades by that much.",
          PAIR_NOTE,
          ERRORS_NOTE,
          CSV_NOTE,
          "In CSV, one row per candle, latest first as in `ohlcv`, each carrying the pair's `pair_id`, `pair`,",
          "`source`, `denomination` and `scale`. When the page is full, the older page is in `X-Next-Cursor` and",
          '`Link: <url>; rel="next"`: page mode, the next `page`; range mode, the `end` just before the oldest `t`',
          "(the JSON's pages are the same requests).",
        ].join(" "),
        params: PairParams,
        querystring: OhlcvQuery,
        response: {
          200: jsonOrCsv(
            Type.Object({
              pair_id: Type.Integer(),
              pair: Type.String({ description: "The pair's pair_label." }),
              source: Type.String({ description: "Source id." }),
              denomination: Type.String(),
              scale: Type.String(),
              ohlcv: Type.Array(Type.Ref("Candle")),
            }),
            CANDLE_CSV_COLUMNS.map((c) => c.name).join(", "),
            "The candles, as JSON or CSV.",
          ),
          404: NotFound,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const range = q.start !== undefined || q.end !== undefined;
      if (q.start !== undefined && q.end !== undefined && q.end < q.start) {
        throw badRequest(`end (${q.end}) is before start (${q.start})`, { field: "end" });
      }
      const pair = await pricedPair(request.params.pairid);
      const window = range
        ? { start: q.start, end: q.end, limit: q.limit }
        : { page: q.page, pageSize: q.pageSize };
      const ohlcv = await need("priceReads").candles(pair, q.scale, window);
      const head = {
        pair_id: pair.id,
        pair: pair.pair_label,
        source: pair.source_id,
        denomination: pair.denomination,
        scale: q.scale,
      };
      varyOnAccept(reply);
      if (responseFormat(request) === "csv") {
        const oldest = ohlcv.at(-1)?.t;
        const next = range
          ? ohlcv.length === q.limit && oldest !== undefined && oldest - 1 >= (q.start ?? 0)
            ? { param: "end", cursor: String(oldest - 1) }
            : null
          : ohlcv.length === q.pageSize
            ? { param: "page", cursor: String(q.page + 1) }
            : null;
        return sendCsv(reply, {
          columns: CANDLE_CSV_COLUMNS,
          rows: ohlcv.map((candle) => ({ ...head, ...candle })),
          filename: `ohlcv-${pair.id}-${q.scale}.csv`,
          next: next && { cursor: next.cursor, url: urlWith(request, next.param, next.cursor) },
        });
      }
      return { ...head, ohlcv };
    },
  );

  app.get(
    "/token/:tokenid/pairs",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Price"],
        summary: "Configured pairs of a token, with the scales their candles cover",
        description:
          "Pairs whose token_id, or one of whose token legs, is the token (a 64-hex id or its base58 contract " +
          "address; anything else answers 400 naming tokenid); `chain` keeps the pairs on that chain. `chain` " +
          "echoes the query (null when not given). `scales` lists, per scale with candles, the first and last " +
          `candle times, also as date-times. ${ERRORS_NOTE}`,
        params: Type.Object({ tokenid: TokenIdParam }),
        querystring: TokenPairsQuery,
        response: {
          200: Type.Object({
            token_id: Type.String(),
            chain: Nullable(Type.String()),
            pairs: Type.Array(TokenPairSchema),
          }),
        },
      },
    },
    async (request) => {
      const tokenId = tokenIdOf(request.params.tokenid);
      const chain = request.query.chain;
      const pairs = await prices().tokenPairs(tokenId, chain);
      const meta = await scalesOf(pairs.map((p) => p.market));
      return {
        token_id: tokenId,
        chain: chain ?? null,
        pairs: pairs.map(({ market, chain: _chain, ...p }) => {
          const m = meta.get(market) ?? {};
          const scales = SCALES.flatMap((scale) => {
            const span = m[scale];
            return span
              ? [
                  {
                    scale,
                    first_ts: span.first_ts,
                    last_ts: span.last_ts,
                    date_range: {
                      from: new Date(span.first_ts).toISOString(),
                      to: new Date(span.last_ts).toISOString(),
                    },
                  },
                ]
              : [];
          });
          return { ...p, available_scales: scales.map((s) => s.scale), scales };
        }),
      };
    },
  );
}
