/**
 * Registration of the devnet's randomness oracle, Token Furnaces and Chain Reaction contracts the way an operator
 * registers a deployment: a `decoder_contracts` row per contract (its decoder kind and dapp; rooms and burner
 * NFTs are learned from their parents), and the dapps' `dapps` rows when missing (named as seeding names them).
 * The price oracle is registered as `dia-price` too, so its updates decode like DIA's. Idempotent (ON CONFLICT
 * DO NOTHING): an operator's change stays.
 */
import { DECODER_KIND, type DecoderKind } from "../../lib/dapps/kinds.ts";
import type { PgQueryable } from "../../lib/stores/postgres.ts";
import { DAPP } from "../../lib/tokens/known-contracts.ts";
import { SEED_DAPPS } from "../../lib/tokens/seed.ts";
import type { DevnetPlan } from "../types.ts";

/** Chain Reaction's dapp id (`DAPP` in lib/tokens/known-contracts.ts has no entry for it yet). */
export const CHAIN_REACTION_DAPP = "chainreaction";

/** A `decoder_contracts` row of the devnet (columns in camelCase). */
export interface DevnetDecoderContract {
  contractAddress: string;
  dappId: string;
  decoder: DecoderKind;
  label: string;
}

/** The rows for a plan: price oracle, randomness oracle, furnaces (group order), V2 factory, V1, hub. */
export function devnetDecoderContracts(plan: DevnetPlan): DevnetDecoderContract[] {
  const cr = plan.chainReaction;
  return [
    {
      contractAddress: plan.oracle.address,
      dappId: DAPP.dia,
      decoder: DECODER_KIND.diaPrice,
      label: "Devnet price oracle",
    },
    {
      contractAddress: plan.randomness.address,
      dappId: DAPP.dia,
      decoder: DECODER_KIND.diaRandom,
      label: "Devnet randomness oracle",
    },
    ...plan.furnaces.map((f) => ({
      contractAddress: f.address,
      dappId: DAPP.tokenFurnace,
      decoder: DECODER_KIND.furnace,
      label: `Devnet Token Furnace (group ${f.group})`,
    })),
    {
      contractAddress: cr.factoryV2.address,
      dappId: CHAIN_REACTION_DAPP,
      decoder: DECODER_KIND.chainReactionV2,
      label: "Devnet FactoryChainReactionV2",
    },
    {
      contractAddress: cr.v1.address,
      dappId: CHAIN_REACTION_DAPP,
      decoder: DECODER_KIND.chainReactionV1,
      label: "Devnet Chain Reaction V1",
    },
    {
      contractAddress: cr.hub.address,
      dappId: CHAIN_REACTION_DAPP,
      decoder: DECODER_KIND.guessingHub,
      label: "Devnet Number Guessing War hub",
    },
  ];
}

export async function registerGamesDapps(pg: PgQueryable, plan: DevnetPlan, now: number): Promise<void> {
  const rows = devnetDecoderContracts(plan);
  for (const id of new Set(rows.map((r) => r.dappId))) {
    const seeded = SEED_DAPPS.find((d) => d.id === id);
    await pg.query(
      "devnet_games_dapp",
      `INSERT INTO dapps (id, name, description, website, logo, deleted, created_at, updated_at)
       VALUES ($1, $2, NULL, $3, NULL, false, $4, $4) ON CONFLICT (id) DO NOTHING`,
      [id, seeded?.name ?? id, seeded?.website ?? null, now],
    );
  }
  for (const r of rows)
    await pg.query(
      "devnet_decoder_contract",
      `INSERT INTO decoder_contracts (contract_address, dapp_id, decoder, label) VALUES ($1, $2, $3, $4)
       ON CONFLICT (contract_address) DO NOTHING`,
      [r.contractAddress, r.dappId, r.decoder, r.label],
    );
}
