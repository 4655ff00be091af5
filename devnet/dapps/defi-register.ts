/**
 * Registration of the devnet's DeFi dapps, as an operator registers a new deployment: a `dapps` row per dapp,
 * a `decoder_contracts` row binding each contract to its decoder kind (lib/dapps/kinds.ts), and the Elexium
 * factory in `dex_factories` (velodrome liquidity layout, stable flag in field 2). From the plan, so it works
 * before the blocks creating the contracts exist; idempotent (ON CONFLICT DO NOTHING).
 */
import { DECODER_KIND, type DecoderKind } from "../../lib/dapps/kinds.ts";
import type { PgQueryable } from "../../lib/stores/postgres.ts";
import { DAPP } from "../../lib/tokens/known-contracts.ts";
import type { DevnetPlan } from "../types.ts";
import { myonionCodeHash } from "./myonion.ts";

/** One `decoder_contracts` row (columns in camelCase). */
export interface DevnetDecoderContract {
  contractAddress: string;
  dappId: string;
  decoder: DecoderKind;
  label: string;
  /** The code its layout fits (the code-hash guard's expected hash), where the devnet's code is fixed. */
  codeHash: string | null;
}

const DAPP_ROWS: [id: string, name: string, description: string][] = [
  [DAPP.elexium, "Elexium", "Velodrome-style DEX with volatile and stable pools (devnet deployment)."],
  [DAPP.alphbanx, "AlphBanX", "ALPH-backed loans in the ABD stablecoin, ABX staking (devnet deployment)."],
  [DAPP.deadrare, "DeadRare", "NFT marketplace (devnet deployment)."],
  [DAPP.myonion, "MyOnion.fun", "Bonding-curve token launchpad (devnet deployment)."],
  [DAPP.wormhole, "Wormhole (Alephium Bridge)", "Token bridge to Ethereum and BSC (devnet deployment)."],
];

/** The devnet's dapp contracts and their decoder kinds, in a fixed order. */
export function devnetDecoderContracts(plan: DevnetPlan): DevnetDecoderContract[] {
  const row = (
    address: string,
    dappId: string,
    decoder: DecoderKind,
    label: string,
    codeHash: string | null = null,
  ): DevnetDecoderContract => ({
    contractAddress: address,
    dappId,
    decoder,
    label: `Devnet ${label}`,
    codeHash,
  });
  const { elexium, alphbanx: ab, deadrare, myonion, wormhole } = plan;
  return [
    row(elexium.factory.address, DAPP.elexium, DECODER_KIND.elexiumFactory, "Elexium pool factory"),
    row(ab.borrower.address, DAPP.alphbanx, DECODER_KIND.alphbanxBorrower, "AlphBanX borrower operations"),
    row(ab.loanManager.address, DAPP.alphbanx, DECODER_KIND.alphbanxLoanManager, "AlphBanX loan manager"),
    row(ab.stake.address, DAPP.alphbanx, DECODER_KIND.alphbanxStake, "AlphBanX stake manager"),
    row(ab.auction.address, DAPP.alphbanx, DECODER_KIND.alphbanxAuction, "AlphBanX auction manager"),
    row(ab.abd.address, DAPP.alphbanx, DECODER_KIND.alphbanxAbd, "AlphBanX ABD token"),
    row(ab.abx.address, DAPP.alphbanx, DECODER_KIND.alphbanxAbx, "AlphBanX ABX token"),
    row(deadrare.marketplace.address, DAPP.deadrare, DECODER_KIND.deadrare, "DeadRare marketplace"),
    row(
      myonion.launcher.address,
      DAPP.myonion,
      DECODER_KIND.myonionLauncher,
      "MyOnion TokenLauncher",
      myonionCodeHash("launcher", 1),
    ),
    row(
      myonion.router.address,
      DAPP.myonion,
      DECODER_KIND.myonionRouter,
      "MyOnion OnionRouter",
      myonionCodeHash("router", 1),
    ),
    row(wormhole.governance.address, DAPP.wormhole, DECODER_KIND.wormholeGovernance, "Wormhole governance"),
    row(wormhole.tokenBridge.address, DAPP.wormhole, DECODER_KIND.wormholeBridge, "Wormhole TokenBridge"),
    row(
      wormhole.bridgeForChain.address,
      DAPP.wormhole,
      DECODER_KIND.wormholeBridgeForChain,
      "Wormhole TokenBridgeForChain Ethereum",
    ),
  ];
}

/** Inserts the dapps, their decoder bindings and the Elexium factory (inside the caller's transaction). */
export async function registerDefiDapps(pg: PgQueryable, plan: DevnetPlan, now: number): Promise<void> {
  for (const [id, name, description] of DAPP_ROWS)
    await pg.query(
      "devnet_defi_dapp",
      `INSERT INTO dapps (id, name, description, website, logo, deleted, created_at, updated_at)
       VALUES ($1, $2, $3, NULL, NULL, false, $4, $4) ON CONFLICT (id) DO NOTHING`,
      [id, name, description, now],
    );
  for (const r of devnetDecoderContracts(plan))
    await pg.query(
      "devnet_decoder_contract",
      `INSERT INTO decoder_contracts (contract_address, dapp_id, decoder, label, code_hash) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (contract_address) DO NOTHING`,
      [r.contractAddress, r.dappId, r.decoder, r.label, r.codeHash],
    );
  // Velodrome-style layout: PoolCreated(token0, token1, stable, pool, count) = 0; Mint 1, Burn 2, Swap 3 on pools.
  await pg.query(
    "devnet_elexium_factory",
    `INSERT INTO dex_factories (factory_address, dapp_id, created_event_index, token0_field, token1_field, pool_field,
       swap_event_index, mint_event_index, burn_event_index, stable_field, liquidity_layout)
     VALUES ($1, $2, 0, 0, 1, 3, 3, 1, 2, 2, 'velodrome') ON CONFLICT (factory_address) DO NOTHING`,
    [plan.elexium.factory.address, DAPP.elexium],
  );
}
