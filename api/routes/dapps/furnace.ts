/** dapps:furnace — Token Furnace burns, totals per token, top burners and burner NFTs (public). */
import { Type } from "@sinclair/typebox";
import { badRequest, notFound } from "../../../lib/errors.ts";
import { requireDb } from "../../require-db.ts";
import { Base58Address, HexId, problemOf, StringEnum, U256String, UnixMs } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { dappListRoute } from "./list-route.ts";

const TAG = "dapps:furnace";

const Burn = Type.Object(
  {
    id: Type.String({ description: "Event id." }),
    tx_id: Type.String(),
    timestamp: UnixMs("Block time."),
    burner: Type.String({ description: "Address that burned." }),
    token_id: HexId("Burned token."),
    amount: U256String("Amount burned, in the token's smallest unit."),
    nft: Type.Boolean({ description: "Whether the burn minted a burner NFT." }),
    nft_address: Type.String({ description: "The burner NFT contract, empty when none." }),
    group: Type.Integer({ description: "Group of the furnace contract (0-3)." }),
    furnace: Type.String({ description: "Furnace contract address." }),
  },
  { $id: "FurnaceBurn", title: "FurnaceBurn" },
);

const TokenTotals = Type.Object(
  {
    token_id: HexId("Burned token."),
    burned: U256String("Total burned, smallest unit."),
    burns: Type.Integer(),
    burners: Type.Integer({ description: "Distinct burning addresses." }),
    first_burn_at: UnixMs("First burn's block time."),
    last_burn_at: UnixMs("Newest burn's block time."),
  },
  { $id: "FurnaceTokenTotals", title: "FurnaceTokenTotals" },
);

export async function furnaceRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Burn);
  app.addSchema(TokenTotals);
  const reads = () => need("dapps").furnace;

  dappListRoute(app, {
    path: "/dapps/furnace/burns",
    tag: TAG,
    access: "public",
    summary: "Burns, newest first",
    description:
      "Token Furnace `Burned` events of the four group contracts, filtered by token, burner, time range (block time, ms) and burner NFT.",
    query: {
      token_id: Type.Optional(HexId("Only burns of this token.")),
      burner: Type.Optional(Base58Address("Only burns by this address.")),
      from_ts: Type.Optional(UnixMs("Burns at or after this block time (ms).")),
      to_ts: Type.Optional(UnixMs("Burns at or before this block time (ms).")),
      nft: Type.Optional(
        Type.Boolean({ description: "Only burns with (true) or without (false) a burner NFT." }),
      ),
    },
    rowsKey: "burns",
    row: Type.Ref("FurnaceBurn"),
    read: (f, page) => reads().burns(f, page),
  });

  dappListRoute(app, {
    path: "/dapps/furnace/tokens",
    tag: TAG,
    access: "public",
    summary: "Totals per burned token (top tokens)",
    query: {
      sort: StringEnum(["burns", "burners", "last_burn"], {
        default: "burns",
        description: "Order: most burns, most distinct burners, or newest burn first.",
      }),
    },
    rowsKey: "tokens",
    row: Type.Ref("FurnaceTokenTotals"),
    read: ({ sort }, page) => reads().tokens(sort, page),
  });

  app.get(
    "/dapps/furnace/tokens/:tokenid",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: [TAG],
        summary: "Burn totals of one token",
        params: Type.Object({ tokenid: HexId("Token id.") }),
        response: { 200: Type.Ref("FurnaceTokenTotals"), 404: problemOf("No burn of this token.") },
      },
    },
    async (request) => {
      const totals = await reads().token(request.params.tokenid);
      if (!totals)
        throw notFound(`Burn of token ${request.params.tokenid} not found`, {
          token_id: request.params.tokenid,
        });
      return totals;
    },
  );

  dappListRoute(app, {
    path: "/dapps/furnace/burners",
    tag: TAG,
    access: "public",
    summary: "Top burners",
    description:
      "Addresses by number of burns, or by amount burned of one token (`sort=burned` needs `token_id`: amounts of different tokens do not add).",
    query: {
      token_id: Type.Optional(HexId("Only burns of this token.")),
      sort: StringEnum(["burns", "burned"], { default: "burns" }),
    },
    rowsKey: "burners",
    row: Type.Object({
      address: Type.String(),
      burns: Type.Integer(),
      tokens: Type.Integer({ description: "Distinct tokens burned." }),
      burned: Type.Unsafe<string | null>({
        type: "string",
        nullable: true,
        description: "Amount burned (with `token_id` only).",
      }),
      last_burn_at: UnixMs("Newest burn's block time."),
    }),
    read({ token_id, sort }, page) {
      if (sort === "burned" && !token_id) throw badRequest("sort=burned needs token_id", { field: "sort" });
      return reads().burners({ token_id, sort }, page);
    },
  });

  dappListRoute(app, {
    path: "/dapps/furnace/nfts",
    tag: TAG,
    access: "public",
    summary: "Burner NFTs (burns that minted one), newest first",
    query: {
      burner: Type.Optional(Base58Address("Only NFTs of this burner.")),
      token_id: Type.Optional(HexId("Only NFTs of burns of this token.")),
    },
    rowsKey: "nfts",
    row: Type.Ref("FurnaceBurn"),
    read: ({ burner, token_id }, page) => reads().burns({ burner, token_id, nft: true }, page),
  });
}
