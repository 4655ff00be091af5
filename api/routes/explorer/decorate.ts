/**
 * The decoration of explorer objects, under `key` (DECORATION_KEY: SPEC.md's `ext`, AlphScan's `alphscan`). Every
 * function makes at most one events query (`byTransactions`) and one labels query per response, whatever the
 * number of transactions.
 */

import type { ApiEvent, EventsService } from "../../../lib/events/service.ts";
import type { ExplorerObject } from "../../../lib/explorer-client.ts";
import type { AddressLabel } from "../../../lib/labels/repo.ts";

/** The decoration of a transaction list item (SPEC "Events" point 4). */
export interface ListItemExt {
  main_event_pending: boolean;
  dapp_id?: string;
  category?: string;
  sub_kind?: string;
  type?: string;
  address_labels?: Record<string, AddressLabel>;
}

const txHash = (tx: ExplorerObject): string => (typeof tx.hash === "string" ? tx.hash.toLowerCase() : "");

/** Addresses of a transaction's inputs and outputs (explorer `address` fields), deduplicated. */
export function ioAddresses(tx: ExplorerObject): string[] {
  const out = new Set<string>();
  for (const side of [tx.inputs, tx.outputs]) {
    if (!Array.isArray(side)) continue;
    for (const io of side) {
      const a = (io as { address?: unknown } | null)?.address;
      if (typeof a === "string" && a) out.add(a);
    }
  }
  return [...out];
}

/** The main event of a transaction's events (the normalizer marks exactly one per transaction). */
export function mainEvent(events: readonly ApiEvent[] | undefined): ApiEvent | undefined {
  return events?.find((e) => e.is_main) ?? events?.[0];
}

/** Labels of the transaction's input/output addresses plus the main event's labelled addresses. */
function labelsFor(
  tx: ExplorerObject,
  labels: Record<string, AddressLabel>,
  main: ApiEvent | undefined,
): Record<string, AddressLabel> | undefined {
  const own: Record<string, AddressLabel> = { ...main?.address_labels };
  for (const a of ioAddresses(tx)) {
    const l = labels[a];
    if (l) own[a] = l;
  }
  return Object.keys(own).length > 0 ? own : undefined;
}

/** Events of the transactions and labels of their input/output addresses: two queries, run together. */
async function lookup(repo: EventsService, txs: readonly ExplorerObject[]) {
  const ids = [...new Set(txs.map(txHash).filter(Boolean))];
  const [events, labels] = await Promise.all([
    repo.byTransactions(ids),
    repo.labels(new Set(txs.flatMap(ioAddresses))),
  ]);
  return { events, labels };
}

/** `GET /transaction/{id}`: the explorer object plus the decoration { events, meta, address_labels? }. */
export async function decorateTransaction(
  repo: EventsService,
  tx: ExplorerObject,
  key: string,
): Promise<ExplorerObject> {
  const { events, labels } = await lookup(repo, [tx]);
  const own = events.get(txHash(tx)) ?? [];
  const addressLabels = labelsFor(tx, labels, mainEvent(own));
  return {
    ...tx,
    [key]: {
      events: own,
      meta: { payload_chunk_hydration_enabled: repo.hydration },
      ...(addressLabels ? { address_labels: addressLabels } : {}),
    },
  };
}

/** Lists: each transaction gets the decoration { main_event_pending, and the main event's kind when it exists }. */
export async function decorateList(
  repo: EventsService,
  txs: ExplorerObject[],
  key: string,
): Promise<ExplorerObject[]> {
  if (txs.length === 0) return [];
  const { events, labels } = await lookup(repo, txs);
  return txs.map((tx) => {
    const main = mainEvent(events.get(txHash(tx)));
    const addressLabels = labelsFor(tx, labels, main);
    const ext: ListItemExt = main
      ? {
          main_event_pending: false,
          dapp_id: main.dapp_id,
          category: main.category,
          sub_kind: main.sub_kind,
          type: main.type,
        }
      : { main_event_pending: true };
    if (addressLabels) ext.address_labels = addressLabels;
    return { ...tx, [key]: ext };
  });
}

/**
 * `GET /block/{hash}` with its first page of transactions: `genesis_mints` (main events with category
 * `token`, sub_kind `genesis_mint`) and `coinbases` (main events of coinbase transactions), null when none.
 */
export async function decorateBlock(
  repo: EventsService,
  block: ExplorerObject,
  txs: readonly ExplorerObject[],
  key: string,
): Promise<ExplorerObject> {
  const ids = [...new Set(txs.map(txHash).filter(Boolean))];
  const events = await repo.byTransactions(ids);
  const genesisMints: ApiEvent[] = [];
  const coinbases: ApiEvent[] = [];
  for (const tx of txs) {
    const main = mainEvent(events.get(txHash(tx)));
    if (!main) continue;
    if (main.category === "token" && main.sub_kind === "genesis_mint") genesisMints.push(main);
    if (tx.coinbase === true) coinbases.push(main);
  }
  return {
    ...block,
    [key]: {
      genesis_mints: genesisMints.length > 0 ? genesisMints : null,
      coinbases: coinbases.length > 0 ? coinbases : null,
    },
  };
}
