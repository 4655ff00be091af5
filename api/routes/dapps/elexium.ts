/**
 * dapps:elexium — pools (tokens, reserves, stable flag, TVL), swaps and liquidity per pool and address, volume
 * and fees per pool and day, and the CoinGecko DEX shapes `tickers` and `historical_trades` (public).
 */
import { Type } from "@sinclair/typebox";
import { badRequest, notFound } from "../../../lib/errors.ts";
import { requireDb } from "../../require-db.ts";
import { Base58Address, HexId, Nullable, problemOf, StringEnum, U256String, UnixMs } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { dappListRoute } from "./list-route.ts";

const TAG = "dapps:elexium";

const Pool = Type.Object(
  {
    pool_address: Type.String({ description: "Pool contract address." }),
    token0_id: HexId("Token 0."),
    token1_id: HexId("Token 1."),
    stable: Nullable(
      Type.Boolean({ description: "Stable (true) or volatile (false) curve; null when unknown." }),
    ),
    fee_bps: Type.Integer({
      description: "Fee rate assumed for the pool kind, basis points (stable 5, volatile 30).",
    }),
    reserve0: U256String("Reserve of token 0 (sum of the pool's events since the index began)."),
    reserve1: U256String("Reserve of token 1."),
    swaps: Type.Integer(),
    tvl_usd: Nullable(
      Type.Number({ description: "Reserves × the tokens' USD prices; null when neither is priced." }),
    ),
    created_at: Nullable(UnixMs("Block time of the pool's creation, when indexed.")),
    last_swap_at: Nullable(UnixMs("Newest swap's block time.")),
  },
  { $id: "ElexiumPool", title: "ElexiumPool" },
);

const Swap = Type.Object(
  {
    id: Type.String(),
    tx_id: Type.String(),
    timestamp: UnixMs("Block time."),
    pool_address: Type.String(),
    trader: Type.String({ description: "Transaction signer." }),
    side: StringEnum(["buy", "sell"], { description: "buy = the trader received the pool's base token." }),
    token_in_id: HexId("Token given."),
    token_out_id: HexId("Token received."),
    amount_in: U256String("Amount given."),
    amount_out: U256String("Amount received."),
    base_token_id: HexId("The pool's base token."),
    base_amount: U256String("Base amount."),
    quote_amount: U256String("Quote amount."),
    price: Type.String({ description: "Quote per base, raw units." }),
  },
  { $id: "ElexiumSwap", title: "ElexiumSwap" },
);

const PoolParam = Type.Object({ pool: Base58Address("Pool contract address.") });
const rangeError = (q: { from_ts?: number; to_ts?: number }) => {
  if (q.from_ts !== undefined && q.to_ts !== undefined && q.from_ts > q.to_ts)
    throw badRequest("from_ts is after to_ts", { field: "from_ts" });
};

export async function elexiumRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Pool);
  app.addSchema(Swap);
  const reads = () => need("dapps").elexium;
  const cfg = { access: "public" as const, db: "required" as const };
  const Filters = {
    pool: Type.Optional(Base58Address("Only this pool.")),
    address: Type.Optional(Base58Address("Only this trader or provider (the transaction signer).")),
  };

  dappListRoute(app, {
    path: "/dapps/elexium/pools",
    tag: TAG,
    access: "public",
    summary: "Pools, oldest first",
    query: {},
    rowsKey: "pools",
    row: Type.Ref("ElexiumPool"),
    read: (_, page) => reads().pools(page),
  });

  app.get(
    "/dapps/elexium/pools/:pool",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "One pool",
        params: PoolParam,
        response: { 200: Type.Ref("ElexiumPool"), 404: problemOf("No Elexium pool at this address.") },
      },
    },
    async (request) => {
      const pool = await reads().pool(request.params.pool);
      if (!pool) throw notFound(`No Elexium pool ${request.params.pool}`, { pool: request.params.pool });
      return pool;
    },
  );

  app.get(
    "/dapps/elexium/pools/:pool/daily",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "Volume and fees of a pool per UTC day",
        description: "Fees are the volume given to the pool × its `fee_bps`.",
        params: PoolParam,
        querystring: Type.Object({
          from_ts: Type.Optional(UnixMs("From this block time (ms).")),
          to_ts: Type.Optional(UnixMs("Up to this block time (ms).")),
        }),
        response: {
          404: problemOf("No Elexium pool at this address."),
          200: Type.Object({
            pool_address: Type.String(),
            fee_bps: Type.Integer(),
            days: Type.Array(
              Type.Object({
                day: Type.String({ description: "UTC day, YYYY-MM-DD." }),
                swaps: Type.Integer(),
                volume0: U256String("Token 0 moved in and out."),
                volume1: U256String("Token 1 moved in and out."),
                fees0: U256String("Fees in token 0."),
                fees1: U256String("Fees in token 1."),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      rangeError(request.query);
      const pool = await reads().pool(request.params.pool);
      if (!pool) throw notFound(`No Elexium pool ${request.params.pool}`, { pool: request.params.pool });
      return {
        pool_address: pool.pool_address,
        fee_bps: pool.fee_bps,
        days: await reads().days(pool.pool_address, request.query),
      };
    },
  );

  dappListRoute(app, {
    path: "/dapps/elexium/swaps",
    tag: TAG,
    access: "public",
    summary: "Swaps, newest first",
    query: Filters,
    rowsKey: "swaps",
    row: Type.Ref("ElexiumSwap"),
    read: (f, page) => reads().swaps(f, page),
  });

  dappListRoute(app, {
    path: "/dapps/elexium/liquidity",
    tag: TAG,
    access: "public",
    summary: "Liquidity added and removed, newest first",
    query: Filters,
    rowsKey: "events",
    row: Type.Object({
      id: Type.String(),
      tx_id: Type.String(),
      timestamp: UnixMs("Block time."),
      pool_address: Type.String(),
      provider: Type.String(),
      kind: StringEnum(["add", "remove"]),
      amount0: U256String("Token 0 amount."),
      amount1: U256String("Token 1 amount."),
    }),
    read: (f, page) => reads().liquidity(f, page),
  });

  app.get(
    "/dapps/elexium/tickers",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "CoinGecko DEX tickers (24 h)",
        description:
          "CoinGecko's DEX integration shape: one ticker per pool, `ticker_id` = `<base token id>_<target token id>`, prices and volumes in whole tokens (decimals from the token registry; raw units when unknown), volumes over the last 24 hours.",
        response: {
          200: Type.Array(
            Type.Object({
              ticker_id: Type.String(),
              base_currency: Type.String(),
              target_currency: Type.String(),
              pool_id: Type.String(),
              last_price: Type.String(),
              base_volume: Type.String(),
              target_volume: Type.String(),
              liquidity_in_usd: Type.String(),
              high: Type.String(),
              low: Type.String(),
            }),
          ),
        },
      },
    },
    async () => reads().tickers(),
  );

  const Trade = Type.Object({
    trade_id: Type.String(),
    price: Type.String(),
    base_volume: Type.String(),
    target_volume: Type.String(),
    trade_timestamp: UnixMs("Block time."),
    type: StringEnum(["buy", "sell"]),
  });
  app.get(
    "/dapps/elexium/historical_trades",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "CoinGecko DEX historical trades",
        description: "CoinGecko's shape: `{ buy: [...], sell: [...] }`, newest first, of the ticker's pool.",
        querystring: Type.Object({
          ticker_id: Type.String({ pattern: "^[0-9a-f]{64}_[0-9a-f]{64}$", description: "As in `tickers`." }),
          type: Type.Optional(StringEnum(["buy", "sell"])),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          start_time: Type.Optional(UnixMs("From this time (ms).")),
          end_time: Type.Optional(UnixMs("Up to this time (ms).")),
        }),
        response: {
          200: Type.Object({ buy: Type.Optional(Type.Array(Trade)), sell: Type.Optional(Type.Array(Trade)) }),
        },
      },
    },
    async (request) => {
      const q = request.query;
      if (q.start_time !== undefined && q.end_time !== undefined && q.start_time > q.end_time)
        throw badRequest("start_time is after end_time", { field: "start_time" });
      const trades = await reads().historicalTrades(q);
      if (!trades) throw badRequest("ticker_id is not <base>_<target>", { field: "ticker_id" });
      return trades;
    },
  );
}
