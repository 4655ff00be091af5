/** Schemas of the Price group: sources, configured pairs, token legs, available pairs, candles, spot. */

import { Type } from "@sinclair/typebox";
import { LEG_TYPES, SOURCE_KINDS } from "../../../lib/prices/pairs.ts";
import { AVERAGE_WINDOWS } from "../../../lib/prices/reader.ts";
import { DEFAULT_SCALE, SCALES } from "../../../lib/prices/scales.ts";
import { FormatQuery } from "../../csv.ts";
import { AliasOf, INT32_MAX, Nullable, StringEnum } from "../../schemas.ts";

/**
 * Largest time a request may carry, in Unix ms: 8.64e15 is the last instant a JavaScript Date holds
 * (year 275760). Times in ms do not fit the int32 bound other integers get.
 */
export const MAX_TIME_MS = 8_640_000_000_000_000;

const TimeMs = (description: string) => Type.Integer({ minimum: 0, maximum: MAX_TIME_MS, description });

export const SourceIdParam = Type.String({
  pattern: "^[a-z0-9][a-z0-9_-]{0,63}$",
  description: "Price source id (for example `ayin`, `elexium`, `dia`).",
});
export const PairIdParam = Type.Integer({
  minimum: 1,
  maximum: INT32_MAX,
  description: "Configured pair id.",
});

export const SourceParams = Type.Object({ srcid: SourceIdParam });
export const SourcePairParams = Type.Object({ srcid: SourceIdParam, pairid: PairIdParam });
export const PairParams = Type.Object({ pairid: PairIdParam });

export const PriceSourceSchema = Type.Object(
  {
    id: Type.String(),
    label: Type.String(),
    kind: StringEnum(SOURCE_KINDS, {
      description:
        "How the source's facts are obtained: `onchain_dex` (Alephium pools decoded by the indexer), `oracle` " +
        "(on-chain oracle values), or an external source (`cex`, `uniswap`, `pancakeswap`, `api`, `aggregator`).",
    }),
    supportsSpot: Type.Boolean(),
    supportsCandles: Type.Boolean(),
    supportsTrades: Type.Boolean(),
    supportedDenominations: Type.Array(Type.String()),
    enabled: Type.Boolean(),
    availableCount: Type.Integer({
      description:
        "Pairs available from the source: the pools of its dapp the indexer discovered (`onchain_dex`), else " +
        "the rows of its available list.",
    }),
    watchedCount: Type.Integer({ description: "Configured (watched) pairs of the source." }),
  },
  { $id: "PriceSource", title: "PriceSource" },
);

export const TokenMappingSchema = Type.Object(
  {
    id: Type.Integer({ description: "Mapping row id (body `id` of token/update and token/del)." }),
    token_price_source_id: Type.Integer({ description: "Id of the configured pair the leg belongs to." }),
    type: StringEnum(LEG_TYPES),
    dapp: Nullable(Type.String()),
    chain: Type.String(),
    token_id: Type.String(),
    token_contract: Nullable(Type.String()),
    in_consolidated_market: Type.Boolean(),
  },
  { $id: "TokenMapping", title: "TokenMapping" },
);

const ScaleSpan = Type.Object({
  first_ts: Type.Number({ description: "Start (ms) of the first candle of the scale." }),
  last_ts: Type.Number({ description: "Start (ms) of the last candle of the scale." }),
});

export const ScalesMetaSchema = Type.Object(
  Object.fromEntries(SCALES.map((scale) => [scale, Type.Optional(ScaleSpan)])),
  {
    description:
      "Key = candle scale; value = the first and last candle times (ms). Scales without candles are absent; " +
      "{} when the pair has none yet.",
  },
);

export const ConfiguredPairSchema = Type.Object(
  {
    id: Type.Integer(),
    source_id: Type.String(),
    pair_symbol: Type.String({
      description:
        "The pool's contract address (on-chain DEX, `0x` address for EVM DEXes), the feed key (oracle) or the " +
        "exchange symbol.",
    }),
    pair_label: Type.String({ description: "`BASE/QUOTE` symbols; `?` stands for a side not known yet." }),
    pool_created_at: Nullable(
      Type.String({
        format: "date-time",
        description: "When the indexer saw the pool created; null if unknown.",
      }),
    ),
    tokens: Type.Array(Type.Ref("TokenMapping"), { description: "Token legs, by id." }),
    token_id: Nullable(Type.String({ description: "The priced (base) token; null when no Alephium token." })),
    quote_token_id: Nullable(Type.String({ description: "The token prices are in, when it is a token." })),
    chain: Type.String({ description: "Chain short name (`alph` for Alephium)." }),
    chain_id: Nullable(Type.Integer({ description: "8738 when chain is `alph`." })),
    denomination: Type.String({ description: "What prices are expressed in (quote symbol or asset)." }),
    available: Type.Boolean(),
    enabled: Type.Boolean(),
    enable_trades: Type.Boolean({
      description: "Include in the trade watcher (generates normalized events).",
    }),
    includeInTVL: Type.Boolean({ description: "Include in aggregated TVL." }),
    token_address: Nullable(Type.String({ description: "Base token contract address; null for ALPH." })),
    decimals: Nullable(Type.Integer({ description: "Base decimals (oracle pairs: 0); null = the token's." })),
    quote_decimals: Nullable(
      Type.Integer({ description: "Quote decimals (oracle pairs: the source's value decimals)." }),
    ),
    scales_meta: ScalesMetaSchema,
  },
  { $id: "ConfiguredPair", title: "ConfiguredPair" },
);

export const AvailablePairSchema = Type.Object(
  {
    id: Type.Integer({
      description: "Use as `pair_id` of pair/add (the pool's number for an `onchain_dex` source).",
    }),
    source_id: Type.String(),
    pair_symbol: Type.String({
      description: "Market symbol, feed key, or the pool address (`onchain_dex`).",
    }),
    base_asset: Type.String({
      description:
        "Base symbol. Pools: the non-ALPH token when one leg is ALPH, else token0 (as the indexer orients " +
        "swaps); a token without a registry symbol is shown by its id.",
    }),
    quote_asset: Type.String(),
  },
  { $id: "AvailableCexPair", title: "AvailableCexPair" },
);

export const CandleSchema = Type.Object(
  {
    t: Type.Number({ description: "Candle (bucket) start, Unix ms." }),
    o: Type.Number(),
    h: Type.Number(),
    l: Type.Number(),
    c: Type.Number(),
    v: Type.Number({ description: "Volume of the base token, in whole tokens." }),
  },
  { $id: "Candle", title: "Candle" },
);

const Bool = (description?: string) => Type.Optional(Type.Boolean({ description }));

export const AddPairBody = Type.Object(
  {
    pair_symbol: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          "List flow: a symbol of the source's available list. By pool: the pool's contract address (base58 " +
          "for `onchain_dex`, `0x` + 40 hex for `uniswap`/`pancakeswap`), which need not be listed.",
      }),
    ),
    pair_id: Type.Optional(
      Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "`id` of an available pair (list flow)." }),
    ),
    token_id: Type.Optional(
      Type.String({
        pattern: "^[0-9a-fA-F]{64}$",
        description:
          "The priced token (64 hex). Required when adding a pool by address; for an Alephium pool it must be " +
          "one of the pool's two tokens when the pool is known. List flow: defaults to the listed base.",
      }),
    ),
    chain_id: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: INT32_MAX,
        default: 8738,
        description: "Chain of the priced token (a known chain id; on-chain sources: 8738 only).",
      }),
    ),
  },
  { additionalProperties: false },
);

export const UpdatePairBody = Nullable(
  Type.Object(
    {
      enabled: Bool(),
      available: Bool(),
      enable_trades: Bool("Include in the trade watcher."),
      includeInTVL: Bool("Include in aggregated TVL."),
      include_in_tvl: AliasOf(
        "includeInTVL",
        Type.Boolean(),
        "Same as `includeInTVL` (the alias SPEC.md names); give one of the two.",
      ),
    },
    { additionalProperties: false },
  ),
);

const LegChain = Type.String({ minLength: 1, maxLength: 32, description: "Chain short name, e.g. `alph`." });
const LegTokenId = Type.String({ minLength: 1, maxLength: 128, description: "Token id on that chain." });
const LegNullable = (description: string) =>
  Type.Optional(Nullable(Type.String({ maxLength: 128, description })));

export const AddLegBody = Type.Object(
  {
    type: StringEnum(LEG_TYPES),
    chain: LegChain,
    token_id: LegTokenId,
    dapp: LegNullable("Dapp of the leg (null: none)."),
    token_contract: LegNullable("Token contract address on that chain (null: none)."),
    in_consolidated_market: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

const LegId = Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "Mapping row id." });

export const UpdateLegBody = Type.Object(
  {
    id: LegId,
    type: Type.Optional(StringEnum(LEG_TYPES)),
    chain: Type.Optional(LegChain),
    token_id: Type.Optional(LegTokenId),
    dapp: LegNullable("null clears it."),
    token_contract: LegNullable("null clears it."),
    in_consolidated_market: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const DeleteLegBody = Type.Object({ id: LegId }, { additionalProperties: false });

export const SpotQuery = Type.Object({
  timestamp: Type.Optional(
    TimeMs(
      "Price at this time (Unix ms), from candles of `scale`; alone: the close of the last candle at or before it.",
    ),
  ),
  averageWindow: Type.Optional(
    StringEnum(AVERAGE_WINDOWS, {
      description:
        "Mean close of the `scale` candles overlapping this window, which ends at `timestamp` (or now). Must be " +
        "at least `scale`.",
    }),
  ),
  scale: StringEnum(SCALES, {
    default: DEFAULT_SCALE,
    description: "Candle scale used with `timestamp` or `averageWindow`; ignored without both.",
  }),
});

export const OhlcvQuery = Type.Object({
  scale: StringEnum(SCALES, { default: DEFAULT_SCALE, description: "Candle scale." }),
  page: Type.Integer({
    minimum: 0,
    maximum: INT32_MAX,
    default: 0,
    description: "Page mode: 0 = the latest `pageSize` candles, 1 the ones before, ...",
  }),
  pageSize: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 100,
    description: "Page mode: candles per page.",
  }),
  start: Type.Optional(TimeMs("Range mode: candles starting at or after this time (Unix ms).")),
  end: Type.Optional(
    TimeMs("Range mode: candles starting at or before this time (Unix ms); not before `start`."),
  ),
  limit: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 100,
    description: "Range mode: most candles returned (the latest of the range).",
  }),
  ...FormatQuery,
});

export const TokenPairsQuery = Type.Object({
  chain: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 32,
      description: "Only pairs on this chain (short name, e.g. `alph`).",
    }),
  ),
});

export const TokenPairSchema = Type.Object({
  id: Type.Integer(),
  source_id: Type.String(),
  pair_symbol: Type.String(),
  pair_label: Type.String(),
  available: Type.Boolean(),
  enabled: Type.Boolean(),
  enable_trades: Type.Boolean(),
  includeInTVL: Type.Boolean(),
  available_scales: Type.Array(StringEnum(SCALES), { description: "Scales with candles, shortest first." }),
  scales: Type.Array(
    Type.Object({
      scale: StringEnum(SCALES),
      first_ts: Type.Number({ description: "First candle start (ms)." }),
      last_ts: Type.Number({ description: "Last candle start (ms)." }),
      date_range: Type.Object({
        from: Type.String({ format: "date-time", description: "first_ts as a date-time." }),
        to: Type.String({ format: "date-time", description: "last_ts as a date-time." }),
      }),
    }),
  ),
});
