/** Chain group: the chains of the registry and the indexer's durable position per Alephium chain. */
import { Type } from "@sinclair/typebox";
import { ADDRESS_GROUPS } from "../../../lib/chain/types.ts";
import { badRequest } from "../../../lib/errors.ts";
import { readProgress } from "../../../lib/events/reader.ts";
import { requireDb } from "../../require-db.ts";
import { INT32_MAX, Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const ChainSchema = Type.Object(
  {
    id: Type.Integer({ description: "Chain id (8738 Alephium, 1 Ethereum, 56 BSC)." }),
    name: Type.String(),
    short_name: Type.String({ description: "Short name, e.g. `alph`, `eth`, `bsc`." }),
    icon: Nullable(Type.String({ description: "Icon URL; null when none is known." })),
    avatar_url: Nullable(Type.String({ description: "Same as `icon` (the AlphScan explorer's name)." })),
    wormhole_id: Nullable(
      Type.Integer({
        description: "Wormhole's chain id (13 Alephium, 2 Ethereum, 4 BSC); null when not bridged.",
      }),
    ),
  },
  { $id: "Chain", title: "Chain" },
);

const ChainListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: INT32_MAX, default: 1, description: "1-based page." }),
  pageSize: Type.Integer({
    minimum: -1,
    maximum: 999,
    default: -1,
    description: "Chains per page, 1-999; -1 (the default) returns every chain (page is then ignored).",
  }),
});

const ChainStatusSchema = Type.Object({
  chain_index: Type.Integer({ description: "from_group * 4 + to_group." }),
  from_group: Type.Integer(),
  to_group: Type.Integer(),
  height: Type.Integer({ description: "Height of the newest durably indexed main-chain block." }),
  block_hash: Type.String(),
  block_ts: Type.Number({ description: "That block's timestamp, Unix ms." }),
  updated_at: Type.Number({ description: "When the position was written, Unix ms." }),
  lag_ms: Type.Number({ description: "Now minus block_ts." }),
});

export async function chainRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(ChainSchema);

  app.get(
    "/chain/all",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Chain"],
        summary: "List the chains known to the registry",
        description:
          "The indexed Alephium chain (8738) first, then the EVM chains of bridged tokens. `items` and `chains` hold " +
          "the same page (`items` is the AlphScan explorer's name); `total` counts every chain. `?pageSize=-1` " +
          "(the default) returns them all.",
        querystring: ChainListQuery,
        response: {
          200: Type.Object({
            items: Type.Array(Type.Ref("Chain")),
            chains: Type.Array(Type.Ref("Chain")),
            total: Type.Integer(),
            page: Type.Integer(),
            pageSize: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const { page, pageSize } = request.query;
      if (pageSize === 0) throw badRequest("pageSize must be -1 (all) or 1-999", { pageSize: 0 });
      const all = (await need("registry").listChains()).map((c) => ({ ...c, avatar_url: c.icon }));
      const items = pageSize === -1 ? all : all.slice((page - 1) * pageSize, page * pageSize);
      return { items, chains: items, total: all.length, page, pageSize };
    },
  );

  app.get(
    "/chain/status",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Chain"],
        summary: "Indexer position per Alephium chain (16 chains of 4 groups)",
        description:
          "One row per chain that has a durable position. `watermark` is the oldest chain's newest block time " +
          "(0 until all 16 chains have one): every event at or before it is served.",
        response: {
          200: Type.Object({
            watermark: Type.Number({ description: "Low watermark, Unix ms." }),
            chains: Type.Array(ChainStatusSchema),
          }),
        },
      },
    },
    async () => {
      const progress = await readProgress(need("ch"));
      const now = Date.now();
      return {
        watermark: progress.watermark,
        chains: progress.chains.map((c) => ({
          ...c,
          from_group: Math.floor(c.chain_index / ADDRESS_GROUPS),
          to_group: c.chain_index % ADDRESS_GROUPS,
          lag_ms: Math.max(0, now - c.block_ts),
        })),
      };
    },
  );
}
