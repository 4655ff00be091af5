/**
 * Small pure helpers over node shapes: sender derivation, token/contract address conversion, typed access to
 * event fields and decimal formatting of ratios.
 */
import {
  addressFromContractId,
  binToHex,
  contractIdFromAddress,
  getSenderAddress,
  type node,
} from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";

/**
 * Signer of a tx, derived from its first asset input's unlockScript (P2PKH and P2SH; "" for no inputs or
 * unlock scripts that do not carry the key, e.g. Danube groupless P2PK — resolving those needs the spent UTXO).
 */
export function senderOf(tx: node.Transaction): string {
  const script = tx.unsigned.inputs[0]?.unlockScript;
  if (script === undefined) return "";
  // The address is a function of the unlock script alone (a key hash: BLAKE2b per call), and signers repeat:
  // memoized, bounded like the token addresses (the hash was 4 % of the pipeline's main thread, bench:pipeline).
  let sender = senderCache.get(script);
  if (sender === undefined) {
    if (senderCache.size >= 50_000) senderCache.clear();
    try {
      sender = getSenderAddress(tx);
    } catch {
      sender = "";
    }
    senderCache.set(script, sender);
  }
  return sender;
}

const senderCache = new Map<string, string>();

const addressCache = new Map<string, string>();

/** Base58 address of a token/contract id (64 hex); "" for ALPH. Memoized: ids repeat a lot. */
export function tokenAddressOf(tokenId: string): string {
  if (tokenId === ALPH_TOKEN_ID) return "";
  let address = addressCache.get(tokenId);
  if (address === undefined) {
    // Bounded: a long-running normalizer sees an ever-growing set of contract ids.
    if (addressCache.size >= 50_000) addressCache.clear();
    address = addressFromContractId(tokenId);
    addressCache.set(tokenId, address);
  }
  return address;
}

/** Contract id (64 hex) of a base58 contract address, or undefined when the address is not decodable. */
export function contractIdOf(address: string): string | undefined {
  try {
    return binToHex(contractIdFromAddress(address));
  } catch {
    return undefined;
  }
}

/** String value of field `index` when it has the expected node type (`Address`, `U256`, `ByteVec` ...). */
export function fieldOf(fields: readonly node.Val[], index: number, type: string): string | undefined {
  const f = fields[index];
  if (f === undefined || f.type !== type || typeof f.value !== "string") return undefined;
  return f.value;
}

/** True when the fields have exactly these node types, in order. */
export function hasShape(fields: readonly node.Val[], types: readonly string[]): boolean {
  return fields.length === types.length && types.every((t, i) => fields[i]?.type === t);
}

/** Parses a U256 decimal string; undefined when it is not one. */
export function u256(value: string | undefined): bigint | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return BigInt(value);
}

/**
 * `num / den` as a decimal string truncated to `scale` fractional digits, trailing zeros trimmed
 * ("4200000000000", "0.5"); "0" when `den` is 0 so a price is always a parseable number.
 */
export function ratio(num: bigint, den: bigint, scale = 18): string {
  if (den === 0n) return "0";
  const factor = 10n ** BigInt(scale);
  const scaled = (num * factor) / den;
  const int = scaled / factor;
  const frac = (scaled % factor).toString().padStart(scale, "0").replace(/0+$/, "");
  return frac === "" ? int.toString() : `${int}.${frac}`;
}
