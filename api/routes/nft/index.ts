/** NFT group: collections discovered on chain and their NFT tokens. */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { INT32_MAX, Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const N = (description?: string) => Nullable(Type.String({ description }));

const CollectionSchema = Type.Object(
  {
    address: Type.String({ description: "Base58 collection contract address." }),
    collection_id: Type.String({ description: "64-hex contract id." }),
    uri: N("Collection URI (JSON with name, description, image)."),
    name: N(),
    description: N(),
    image: N(),
    std_interface_id: N("0002 (INFTCollection) or 000201 (with royalty)."),
    total_supply: N("On-chain totalSupply() (decimal string)."),
    created_tx: N(),
    created_at: Nullable(Type.Number({ description: "Unix ms." })),
    token_count: Type.Integer({ description: "NFTs of the collection known to the registry." }),
    updated_at: Type.Number({ description: "Unix ms." }),
  },
  { $id: "NftCollection", title: "NftCollection" },
);

const NftTokenSchema = Type.Object(
  {
    token_id: Type.String({ description: "64-hex NFT token id." }),
    collection_address: Type.String(),
    nft_index: N("Index in the collection (decimal string)."),
    uri: N("Token URI (JSON with name, image, attributes)."),
    name: N(),
    image: N(),
    minter: N(),
    mint_tx: N(),
    mint_time: Nullable(Type.Number({ description: "Unix ms." })),
    updated_at: Type.Number({ description: "Unix ms." }),
  },
  { $id: "NftToken", title: "NftToken" },
);

const Paging = {
  page: Type.Integer({ minimum: 1, maximum: INT32_MAX, default: 1 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
};
const AddressParams = Type.Object({
  address: Type.String({ pattern: "^[1-9A-HJ-NP-Za-km-z]{20,60}$", description: "Collection address." }),
});

export async function nftRoutes(app: App, deps: ApiDeps): Promise<void> {
  app.addSchema(CollectionSchema);
  app.addSchema(NftTokenSchema);

  app.get(
    "/nft/collections",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["NFT"],
        summary: "List NFT collections (by name)",
        querystring: Type.Object({
          ...Paging,
          search: Type.Optional(
            Type.String({
              maxLength: 200,
              description: "Case-insensitive substring of address, id or name.",
            }),
          ),
        }),
        response: {
          200: Type.Object({
            collections: Type.Array(Type.Ref("NftCollection")),
            total: Type.Integer(),
            page: Type.Integer(),
            pageSize: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const { page, pageSize, search } = request.query;
      return { ...(await deps.registry!.listNftCollections({ page, pageSize, search })), page, pageSize };
    },
  );

  app.get(
    "/nft/collections/:address",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["NFT"],
        summary: "One NFT collection",
        params: AddressParams,
        response: { 200: Type.Object({ collection: Type.Ref("NftCollection") }), 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const collection = await deps.registry!.getNftCollection(request.params.address);
      if (!collection) throw notFound(`NFT collection ${request.params.address} not found`);
      return { collection };
    },
  );

  app.get(
    "/nft/collections/:address/tokens",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["NFT"],
        summary: "NFTs of a collection, by index",
        params: AddressParams,
        querystring: Type.Object(Paging),
        response: {
          200: Type.Object({
            collection_address: Type.String(),
            tokens: Type.Array(Type.Ref("NftToken")),
            total: Type.Integer(),
            page: Type.Integer(),
            pageSize: Type.Integer(),
          }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const { address } = request.params;
      if (!(await deps.registry!.getNftCollection(address)))
        throw notFound(`NFT collection ${address} not found`);
      const { page, pageSize } = request.query;
      return {
        collection_address: address,
        ...(await deps.registry!.listNftTokens(address, { page, pageSize })),
        page,
        pageSize,
      };
    },
  );
}
