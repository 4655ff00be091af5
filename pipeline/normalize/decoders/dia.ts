/** DIA oracles (published layouts): price `OracleUpdate(key, value, timestamp)`, randomness `OracleUpdate(round, randomness, signature)`, `AdminChanged`. */
import { DAPP_UNKNOWN } from "../../../lib/chain/taxonomy.ts";
import { type ContractEvent, dappOf, draft, type TxScope } from "../draft.ts";
import { type DecodeResult, failure, fieldsOf, isFields, msOf, utf8 } from "./fields.ts";

/** DIA prices carry 8 decimals. */
const PRICE_DECIMALS = 8;

function common(s: TxScope, ev: ContractEvent) {
  return {
    dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
    from: s.sender,
    to: ev.contractAddress,
    contract_address: ev.contractAddress,
    contract_event_index: ev.eventIndex,
  };
}

function adminChanged(s: TxScope, ev: ContractEvent): DecodeResult {
  const f = fieldsOf(ev, "AdminChanged", ["Address"]);
  if (!isFields(f)) return f;
  return [
    draft("oracle", "admin_changed", "oracle_update", {
      ...common(s, ev),
      to: f.str(0),
      payload: { new_admin: f.str(0) },
    }),
  ];
}

export function decodeDiaPrice(s: TxScope, ev: ContractEvent): DecodeResult {
  if (ev.eventIndex === 0) return adminChanged(s, ev);
  if (ev.eventIndex !== 1) return undefined;
  const f = fieldsOf(ev, "OracleUpdate", ["ByteVec", "U256", "U256"]);
  if (!isFields(f)) return f;
  const keyHex = f.str(0).toLowerCase();
  const at = msOf(f.big(2), 1000);
  if (at === undefined)
    return failure(`OracleUpdate (event 1) timestamp ${f.str(2)} is not a time in seconds`);
  return [
    draft("oracle", "price_update", "oracle_update", {
      ...common(s, ev),
      payload: {
        // A key that is not UTF-8 keeps its hex (routes can still group by key_hex).
        key: utf8(keyHex) ?? keyHex,
        key_hex: keyHex,
        value: f.big(1).toString(),
        decimals: PRICE_DECIMALS,
        oracle_timestamp: at,
      },
    }),
  ];
}

export function decodeDiaRandom(s: TxScope, ev: ContractEvent): DecodeResult {
  if (ev.eventIndex === 0) return adminChanged(s, ev);
  if (ev.eventIndex !== 1) return undefined;
  const f = fieldsOf(ev, "OracleUpdate", ["U256", "ByteVec", "ByteVec"]);
  if (!isFields(f)) return f;
  return [
    draft("oracle", "randomness", "oracle_update", {
      ...common(s, ev),
      payload: {
        round: f.big(0).toString(),
        randomness: f.str(1).toLowerCase(),
        signature: f.str(2).toLowerCase(),
      },
    }),
  ];
}
