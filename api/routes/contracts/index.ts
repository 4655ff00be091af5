/** Contracts group: the registry entry of a contract with the dapp it is attributed to. */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { Nullable } from "../../schemas.ts";
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
    updated_at: Type.Number({ description: "Unix ms." }),
  },
  { $id: "Contract", title: "Contract" },
);

export async function contractRoutes(app: App, deps: ApiDeps): Promise<void> {
  app.addSchema(ContractSchema);

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
      const contract = await deps.registry!.getContract(request.params.address);
      if (!contract) throw notFound(`Contract ${request.params.address} not found`);
      const dapp = contract.dapp_id ? await deps.registry!.getDapp(contract.dapp_id) : null;
      return { contract, dapp };
    },
  );
}
