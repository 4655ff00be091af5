/** Token group: the registry list, filter options, details with bridged rows, admin update and soft delete. */
import { Type } from "@sinclair/typebox";
import type { CsvColumn } from "../../../lib/csv.ts";
import { badRequest, notFound } from "../../../lib/errors.ts";
import { loadAlphSupply } from "../../../lib/figures/alph-supply.ts";
import {
  MAINNET_NETWORK_ID,
  MAX_CATEGORIES,
  type TokenListEntry,
  type TokenUpdate,
} from "../../../lib/tokens/repo.ts";
import {
  CSV_NOTE,
  FormatQuery,
  jsonOrCsv,
  responseFormat,
  sendCsv,
  urlWith,
  varyOnAccept,
} from "../../csv.ts";
import { requireDb } from "../../require-db.ts";
import { INT32_MAX, NoBody, StringEnum } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import {
  AlphSupplySchema,
  BridgedRowSchema,
  NullableBody,
  TokenIdParam,
  TokenListEntrySchema,
  TokenSchema,
} from "./schemas.ts";

const TokenListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: INT32_MAX, default: 1, description: "1-based page." }),
  pageSize: Type.Integer({
    minimum: -1,
    maximum: 999,
    default: 20,
    description: "Tokens per page, 1-999; -1 returns every matching token (page is then ignored).",
  }),
  chain: Type.Optional(
    Type.Integer({ minimum: 0, maximum: INT32_MAX, description: "Chain id (8738 = Alephium)." }),
  ),
  registered: Type.Optional(Type.Boolean()),
  moderation: Type.Optional(StringEnum(["show", "hide"])),
  market_display: Type.Optional(Type.Boolean()),
  dapps: Type.Optional(Type.String({ maxLength: 2000, description: "Comma-separated dapp ids (any of)." })),
  category: Type.Optional(Type.String({ maxLength: 64, description: "Category id the token must have." })),
  search: Type.Optional(
    Type.String({
      maxLength: 200,
      description: "Case-insensitive substring of id, contract address, symbol, on-chain symbol or name.",
    }),
  ),
  sort: StringEnum(["symbol", "circulating_supply_usd", "mint_time"], {
    default: "symbol",
    description: "Sort key; tokens without a value come last; ties by id.",
  }),
  order: StringEnum(["asc", "desc"], { default: "asc" }),
  ...FormatQuery,
});

/** CSV columns of the token list: the TokenListEntry fields in schema order, `mintTime_iso` after `mintTime`. */
const TOKEN_CSV_COLUMNS: CsvColumn<TokenListEntry>[] = [
  { name: "id", kind: "text" },
  { name: "contractAddress", kind: "text" },
  { name: "name", kind: "text" },
  { name: "symbol", kind: "text" },
  { name: "symbolOnChain", kind: "text" },
  { name: "decimals", kind: "number" },
  { name: "logoURI", kind: "text" },
  { name: "categories", kind: "json" },
  { name: "dapp", kind: "text" },
  { name: "originChain", kind: "text" },
  { name: "registered", kind: "boolean" },
  { name: "source", kind: "text" },
  { name: "chainId", kind: "number" },
  { name: "moderation", kind: "text" },
  { name: "marketDisplay", kind: "boolean" },
  { name: "circulatingSupplyUsd", kind: "number" },
  { name: "priceUsd", kind: "number" },
  { name: "tvlUsd", kind: "number" },
  { name: "unknownFigures", kind: "json" },
  { name: "mintTime", kind: "number" },
  { name: "mintTime_iso", kind: "iso", get: (t) => t.mintTime },
];

const TokenUpdateBody = Type.Object(
  {
    category_ids: Type.Optional(
      NullableBody(
        Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
          maxItems: 50,
          description: `Up to ${MAX_CATEGORIES} existing category ids (400 beyond or unknown); [] clears.`,
        }),
      ),
    ),
    dapp: Type.Optional(NullableBody(Type.String({ minLength: 1, maxLength: 64 }))),
    decimals: Type.Optional(NullableBody(Type.Integer({ minimum: 0, maximum: 255 }))),
    symbol: Type.Optional(NullableBody(Type.String({ minLength: 1, maxLength: 64 }))),
    symbol_onchain: Type.Optional(NullableBody(Type.String({ minLength: 1, maxLength: 64 }))),
    name: Type.Optional(NullableBody(Type.String({ minLength: 1, maxLength: 200 }))),
    metadata: Type.Optional(
      NullableBody(Type.Object({}, { additionalProperties: true, description: "Replaces metadata." })),
    ),
    metadata_merge: Type.Optional(
      NullableBody(
        Type.Object(
          {},
          {
            additionalProperties: true,
            description: "Shallow-merged into metadata; ignored with `metadata`.",
          },
        ),
      ),
    ),
    logo_uri: Type.Optional(
      NullableBody(Type.String({ maxLength: 2000, description: "Set as metadata.logoURI when non-empty." })),
    ),
    website: Type.Optional(
      NullableBody(Type.String({ maxLength: 2000, description: "Set as metadata.website when non-empty." })),
    ),
    registered: Type.Optional(NullableBody(Type.Boolean())),
    deleted: Type.Optional(NullableBody(Type.Boolean({ description: "false undeletes a deleted token." }))),
  },
  { additionalProperties: false },
);

const TokenParams = Type.Object({ tokenid: TokenIdParam });

export async function tokenRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(TokenSchema);
  app.addSchema(TokenListEntrySchema);
  app.addSchema(BridgedRowSchema);

  app.get(
    "/token/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Token"],
        summary: "List registry tokens with filters, search, sort and pagination",
        description: [
          "Deleted tokens are never listed. `total` counts every match; `page` and `pageSize` echo the request.",
          CSV_NOTE,
          "In CSV, one row per token (`categories` as JSON text); `total` is in `X-Total-Count`, and when more",
          'tokens follow, the next `page` is in `X-Next-Cursor` and `Link: <url>; rel="next"`.',
        ].join(" "),
        querystring: TokenListQuery,
        response: {
          200: jsonOrCsv(
            Type.Object({
              networkId: Type.Integer({ description: "Alephium network id (0 = mainnet)." }),
              tokens: Type.Array(Type.Ref("TokenListEntry")),
              total: Type.Integer(),
              page: Type.Integer(),
              pageSize: Type.Integer(),
            }),
            TOKEN_CSV_COLUMNS.map((c) => c.name).join(", "),
            "The page of tokens, as JSON or CSV.",
          ),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      if (q.pageSize === 0) throw badRequest("pageSize must be -1 (all) or 1-999", { pageSize: 0 });
      const dapps = q.dapps
        ?.split(",")
        .map((d) => d.trim())
        .filter(Boolean);
      const { tokens, total } = await need("registry").listTokens({
        page: q.page,
        pageSize: q.pageSize,
        chain: q.chain,
        registered: q.registered,
        moderation: q.moderation,
        marketDisplay: q.market_display,
        dapps,
        category: q.category,
        search: q.search,
        sort: q.sort,
        order: q.order,
      });
      varyOnAccept(reply);
      if (responseFormat(request) === "csv") {
        const more = q.pageSize > 0 && q.page * q.pageSize < total && q.page < INT32_MAX;
        const next = String(q.page + 1);
        return sendCsv(reply, {
          columns: TOKEN_CSV_COLUMNS,
          rows: tokens,
          filename: "tokens.csv",
          next: more ? { cursor: next, url: urlWith(request, "page", next) } : null,
          headers: { "x-total-count": String(total) },
        });
      }
      return { networkId: MAINNET_NETWORK_ID, tokens, total, page: q.page, pageSize: q.pageSize };
    },
  );

  app.get(
    "/token/filter-options",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Token"],
        summary: "Values accepted by the filters of /token/all",
        description: "Chains, dapp ids used by non-deleted tokens, and active categories in display order.",
        response: {
          200: Type.Object({
            chains: Type.Array(
              Type.Object({ id: Type.Integer(), name: Type.String(), short_name: Type.String() }),
            ),
            dapps: Type.Array(Type.String()),
            categories: Type.Array(Type.Object({ id: Type.String(), sort_order: Type.Integer() })),
          }),
        },
      },
    },
    async () => {
      const [chains, dapps, categories] = await Promise.all([
        need("registry").listChains(),
        need("registry").filterOptionDapps(),
        need("registry").listCategories(false),
      ]);
      return { chains, dapps, categories: categories.map((c) => ({ id: c.id, sort_order: c.sort_order })) };
    },
  );

  app.get(
    "/token/alph/supply",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Token"],
        summary: "ALPH's maximum, total, circulating, reserved and locked supply, each with its source",
        description:
          "Put together by the figures processor every FIGURES_REFRESH_MS from the explorer backend's /infos/supply " +
          "(read at most every ALPH_SUPPLY_REFRESH_MS) and, when the index holds the chain from genesis, the index's " +
          "own total. While the explorer fails, its last figures stay (explorer.status `unavailable`, with when they " +
          "were read); before a first read they are null. 404 before the figures processor first ran.",
        response: { 200: AlphSupplySchema, 404: Type.Ref("Problem") },
      },
    },
    async () => {
      const supply = await loadAlphSupply(need("pg"));
      if (!supply) throw notFound("ALPH's supply is not computed yet (the figures processor has not run).");
      return supply;
    },
  );

  app.get(
    "/token/:tokenid/details",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Token"],
        summary: "One token with its bridged rows",
        description:
          "`tokenid` is a 64-hex id or a base58 contract address. `bridged` holds the rows whose native_token_id " +
          "is the token, merged (for hex ids) with rows keyed by its contract address, with or without its " +
          "`:group` suffix; it is [] when none. Deleted tokens answer 404.",
        params: TokenParams,
        response: {
          200: Type.Object({ token: Type.Ref("Token"), bridged: Type.Array(Type.Ref("BridgedRow")) }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => need("registry").getTokenDetails(request.params.tokenid),
  );

  app.post(
    "/token/:tokenid/update",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Token"],
        summary: "Change a token's registry fields (PATCH-style; null fields are ignored)",
        description:
          "Only non-null fields are applied; 400 when none is left. `metadata` replaces the metadata; " +
          "`metadata_merge` merges shallowly and is ignored when `metadata` is given; non-empty `logo_uri` and " +
          "`website` then land in metadata.logoURI / metadata.website. `category_ids` takes up to 3 existing " +
          "categories ([] clears). `deleted: false` undeletes. Changed fields are remembered so that re-seeding " +
          "from the token list never overwrites them.",
        params: TokenParams,
        body: TokenUpdateBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), token: Type.Ref("Token") }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => ({
      ok: true,
      // NullableBody fields type as unknown through the type provider; the schema guarantees TokenUpdate.
      token: await need("registry").updateToken(request.params.tokenid, request.body as TokenUpdate),
    }),
  );

  app.post(
    "/token/:tokenid/del",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Token"],
        summary: "Soft-delete a token",
        description:
          "The row stays (with its categories and bridged rows) but leaves /token/all and /token/{tokenid}/details; " +
          "deleting a deleted token is a no-op. Undelete with POST /token/{tokenid}/update `{ deleted: false }`. " +
          "Re-seeding never undeletes.",
        params: TokenParams,
        body: NoBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), id: Type.String(), deleted: Type.Boolean() }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const token = await need("registry").deleteToken(request.params.tokenid);
      return { ok: true, id: token.id, deleted: true };
    },
  );
}
