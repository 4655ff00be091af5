/**
 * dapps:dia-oracle — every feed's newest value with its staleness against the heartbeat, a feed's history,
 * and randomness rounds kept past the contract's 1,000-round ring buffer (public).
 */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { requireDb } from "../../require-db.ts";
import { problemOf, U256String, UnixMs } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { dappListRoute } from "./list-route.ts";

const TAG = "dapps:dia-oracle";

const Round = Type.Object(
  {
    round: Type.String({ description: "drand round number." }),
    randomness: Type.String({ description: "Randomness (hex)." }),
    signature: Type.String({ description: "Signature (hex)." }),
    oracle: Type.String({ description: "Randomness oracle contract." }),
    id: Type.String(),
    tx_id: Type.String(),
    timestamp: UnixMs("Block time."),
  },
  { $id: "DiaRandomnessRound", title: "DiaRandomnessRound" },
);

const FeedKey = Type.String({
  pattern: "^[A-Za-z0-9._-]{1,20}/[A-Za-z0-9._-]{1,20}$",
  description: "Feed key, e.g. BTC/USD.",
});

export async function diaOracleRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Round);
  const reads = () => need("dapps").dia;
  const cfg = { access: "public" as const, db: "required" as const };

  app.get(
    "/dapps/dia-oracle/feeds",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "Feeds with their newest value and staleness",
        description:
          "`stale` is true when the newest value's oracle time is older than the heartbeat (`DIA_HEARTBEAT_MS`, 10 minutes) at the time of the request.",
        response: {
          200: Type.Object({
            heartbeat_ms: Type.Integer(),
            feeds: Type.Array(
              Type.Object({
                key: Type.String(),
                oracle: Type.String({ description: "Price oracle contract." }),
                value: U256String("Newest value, with `decimals` decimals."),
                decimals: Type.Integer(),
                price: Type.Number({ description: "value / 10^decimals." }),
                oracle_timestamp: UnixMs("The oracle's time of the value."),
                updated_at: UnixMs("Block time of the update."),
                age_ms: Type.Integer({ description: "Now minus oracle_timestamp." }),
                stale: Type.Boolean(),
                updates: Type.Integer({ description: "Updates indexed." }),
                tx_id: Type.String(),
              }),
            ),
          }),
        },
      },
    },
    async () => {
      const heartbeat = deps.config.DIA_HEARTBEAT_MS;
      const now = Date.now();
      const feeds = (await reads().feeds()).map((f) => ({
        ...f,
        price: Number(f.value) / 10 ** f.decimals,
        age_ms: Math.max(0, now - f.oracle_timestamp),
        stale: now - f.oracle_timestamp > heartbeat,
      }));
      return { heartbeat_ms: heartbeat, feeds };
    },
  );

  dappListRoute(app, {
    path: "/dapps/dia-oracle/history",
    tag: TAG,
    access: "public",
    summary: "A feed's values, newest first",
    query: {
      key: FeedKey,
      from_ts: Type.Optional(UnixMs("From this block time (ms).")),
      to_ts: Type.Optional(UnixMs("Up to this block time (ms).")),
    },
    head: { key: Type.String() },
    rowsKey: "values",
    row: Type.Object({
      id: Type.String(),
      tx_id: Type.String(),
      value: U256String("Value, with `decimals` decimals."),
      decimals: Type.Integer(),
      oracle_timestamp: UnixMs("The oracle's time."),
      timestamp: UnixMs("Block time."),
    }),
    read: async ({ key, from_ts, to_ts }, page) => ({
      head: { key },
      ...(await reads().history(key, { from_ts, to_ts }, page)),
    }),
  });

  dappListRoute(app, {
    path: "/dapps/dia-oracle/randomness",
    tag: TAG,
    access: "public",
    summary: "Randomness rounds, newest first",
    description: "Every round indexed, also those the contract's 1,000-round buffer no longer holds.",
    query: {},
    rowsKey: "rounds",
    row: Type.Ref("DiaRandomnessRound"),
    read: (_, page) => reads().rounds(page),
  });

  app.get(
    "/dapps/dia-oracle/randomness/:round",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "One randomness round",
        params: Type.Object({
          round: Type.String({ pattern: "^[0-9]{1,78}$", description: "Round number." }),
        }),
        response: { 200: Type.Ref("DiaRandomnessRound"), 404: problemOf("No such randomness round.") },
      },
    },
    async (request) => {
      const round = await reads().round(request.params.round);
      if (!round)
        throw notFound(`Randomness round ${request.params.round} not found`, { round: request.params.round });
      return round;
    },
  );
}
