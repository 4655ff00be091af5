/** NFT group: collections discovered on chain and their NFT tokens. */
import { addressFromContractId } from "@alephium/web3";
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { displayImage } from "../../../lib/nfts/metadata.ts";
import type { NftMetadataRow } from "../../../lib/nfts/metadata-repo.ts";
import { requireDb } from "../../require-db.ts";
import { INT32_MAX, Nullable, StringEnum } from "../../schemas.ts";
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

const URI_STATES = ["none", "pending", "ok", "failed", "refused"] as const;
const uriState = (what: string) =>
  StringEnum(URI_STATES, {
    description:
      `What became of the ${what}: \`none\` (the contract gave no URI, or it could not be asked), \`pending\` ` +
      "(known, not fetched yet; also while NFT_METADATA_FETCH is off), `ok` (its JSON was read: the display " +
      "fields come from it), `failed` (the last fetch failed: an error, a timeout, too large or not JSON; " +
      "retried later with a growing delay), `refused` (a scheme or an address the fetcher does not go to, such " +
      "as a private one).",
  });

const DISPLAY = {
  display_name: N(
    "Name to show: the registry's name, else the URI's JSON `name`, else (an NFT) the collection's name with the index.",
  ),
  display_description: N("The registry's description, else the URI's JSON `description`."),
  display_image: N(
    "Image to show: the registry's, else the URI's JSON `image`; an `ipfs://` image is given through the configured IPFS gateway (NFT_METADATA_IPFS_GATEWAY), a `data:image/…` one as is, any other scheme as null.",
  ),
  display_image_cdn_url: N("Cached copy of the image; null (this service keeps no image cache)."),
  display_image_cdn_preview_url: N("Cached preview of the image; null (this service keeps no image cache)."),
};

const NftDetailsSchema = Type.Object(
  {
    address: Type.String({ description: "Base58 NFT contract address." }),
    token_id: Type.String({ description: "64-hex NFT token id." }),
    collection_address: Type.String({ description: "The collection (the contract that created the NFT)." }),
    ...DISPLAY,
    token_uri: N("The token URI the NFT contract gives (INFT `getTokenUri`)."),
    token_uri_state: uriState("token URI"),
    owner_address: N("Current holder; null (NFT holdings are not indexed per token yet)."),
    index_in_collection: N("Index in the collection (decimal string)."),
    dapp: N("Dapp of the NFT contract or of its collection."),
    minter: N(),
    mint_tx: N(),
    mint_time: Nullable(Type.Number({ description: "Unix ms." })),
  },
  { $id: "NftDetails", title: "NftDetails" },
);

const NftTraitSchema = Type.Object(
  {
    trait_key: Type.String({ description: "The attribute's `trait_type`." }),
    value_text: Type.String({ description: "The attribute's value as text." }),
    display_order: Type.Integer({ description: "Position among the NFT's traits." }),
  },
  { $id: "NftTrait", title: "NftTrait" },
);

const NftCollectionDetailsSchema = Type.Object(
  {
    address: Type.String(),
    collection_id: Type.String(),
    ...DISPLAY,
    collection_uri: N(
      "The collection URI the collection contract gives (INFTCollection `getCollectionUri`); null for a parent that is no collection contract (the Token Furnace).",
    ),
    collection_uri_state: uriState("collection URI"),
    std_interface_id: N(),
    total_supply: N(),
    token_count: Type.Integer(),
    dapp: N(),
    created_tx: N(),
    created_at: Nullable(Type.Number({ description: "Unix ms." })),
  },
  { $id: "NftCollectionDetails", title: "NftCollectionDetails" },
);

const TraitDefinitionSchema = Type.Object(
  {
    trait_key: Type.String(),
    count: Type.Integer({ description: "NFTs of the collection with this trait." }),
    values: Type.Array(Type.Object({ value_text: Type.String(), count: Type.Integer() })),
  },
  { $id: "NftTraitDefinition", title: "NftTraitDefinition" },
);

const Paging = {
  page: Type.Integer({ minimum: 1, maximum: INT32_MAX, default: 1 }),
  pageSize: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
};
const AddressParams = Type.Object({
  address: Type.String({ pattern: "^[1-9A-HJ-NP-Za-km-z]{20,60}$", description: "Collection address." }),
});

export async function nftRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(CollectionSchema);
  app.addSchema(NftTokenSchema);
  app.addSchema(NftDetailsSchema);
  app.addSchema(NftTraitSchema);
  app.addSchema(NftCollectionDetailsSchema);
  app.addSchema(TraitDefinitionSchema);
  const dappOf = async (address: string) => (await need("registry").getContract(address))?.dapp_id ?? null;
  const gateway = deps.config.NFT_METADATA_IPFS_GATEWAY;
  /** The cached metadata of a URI: its state, and the JSON's fields when it was read. */
  const metadataOf = async (uri: string | null) => {
    if (!uri) return { state: "none" as const, meta: null };
    const row: NftMetadataRow | undefined = (await need("registry").nftMetadata([uri])).get(uri);
    return { state: row?.state ?? ("pending" as const), meta: row?.state === "ok" ? row : null };
  };

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
      return { ...(await need("registry").listNftCollections({ page, pageSize, search })), page, pageSize };
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
      const collection = await need("registry").getNftCollection(request.params.address);
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
      if (!(await need("registry").getNftCollection(address)))
        throw notFound(`NFT collection ${address} not found`);
      const { page, pageSize } = request.query;
      return {
        collection_address: address,
        ...(await need("registry").listNftTokens(address, { page, pageSize })),
        page,
        pageSize,
      };
    },
  );

  app.get(
    "/nft/:address/details",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["NFT"],
        summary: "One NFT with its traits, as the AlphScan explorer reads it",
        description:
          "`address` is the NFT's base58 contract address or its 64-hex token id. The display fields come from the " +
          "registry, else from the token URI's JSON, which the job worker fetches in the background " +
          "(`token_uri_state` says how far it got; this call never waits on a remote server). `traits` are the ones " +
          "the chain gives (a BurnerNFT's burn), else the token URI's `attributes` (`trait_type`, `value`); empty " +
          "while neither is known.",
        params: Type.Object({
          address: Type.String({
            pattern: "^([0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{20,60})$",
            description: "NFT contract address or token id.",
          }),
        }),
        response: {
          200: Type.Object({ nft: Type.Ref("NftDetails"), traits: Type.Array(Type.Ref("NftTrait")) }),
          400: Type.Ref("Problem"),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const token = await need("registry").getNftToken(request.params.address);
      if (!token) throw notFound(`NFT ${request.params.address} not found`);
      const address = addressFromContractId(token.token_id);
      const collection = await need("registry").getNftCollection(token.collection_address);
      const dapp = (await dappOf(address)) ?? (await dappOf(token.collection_address));
      const { state, meta } = await metadataOf(token.uri);
      const name =
        token.name ??
        meta?.name ??
        (collection?.name && token.nft_index !== null ? `${collection.name} #${token.nft_index}` : null);
      const traits = token.traits?.length ? token.traits : (meta?.attributes ?? []);
      return {
        nft: {
          address,
          token_id: token.token_id,
          collection_address: token.collection_address,
          display_name: name,
          display_description: meta?.description ?? null,
          display_image: displayImage(token.image ?? meta?.image, gateway),
          display_image_cdn_url: null,
          display_image_cdn_preview_url: null,
          token_uri: token.uri,
          token_uri_state: state,
          owner_address: null,
          index_in_collection: token.nft_index,
          dapp,
          minter: token.minter,
          mint_tx: token.mint_tx,
          mint_time: token.mint_time,
        },
        traits: traits.map((t, i) => ({
          trait_key: t.trait_key,
          value_text: t.value_text,
          display_order: i,
        })),
      };
    },
  );

  app.get(
    "/nft/collection/:address/details",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["NFT"],
        summary: "One NFT collection with its trait definitions, as the AlphScan explorer reads it",
        description:
          "The same collection as `GET /nft/collections/{address}` (both answer), with the display fields (from the " +
          "registry, else the collection URI's JSON once the job worker fetched it) and `trait_definitions`: every " +
          "trait key of its NFTs (the chain's traits, else their token URIs' attributes) with its values and counts.",
        params: AddressParams,
        response: {
          200: Type.Object({
            collection: Type.Ref("NftCollectionDetails"),
            trait_definitions: Type.Array(Type.Ref("NftTraitDefinition")),
          }),
          400: Type.Ref("Problem"),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const c = await need("registry").getNftCollection(request.params.address);
      if (!c) throw notFound(`NFT collection ${request.params.address} not found`);
      const { state, meta } = await metadataOf(c.uri);
      return {
        collection: {
          address: c.address,
          collection_id: c.collection_id,
          display_name: c.name ?? meta?.name ?? null,
          display_description: c.description ?? meta?.description ?? null,
          display_image: displayImage(c.image ?? meta?.image, gateway),
          display_image_cdn_url: null,
          display_image_cdn_preview_url: null,
          collection_uri: c.uri,
          collection_uri_state: state,
          std_interface_id: c.std_interface_id,
          total_supply: c.total_supply,
          token_count: c.token_count,
          dapp: await dappOf(c.address),
          created_tx: c.created_tx,
          created_at: c.created_at,
        },
        trait_definitions: await need("registry").nftTraitDefinitions(c.address),
      };
    },
  );
}
