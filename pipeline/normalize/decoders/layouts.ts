/**
 * Decoders written as tables: each event index has its name, its fields' names and types (exactly as the
 * contract declares them) and the normalized triple it becomes; the payload carries every field by name (numbers
 * as decimal strings, byte vectors as lowercase hex, texts also as UTF-8). Used for layouts with no computation:
 * MyOnion's upgradable contracts, fee collector, comments and profiles, and Linx lending.
 */
import type { Category, EventType, SubKind } from "../../../lib/chain/taxonomy.ts";
import { DAPP_UNKNOWN } from "../../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import { type ContractEvent, dappOf, draft, type TxScope } from "../draft.ts";
import {
  type DecodeResult,
  type EventDecoder,
  type Fields,
  type FieldType,
  fieldsOf,
  isFields,
  utf8,
} from "./fields.ts";

export interface TableEvent {
  name: string;
  /** `[name, type]` per field, in the declared order. */
  fields: readonly (readonly [string, FieldType])[];
  triple: readonly [Category, SubKind, EventType];
  /** Byte-vector fields that hold text: the payload adds `<name>_text` with their UTF-8. */
  texts?: readonly string[];
  /** The event's parties, token and amount from its fields (all optional; token defaults to ALPH). */
  read?(
    f: Fields,
    at: (name: string) => number,
    s: TxScope,
    ev: ContractEvent,
  ): {
    to?: string;
    token?: string;
    amount?: bigint;
    extra?: Record<string, unknown>;
  };
}

function value(f: Fields, i: number, type: FieldType): unknown {
  if (type === "U256" || type === "I256") return f.big(i).toString();
  if (type === "Bool") return f.bool(i);
  if (type === "ByteVec") return f.str(i).toLowerCase();
  return f.str(i);
}

/** A decoder over `table`; indexes outside it are left to the generic event (undefined). */
export function tableDecoder(table: Readonly<Record<number, TableEvent>>): EventDecoder {
  return (s: TxScope, ev: ContractEvent): DecodeResult => {
    const spec = table[ev.eventIndex];
    if (!spec) return undefined;
    const f = fieldsOf(
      ev,
      spec.name,
      spec.fields.map(([, t]) => t),
    );
    if (!isFields(f)) return f;
    const payload: Record<string, unknown> = { event: spec.name };
    spec.fields.forEach(([name, type], i) => {
      payload[name] = value(f, i, type);
      if (spec.texts?.includes(name)) payload[`${name}_text`] = utf8(f.str(i)) ?? null;
    });
    const at = (name: string) => spec.fields.findIndex(([n]) => n === name);
    const r = spec.read?.(f, at, s, ev) ?? {};
    const [category, sub_kind, type] = spec.triple;
    return [
      draft(category, sub_kind, type, {
        dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
        from: s.sender,
        to: r.to ?? "",
        with: ev.contractAddress,
        token_id: r.token ?? ALPH_TOKEN_ID,
        amount: r.amount ?? 0n,
        contract_address: ev.contractAddress,
        contract_event_index: ev.eventIndex,
        payload: { ...payload, ...r.extra },
      }),
    ];
  };
}

/** Tables merged by index (a contract's own events after the shared upgrade events). */
export function tables(...parts: Readonly<Record<number, TableEvent>>[]): Record<number, TableEvent> {
  return Object.assign({}, ...parts);
}
