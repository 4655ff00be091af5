/** DeadRare marketplace (layout per a third-party indexer plugin, inferred): 0 listed, 1 sold, 2 cancelled, 3 price updated. */
import { DAPP_UNKNOWN, type SubKind } from "../../../lib/chain/taxonomy.ts";
import { type ContractEvent, dappOf, draft, type TxScope } from "../draft.ts";
import { type DecodeResult, type Fields, type FieldType, fieldsOf, isFields } from "./fields.ts";

interface MarketEvent {
  name: string;
  sub_kind: SubKind;
  types: readonly FieldType[];
  /** Field positions of listingId, tokenId, collectionId. */
  ids: [number, number, number];
  read(f: Fields): { to: string; extra: Record<string, unknown> };
}

const EVENTS: Record<number, MarketEvent> = {
  0: {
    name: "listed",
    sub_kind: "listed",
    types: ["U256", "U256", "ByteVec", "ByteVec", "Address", "ByteVec"],
    ids: [1, 2, 3],
    read: (f) => ({
      to: "",
      extra: { price: f.big(0).toString(), seller: f.str(4), listing_contract_id: f.str(5).toLowerCase() },
    }),
  },
  1: {
    name: "sold",
    sub_kind: "sold",
    types: ["U256", "U256", "ByteVec", "ByteVec", "Address", "Address"],
    ids: [1, 2, 3],
    read: (f) => ({ to: f.str(5), extra: { price: f.big(0).toString(), seller: f.str(4), buyer: f.str(5) } }),
  },
  2: {
    name: "cancelled",
    sub_kind: "cancelled",
    types: ["U256", "ByteVec", "ByteVec", "Address"],
    ids: [0, 1, 2],
    read: (f) => ({ to: "", extra: { seller: f.str(3) } }),
  },
  3: {
    name: "price updated",
    sub_kind: "price_updated",
    types: ["U256", "ByteVec", "ByteVec", "U256", "U256"],
    ids: [0, 1, 2],
    read: (f) => ({ to: "", extra: { old_price: f.big(3).toString(), new_price: f.big(4).toString() } }),
  },
};

export function decodeDeadRare(s: TxScope, ev: ContractEvent): DecodeResult {
  const spec = EVENTS[ev.eventIndex];
  if (!spec) return undefined;
  const f = fieldsOf(ev, spec.name, spec.types);
  if (!isFields(f)) return f;
  const [listing, token, collection] = spec.ids;
  const nft = f.str(token).toLowerCase();
  const r = spec.read(f);
  return [
    draft("nft", spec.sub_kind, "marketplace", {
      dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
      from: s.sender,
      to: r.to,
      with: ev.contractAddress,
      token_id: nft,
      amount: 1n,
      contract_address: ev.contractAddress,
      contract_event_index: ev.eventIndex,
      payload: {
        listing_id: f.big(listing).toString(),
        nft_token_id: nft,
        collection_id: f.str(collection).toLowerCase(),
        ...r.extra,
      },
    }),
  ];
}
