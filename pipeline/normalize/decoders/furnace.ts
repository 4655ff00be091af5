/**
 * Token Furnace (published layout, notrustverify/token-furnace): 0 `Burned(caller, tokenBurned, amount, nft,
 * timestamp)`. `tokenBurned` is the ASCII text of the hex id (what the contract's `convert()` gives) or, in
 * the other deployed form, the raw 32-byte id; anything else is refused, never guessed.
 */
import { groupOfAddress } from "@alephium/web3";
import { DAPP_UNKNOWN } from "../../../lib/chain/taxonomy.ts";
import { fieldOf } from "../chain-utils.ts";
import { type ContractEvent, dappOf, draft, type TxScope } from "../draft.ts";
import { type DecodeResult, failure, fieldsOf, HEX64, isFields, msOf, utf8 } from "./fields.ts";

/** The burned token id and the form it was written in, or undefined for neither form. */
export function burnedTokenOf(hex: string): { id: string; encoding: "text" | "raw" } | undefined {
  const lower = hex.toLowerCase();
  if (lower.length === 64) return { id: lower, encoding: "raw" };
  if (lower.length !== 128) return undefined;
  const text = utf8(lower)?.toLowerCase();
  return text !== undefined && HEX64.test(text) ? { id: text, encoding: "text" } : undefined;
}

export function decodeFurnace(s: TxScope, ev: ContractEvent): DecodeResult {
  if (ev.eventIndex !== 0) return undefined;
  const f = fieldsOf(ev, "Burned", ["Address", "ByteVec", "U256", "Bool", "U256"]);
  if (!isFields(f)) return f;
  const token = burnedTokenOf(f.str(1));
  if (!token)
    return failure(
      `Burned (event 0) tokenBurned must be a 32-byte token id or its 64-char hex text, got ${f.str(1).length / 2} bytes`,
    );
  // The contract stamps burns with blockTimeStamp!(), already in ms.
  const at = msOf(f.big(4), 1);
  if (at === undefined) return failure(`Burned (event 0) timestamp ${f.str(4)} is not a time in ms`);
  const nftAddress = f.bool(3) ? burnerNftOf(s, ev.contractAddress) : "";
  return [
    draft("token", "burn", "furnace_burn", {
      dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
      from: f.str(0),
      to: ev.contractAddress,
      with: nftAddress,
      token_id: token.id,
      amount: f.big(2),
      contract_address: ev.contractAddress,
      contract_event_index: 0,
      payload: {
        burner: f.str(0),
        token_id: token.id,
        amount: f.big(2).toString(),
        nft: f.bool(3),
        nft_address: nftAddress,
        burn_timestamp: at,
        group: groupOfAddress(ev.contractAddress),
        token_burned_encoding: token.encoding,
      },
    }),
  ];
}

/** The BurnerNFT created in the same tx: a ContractCreated whose parent is the furnace. */
function burnerNftOf(s: TxScope, furnace: string): string {
  const created = s.events.find((e) => e.eventIndex === -1 && fieldOf(e.fields, 1, "Address") === furnace);
  return (created && fieldOf(created.fields, 0, "Address")) ?? "";
}
