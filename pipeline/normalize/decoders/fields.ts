/**
 * Typed access to a contract event's fields against the layout a decoder expects. A layout mismatch is not an
 * exception: the decoder returns a `DecodeFailure` and the normalizer keeps the generic event with its sentence.
 */
import type { node } from "@alephium/web3";
import type { ContractEvent, Draft, TxScope } from "../draft.ts";

export type FieldType = "Address" | "U256" | "I256" | "Bool" | "ByteVec";

/** Why an event of a decoder's contract could not be decoded (a human sentence, expected vs actual). */
export interface DecodeFailure {
  decode_error: string;
}

/** Drafts of one event, a failure, or undefined when the decoder does not know the event index. */
export type DecodeResult = Draft[] | DecodeFailure | undefined;

export type EventDecoder = (s: TxScope, ev: ContractEvent) => DecodeResult;

export function isFailure(r: DecodeResult): r is DecodeFailure {
  return r !== undefined && !Array.isArray(r);
}

export function failure(decode_error: string): DecodeFailure {
  return { decode_error };
}

/** Values of fields whose types matched the layout. */
export interface Fields {
  str(i: number): string;
  big(i: number): bigint;
  bool(i: number): boolean;
}

const VALUE: Record<FieldType, (v: unknown) => boolean> = {
  Address: (v) => typeof v === "string" && v.length > 0,
  U256: (v) => typeof v === "string" && /^\d{1,78}$/.test(v),
  I256: (v) => typeof v === "string" && /^-?\d{1,78}$/.test(v),
  Bool: (v) => typeof v === "boolean",
  ByteVec: (v) => typeof v === "string" && /^([0-9a-fA-F]{2})*$/.test(v),
};

const typesOf = (fields: readonly node.Val[]) => `[${fields.map((f) => f.type).join(", ")}]`;

/** The event's fields when they have exactly `types`, else a failure naming the event and both layouts. */
export function fieldsOf(
  ev: ContractEvent,
  name: string,
  types: readonly FieldType[],
): Fields | DecodeFailure {
  const expected = `${types.length} fields [${types.join(", ")}]`;
  const head = `${name} (event ${ev.eventIndex}) expects ${expected}`;
  if (ev.fields.length !== types.length || types.some((t, i) => ev.fields[i]?.type !== t))
    return failure(`${head} but got ${ev.fields.length} fields ${typesOf(ev.fields)}`);
  const bad = types.findIndex((t, i) => !VALUE[t](ev.fields[i]?.value));
  if (bad >= 0)
    return failure(
      `${head} but field ${bad} (${types[bad]}) has the undecodable value ${JSON.stringify(ev.fields[bad]?.value)}`,
    );
  const raw = (i: number) => ev.fields[i]!.value;
  return {
    str: (i) => String(raw(i)),
    big: (i) => BigInt(raw(i) as string),
    bool: (i) => raw(i) === true,
  };
}

export function isFields(v: Fields | DecodeFailure): v is Fields {
  return !("decode_error" in v);
}

/** UTF-8 text of a ByteVec; undefined when the bytes are not valid UTF-8. */
export function utf8(hex: string): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(hex, "hex"));
  } catch {
    return undefined;
  }
}

export const HEX64 = /^[0-9a-f]{64}$/;

/** A U256 time as a safe JS number of ms (`scale` 1000 for seconds), undefined when out of range. */
export function msOf(value: bigint, scale: 1 | 1000): number | undefined {
  const ms = value * BigInt(scale);
  return ms <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(ms) : undefined;
}
