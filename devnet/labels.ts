/**
 * Labels of the simulated network's own contracts (`address_labels`, source `devnet`) for the demo: the DEX
 * factory and its pairs (dapp `devnet-dex`), the oracle and its feeder, so `GET /addresses/{address}/labels` and
 * the events' `address_labels` show data on a fresh start. Only `start --devnet` calls it: the tests' pipelines
 * keep unlabelled contracts. Idempotent; a label an admin changed is kept.
 */
import { ALPH_TOKEN_ID } from "../lib/chain/types.ts";
import type { Pg } from "../lib/stores/postgres.ts";
import type { DevnetChain } from "./chain.ts";
import { DEVNET_DAPP } from "./register.ts";

/** Source of the labels this file writes. */
export const DEVNET_LABEL_SOURCE = "devnet";

interface DevnetLabel {
  address: string;
  label: string;
  metadata: { type: string; name: string; state: string; dapp_id?: string };
}

/** The labels of a devnet's planned contracts (known before the blocks that create them). */
export function devnetLabels(chain: DevnetChain): DevnetLabel[] {
  const plan = chain.plan();
  const symbol = (id: string) =>
    id === ALPH_TOKEN_ID ? "ALPH" : (plan.tokens.find((t) => t.id === id)?.symbol ?? id.slice(0, 8));
  const labels: DevnetLabel[] = [];
  if (plan.factory) {
    labels.push({
      address: plan.factory.address,
      label: "Devnet DEX: factory",
      metadata: { type: "contract", name: "DEX factory", state: "active", dapp_id: DEVNET_DAPP },
    });
  }
  for (const pool of plan.pools) {
    const pair = `${symbol(pool.token0)}/${symbol(pool.token1)}`;
    labels.push({
      address: pool.address,
      label: `Devnet DEX: ${pair}`,
      metadata: { type: "contract", name: `${pair} pool`, state: "active", dapp_id: DEVNET_DAPP },
    });
  }
  labels.push(
    {
      address: plan.oracle.address,
      label: "Devnet oracle",
      metadata: { type: "contract", name: "Price oracle", state: "active" },
    },
    {
      address: plan.oracle.feeder,
      label: "Devnet oracle feeder",
      metadata: { type: "address", name: "Oracle feeder", state: "active" },
    },
  );
  return labels;
}

export async function labelDevnetContracts(pg: Pg, chain: DevnetChain): Promise<void> {
  const labels = devnetLabels(chain);
  await pg.query(
    "devnet_labels",
    `INSERT INTO address_labels (address, source, label, mapped_label, metadata)
     SELECT x.address, $2, x.label, x.label, x.metadata
     FROM jsonb_to_recordset($1::jsonb) AS x(address text, label text, metadata jsonb)
     ON CONFLICT (address, source) DO NOTHING`,
    [JSON.stringify(labels), DEVNET_LABEL_SOURCE],
  );
}
