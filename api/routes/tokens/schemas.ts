/** Schemas of the token registry (Token, TokenListEntry, BridgedRow). */
import { Type } from "@sinclair/typebox";
import { UNKNOWN_REASONS } from "../../../lib/figures/compute.ts";
import { Nullable, StringEnum } from "../../schemas.ts";

/**
 * A nullable request field. `nullable: true` (OpenAPI 3.0) instead of anyOf [T, null]: with the app's
 * type coercion, anyOf would turn null into "" / false / 0, or false into null, before the handler sees it.
 */
/** Kept for the registry routes: the shared `Nullable` (OpenAPI `nullable: true`). */
export const NullableBody = Nullable;

/** A 64-hex token id or a base58 contract address. */
export const TokenIdParam = Type.String({
  pattern: "^([0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{20,60})$",
  description: "Token id (64 hex characters) or the token's base58 contract address.",
});

const S = (description: string) => Nullable(Type.String({ description }));

const Reason = (figure: string) =>
  Type.Optional(StringEnum([...UNKNOWN_REASONS], { description: `Why ${figure} is null.` }));

/** Each null market figure of a token with why it is null (lib/figures/compute.ts `tokenFigures`). */
const UnknownFigures = Type.Object(
  {
    circulatingSupply: Reason("circulatingSupply"),
    circulatingSupplyUsd: Reason("circulatingSupplyUsd"),
    priceUsd: Reason("priceUsd"),
    tvlUsd: Reason("tvlUsd"),
  },
  {
    additionalProperties: false,
    description:
      "The market figures that are null, each with why; a figure that has a value is absent. A figure that could not exist is refused (null, never published): a circulating supply above maxSupply (`exceeds_max_supply`) or from burned + locked above it (`supply_inconsistent`), a bridged token's supply that still counts its bridge pool's unissued tokens (`unissued_supply`: the pool's balance is not read yet), a USD value above maxSupply × priceUsd (`exceeds_max_supply_value`). The other reasons: `max_supply_unknown` (the node gave no total supply yet), `supply_source_unavailable` (ALPH: no circulating figure from its supply sources yet), `no_price` (no fresh watched pair prices the token), `decimals_unknown`, `circulating_supply_unknown` (circulatingSupplyUsd without a circulating supply), `not_in_tvl_pools` (no pool counted in TVL holds it). Written by the figures processor with the figures; {} before its first refresh.",
  },
);

export const TokenSchema = Type.Object(
  {
    id: Type.String({
      description: "Token id (64 hex) = id of the contract that issued it; ALPH is 64 zeros.",
    }),
    contractAddress: Type.String({ description: "Base58 address of the issuing contract." }),
    name: S("Display name (the official list's, or an admin's)."),
    symbol: S("Display symbol."),
    symbolOnChain: S("Symbol stored in the contract, when it differs or is known."),
    decimals: Nullable(Type.Integer()),
    categories: Type.Array(Type.String(), {
      description: "Category ids (at most 3; deleted categories omitted).",
    }),
    dapp: S("Dapp id the token belongs to."),
    logoURI: S("metadata.logoURI when an admin set it, else the list's logo."),
    unchainedLogoURI: S("Logo without the chain badge."),
    description: S("Description from the list."),
    originChain: S("Origin chain of a bridged token (ETH, BSC)."),
    maxSupply: S(
      "Issued amount in the smallest unit (decimal string): the node's getTotalSupply when the indexer discovered the token, or as an admin set it. For a bridged token (Alephium Bridge, issued by its Wormhole RemoteTokenPool): what left the pool, the pool's issuance (the u256 range) minus what it still holds, read by the figures processor from the pool's state, so the pool's unissued balance is not in it.",
    ),
    circulatingSupply: S(
      "maxSupply - burnedSupply - lockSupply in the smallest unit; null when unknown or refused, with the reason in unknownFigures (never above maxSupply). For ALPH: ALPH's circulating supply as GET /token/alph/supply gives it (explorer backend, or computed from the index's total). Kept current by the figures processor (FIGURES_REFRESH_MS).",
    ),
    burnedSupply: S(
      "Burned amount in the smallest unit: Token Furnace burns plus transfers to a burn address (BURN_ADDRESSES), as far as the index reaches back.",
    ),
    lockSupply: S(
      "Amount in outputs whose lock time is still ahead (coinbase and uncle rewards, locked 500 minutes; genesis allocations), in the smallest unit. For ALPH: the explorer backend's locked ALPH (every time-locked output).",
    ),
    createdAt: Type.Number({ description: "Registry creation, Unix ms." }),
    updatedAt: Type.Number({ description: "Registry last update, Unix ms." }),
    minter: S("Deployer / first-transaction address."),
    mintTx: S("Mint (contract creation) transaction hash."),
    mintTime: Nullable(Type.Number({ description: "On-chain mint time, Unix ms." })),
    registered: Type.Boolean({
      description: "True for tokens of the official list or approved by an admin.",
    }),
    source: Type.String({
      description: "`token-list` (official list) or `chain` (discovered by the indexer).",
    }),
    chainId: Type.Integer({ description: "8738 for the indexed Alephium chain." }),
    moderation: StringEnum(["show", "hide"]),
    marketDisplay: Type.Boolean({ description: "Show in market lists." }),
    circulatingSupplyUsd: Nullable(
      Type.Number({
        description:
          "circulatingSupply in whole tokens × priceUsd; null when either is unknown, or refused above maxSupply × priceUsd (the reason in unknownFigures).",
      }),
    ),
    priceUsd: Nullable(
      Type.Number({
        description:
          "USD price from the best watched pair: quoted in USD (oracle X/USD, an exchange's USD/USDT/USDC quote, a pool against USDT or USDC) or in ALPH × ALPH's USD price; the pair with the largest 24 h USD volume wins, then USD before ALPH quotes, the newest price, the lowest pair id. USDT and USDC are 1. Pairs without a price newer than FIGURES_MAX_PRICE_AGE_MS are skipped.",
      }),
    ),
    tvlUsd: Nullable(
      Type.Number({
        description:
          "USD value of this token's reserves in Alephium DEX pools watched with includeInTVL (a leg without a price counts as much as the priced leg of its pool).",
      }),
    ),
    unknownFigures: UnknownFigures,
    website: S("metadata.website."),
    metadata: Type.Object({}, { additionalProperties: true, description: "Full metadata JSON." }),
  },
  { $id: "Token", title: "Token" },
);

export const TokenListEntrySchema = Type.Object(
  {
    id: Type.String(),
    contractAddress: Type.String(),
    name: Nullable(Type.String()),
    symbol: Nullable(Type.String()),
    symbolOnChain: Nullable(Type.String()),
    decimals: Nullable(Type.Integer()),
    logoURI: Nullable(Type.String()),
    categories: Type.Array(Type.String()),
    dapp: Nullable(Type.String()),
    originChain: Nullable(Type.String()),
    registered: Type.Boolean(),
    source: Type.String(),
    chainId: Type.Integer(),
    moderation: StringEnum(["show", "hide"]),
    marketDisplay: Type.Boolean(),
    circulatingSupplyUsd: Nullable(Type.Number()),
    priceUsd: Nullable(Type.Number()),
    tvlUsd: Nullable(Type.Number()),
    unknownFigures: UnknownFigures,
    mintTime: Nullable(Type.Number({ description: "On-chain mint time, Unix ms." })),
  },
  {
    $id: "TokenListEntry",
    title: "TokenListEntry",
    description:
      "A row of GET /token/all: the Token fields a list needs (same meaning as in Token); fetch " +
      "/token/{tokenid}/details for supplies, mint facts, description and metadata.",
  },
);

export const BridgedRowSchema = Type.Object(
  {
    id: Type.String({ description: "Surrogate row id (big integer as string)." }),
    native_token_id: Type.String({ description: "Alephium token id." }),
    chain_id: Type.Integer({ description: "Chain of contract_address (1 Ethereum, 56 BSC, 8738 Alephium)." }),
    contract_address: Type.String({ description: "Token contract on that chain." }),
    mapping_kind: StringEnum(["legacy_ticker_bridge", "wormhole_remote_pool"]),
    origin_wormhole_chain_id: Nullable(
      Type.Integer({ description: "Wormhole chain id (2 Ethereum, 4 BSC)." }),
    ),
    origin_token_id_hex: Nullable(Type.String({ description: "0x hex, left-padded to 32 bytes." })),
    alephium_contract_id_hex: Nullable(Type.String({ description: "0x hex of the RemoteTokenPool id." })),
    external_asset_id: Nullable(Type.String()),
    origin_evm_contract_address: Nullable(Type.String()),
    wormhole_pool_decimals: Nullable(Type.Integer()),
    origin_wormhole_chain_name: Nullable(Type.String()),
    origin_token_explorer_url: Nullable(Type.String()),
  },
  { $id: "BridgedRow", title: "BridgedRow" },
);

const Figure = (description: string) =>
  Type.Object(
    {
      value: Nullable(
        Type.String({ description: "attoALPH (18 decimals) as a decimal string; null when unknown." }),
      ),
      source: Nullable(
        StringEnum(["index", "explorer", "computed", "protocol"], {
          description:
            "`index`: computed from the indexed chain; `explorer`: the explorer backend's /infos/supply; `computed`: total − reserved − locked with an index total; `protocol`: a protocol constant; null with a null value.",
        }),
      ),
      refused: Type.Optional(
        StringEnum(["exceeds_maximum", "exceeds_total"], {
          description:
            "Present when the source gave a figure that could not exist, refused (value null) instead of published: above the protocol's maximum (`exceeds_maximum`), or a circulating figure above the total (`exceeds_total`).",
        }),
      ),
    },
    { description },
  );

export const AlphSupplySchema = Type.Object({
  maximum: Figure("1,000,000,000 ALPH, the protocol's maximum (source `protocol`)."),
  total: Figure(
    "ALPH in the main chain's unspent outputs: the index's sum of ALPH balance moves when it holds the chain from genesis (`index`), else the explorer's (`explorer`).",
  ),
  circulating: Figure(
    "total − reserved − locked: the explorer's (`explorer`), or `computed` from the index's total and the explorer's reserved and locked.",
  ),
  reserved: Figure("ALPH of the addresses the explorer backend counts as reserved (always `explorer`)."),
  locked: Figure("ALPH in outputs whose lock time is still ahead (always `explorer`)."),
  index_from_genesis: Type.Boolean({
    description: "Whether the index holds the 16 genesis blocks, which makes its total exact.",
  }),
  explorer: Type.Object({
    status: StringEnum(["ok", "unavailable", "not_configured"], {
      description:
        "`unavailable` while the last read failed: the explorer's figures are then those of `fetched_at` (null before a first read).",
    }),
    fetched_at: Nullable(Type.Integer({ description: "When the explorer's figures in use were read (ms)." })),
    snapshot_ts: Nullable(Type.Integer({ description: "The explorer's own TokenSupply.timestamp (ms)." })),
    error: Nullable(Type.String({ description: "The last failure while the explorer fails." })),
  }),
  updated_at: Type.Integer({ description: "When the figures processor last put the figures together (ms)." }),
});
