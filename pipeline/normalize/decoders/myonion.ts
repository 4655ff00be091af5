/**
 * MyOnion.fun (artifacts of notrustverify/myonion-tracker, published): TokenLauncher 5 CreateToken,
 * 6 CreateBondingCurve, 9 UpdateTokenDexPair; OnionRouter 5 Trade.
 */
import { DAPP_UNKNOWN } from "../../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import { ratio } from "../chain-utils.ts";
import { type ContractEvent, dappOf, draft, type TxScope } from "../draft.ts";
import { type DecodeResult, failure, fieldsOf, HEX64, isFields, utf8 } from "./fields.ts";

function common(s: TxScope, ev: ContractEvent, caller: string) {
  return {
    dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
    from: s.sender || caller,
    with: ev.contractAddress,
    contract_address: ev.contractAddress,
    contract_event_index: ev.eventIndex,
  };
}

export function decodeMyOnionLauncher(s: TxScope, ev: ContractEvent): DecodeResult {
  if (ev.eventIndex === 5) {
    const f = fieldsOf(ev, "CreateToken", [
      "ByteVec",
      "Address",
      "ByteVec",
      "ByteVec",
      "U256",
      "U256",
      "ByteVec",
    ]);
    if (!isFields(f)) return f;
    const tokenId = f.str(0).toLowerCase();
    if (!HEX64.test(tokenId))
      return failure(`CreateToken (event 5) tokenId is not a 32-byte id: ${f.str(0)}`);
    const decimals = f.big(4);
    if (decimals > 255n)
      return failure(`CreateToken (event 5) decimals ${decimals} is not a number of decimals`);
    return [
      draft("launchpad", "token_created", "launch", {
        ...common(s, ev, f.str(1)),
        token_id: tokenId,
        amount: f.big(5),
        payload: {
          creator: f.str(1),
          symbol: utf8(f.str(2)) ?? f.str(2),
          name: utf8(f.str(3)) ?? f.str(3),
          decimals: Number(decimals),
          total_supply: f.big(5).toString(),
          royalty_fee_collector: f.str(6).toLowerCase(),
        },
      }),
    ];
  }
  if (ev.eventIndex === 6 || ev.eventIndex === 9) {
    const curve = ev.eventIndex === 6;
    const f = fieldsOf(ev, curve ? "CreateBondingCurve" : "UpdateTokenDexPair", [
      "ByteVec",
      "Address",
      "ByteVec",
    ]);
    if (!isFields(f)) return f;
    return [
      draft("launchpad", curve ? "curve_created" : "graduated", "launch", {
        ...common(s, ev, f.str(1)),
        token_id: f.str(0).toLowerCase(),
        payload: curve
          ? { creator: f.str(1), curve_contract_id: f.str(2).toLowerCase() }
          : { caller: f.str(1), dex_pair_id: f.str(2).toLowerCase() },
      }),
    ];
  }
  return undefined;
}

export function decodeMyOnionRouter(s: TxScope, ev: ContractEvent): DecodeResult {
  if (ev.eventIndex !== 5) return undefined;
  const f = fieldsOf(ev, "Trade", [
    "ByteVec",
    "Address",
    "ByteVec",
    "U256",
    "U256",
    "U256",
    "U256",
    "Address",
  ]);
  if (!isFields(f)) return f;
  const tokenId = f.str(0).toLowerCase();
  const tokenIn = f.str(2).toLowerCase();
  const [amountIn, amountOut] = [f.big(3), f.big(4)];
  const buy = tokenIn === ALPH_TOKEN_ID;
  const [alph, token] = buy ? [amountIn, amountOut] : [amountOut, amountIn];
  return [
    draft("launchpad", buy ? "buy" : "sell", "launch_trade", {
      ...common(s, ev, f.str(1)),
      token_id: tokenId,
      amount: token,
      payload: {
        trader: f.str(1),
        token_in_id: tokenIn,
        amount_in: amountIn.toString(),
        amount_out: amountOut.toString(),
        alph_amount: alph.toString(),
        token_amount: token.toString(),
        platform_fee: f.big(5).toString(),
        royalty_fee: f.big(6).toString(),
        royalty_recipient: f.str(7),
        price: ratio(alph, token),
      },
    }),
  ];
}
