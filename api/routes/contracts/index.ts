/** Contracts group: the registry entry of a contract with the dapp it is attributed to. */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { contractDetails, stateFields } from "../../../lib/tokens/contract-details.ts";
import { requireDb } from "../../require-db.ts";
import { INT32_MAX, Nullable } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const ContractSchema = Type.Object(
  {
    address: Type.String({ description: "Base58 contract address." }),
    contract_id: Type.String({ description: "64-hex contract id." }),
    group: Type.Integer({ description: "Group of the contract (0-3)." }),
    dapp_id: Nullable(Type.String({ description: "Dapp its events are attributed to." })),
    kind: Type.String({ description: "`token`, `pool`, `nft_collection`, `nft` or `unknown`." }),
    std_interface_id: Nullable(
      Type.String({ description: "Standard interface id (hex), e.g. 0001 fungible token." }),
    ),
    created_tx: Nullable(Type.String()),
    created_at: Nullable(Type.Number({ description: "Creation time, Unix ms." })),
    registered: Type.Boolean({ description: "Known to the curated registry (not only seen on chain)." }),
    label: Nullable(Type.String()),
    parent_address: Nullable(
      Type.String({ description: "The contract that created it (its ContractCreated event's parent)." }),
    ),
    n_childs: Type.Integer({ description: "Contracts it created." }),
    updated_at: Type.Number({ description: "Unix ms." }),
  },
  { $id: "Contract", title: "Contract" },
);

const S = (description?: string) => Nullable(Type.String({ description }));

const ContractDetailsSchema = Type.Object(
  {
    address: Type.String({ description: "Base58 contract address." }),
    contract_id: Type.String({ description: "64-hex contract id." }),
    parent_address: S("The contract that created it; null when a script deployed it."),
    n_childs: Type.Integer({ description: "Contracts it created (GET /contract/{address}/children)." }),
    level: Type.Integer({
      description: "Depth below its first ancestor a script deployed: 0, 1 for a child…",
    }),
    dapp: S("Dapp id its events are attributed to."),
    dapp_name: S(),
    interface_id: S("Standard interface id (hex): 0001 fungible token, 0002 NFT collection, 0003 NFT."),
    contract_name: S("Its registry label, else its token's, NFT's or collection's name."),
    kind: Type.String({ description: "`token`, `pool`, `nft_collection`, `nft` or `unknown`." }),
    token_symbol: S("Symbol of the token it issued."),
    minter: S("Who minted its token or NFT."),
    mint_tx: S("Transaction that minted its token or NFT."),
    created_tx: S(),
    created_at: Nullable(Type.Number({ description: "Creation time, Unix ms." })),
    last_upgrade_date: S(
      "ISO time of the block that last migrated its code (code-hash guard), null if never.",
    ),
    token_lp_kind: S("`dex_pair` for a DEX pool's LP token, else null."),
    nft_registry_kind: S("`collection` or `nft` when the NFT registry holds it."),
    nft_registry_collection_address: S(),
    nft_registry_name: S(
      "The NFT's or collection's name: the registry's, else its URI's JSON `name` once fetched.",
    ),
    nft_registry_image: S(
      "The NFT's or collection's image: the registry's, else its URI's JSON `image` once fetched (`ipfs://` through the IPFS gateway).",
    ),
    dia_oracle_display: Nullable(
      Type.Record(Type.String(), Nullable(Type.String()), {
        description: "DIA oracle display values; null (no DIA oracle is decoded into this record yet).",
      }),
    ),
    token_metadata: Nullable(
      Type.Object({
        website: S(),
        name: S(),
        decimals: Nullable(Type.Integer()),
      }),
    ),
    contract_metadata: Type.Object({
      registered: Type.Boolean(),
      label: S(),
      updated_at: Type.Number({ description: "Unix ms." }),
    }),
  },
  { $id: "ContractDetails", title: "ContractDetails" },
);

const ContractFieldSchema = Type.Object(
  {
    field_index: Type.Integer({
      description: "Index in the node's order: immutable fields, then mutable ones.",
    }),
    field_name: S("Name where the layout is known (fungible-token standard, DEX pair), else null."),
    mutable: Type.Boolean(),
    type: Type.String({ description: "Node value type: U256, I256, Bool, ByteVec, Address." }),
    value_text: Type.String({ description: "The value as the node gives it (ByteVec in hex)." }),
    parsed_value_text: Type.String({ description: "A ByteVec's printable UTF-8 text, else value_text." }),
    resolved_address: S("A 32-byte id or an Address read as a contract address."),
    resolved_label: S("The registry label of that contract."),
    resolved_token_symbol: S("The symbol of that token."),
  },
  { $id: "ContractField", title: "ContractField" },
);

const AddressParams = Type.Object({
  address: Type.String({
    pattern: "^([0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{20,60})$",
    description: "Base58 contract address or 64-hex contract id.",
  }),
});

export async function contractRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(ContractSchema);
  app.addSchema(ContractDetailsSchema);
  app.addSchema(ContractFieldSchema);
  const node = deps.contractState;

  app.get(
    "/contracts/:address",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Contracts"],
        summary: "A contract's registry entry and its dapp",
        description:
          "`address` is a base58 contract address or a 64-hex contract id; `dapp` is null when unattributed.",
        params: Type.Object({
          address: Type.String({ pattern: "^([0-9a-fA-F]{64}|[1-9A-HJ-NP-Za-km-z]{20,60})$" }),
        }),
        response: {
          200: Type.Object({ contract: Type.Ref("Contract"), dapp: Nullable(Type.Ref("Dapp")) }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const contract = await need("registry").getContract(request.params.address);
      if (!contract) throw notFound(`Contract ${request.params.address} not found`);
      const dapp = contract.dapp_id ? await need("registry").getDapp(contract.dapp_id) : null;
      return { contract, dapp };
    },
  );

  app.get(
    "/contract/:address/details",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Contracts"],
        summary: "A contract's record and its state, as the AlphScan explorer reads them",
        description:
          "`contract`: the registry's record with its parent (creator), children count, depth (`level`), dapp, " +
          "interface, token, NFT registry entry and last upgrade. `fields`: its state from the node " +
          "(`GET /contracts/{address}/state`), parsed, named where the layout is known; `fields_source` is " +
          "`node`, or `unavailable` (empty `fields`) when the node did not answer or does not know the contract.",
        params: AddressParams,
        response: {
          200: Type.Object({
            contract: Type.Ref("ContractDetails"),
            fields: Type.Array(Type.Ref("ContractField")),
            fields_source: Type.Union([Type.Literal("node"), Type.Literal("unavailable")]),
          }),
          400: Type.Ref("Problem"),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const contract = await need("registry").getContract(request.params.address);
      if (!contract) throw notFound(`Contract ${request.params.address} not found`);
      const record = await contractDetails(need("pg"), need("registry"), contract, {
        ipfsGateway: deps.config.NFT_METADATA_IPFS_GATEWAY,
      });
      let state = null;
      try {
        state = node ? await node.state(contract.address) : null;
      } catch (error) {
        request.log.warn({ err: error, address: contract.address }, "Contract state unavailable.");
      }
      const fields = state ? await stateFields(need("registry"), contract, state) : [];
      return {
        contract: record,
        fields,
        fields_source: state ? ("node" as const) : ("unavailable" as const),
      };
    },
  );

  app.get(
    "/contract/:address/children",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Contracts"],
        summary: "The contracts a contract created",
        description:
          "Contracts whose ContractCreated event names this one as parent, oldest first; each with its own " +
          "`parent_address` and `n_childs`. Paged as the other lists (`page` from 1, `pageSize` up to 500).",
        params: AddressParams,
        querystring: Type.Object({
          page: Type.Integer({ minimum: 1, maximum: INT32_MAX, default: 1 }),
          pageSize: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
        }),
        response: {
          200: Type.Object({
            address: Type.String(),
            contracts: Type.Array(Type.Ref("Contract")),
            total: Type.Integer(),
            page: Type.Integer(),
            pageSize: Type.Integer(),
          }),
          400: Type.Ref("Problem"),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const contract = await need("registry").getContract(request.params.address);
      if (!contract) throw notFound(`Contract ${request.params.address} not found`);
      const { page, pageSize } = request.query;
      return {
        address: contract.address,
        ...(await need("registry").listContractChildren(contract.address, { page, pageSize })),
        page,
        pageSize,
      };
    },
  );
}
