/**
 * MyOnion.fun (artifacts of notrustverify/myonion-tracker@a19b834, bytecode-verified): TokenLauncher 5 CreateToken,
 * 6 CreateBondingCurve, 7 UpdateTokenMeta, 8 UpdateTokenBondingCurve, 9 UpdateTokenDexPair; OnionRouter 5 Trade;
 * FeeCollector 0-1; CommentTracker 5-6; ProfileTracker 5-8; and events 0-4 (owner change, migration) of the five
 * upgradable contracts (TokenLauncher, OnionRouter, FeeHandler, CommentTracker, ProfileTracker).
 */
import { DAPP_UNKNOWN } from "../../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import { ratio } from "../chain-utils.ts";
import { type ContractEvent, dappOf, draft, type TxScope } from "../draft.ts";
import { type DecodeResult, failure, fieldsOf, HEX64, isFields, utf8 } from "./fields.ts";
import { type TableEvent, tableDecoder, tables } from "./layouts.ts";

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
  if (ev.eventIndex <= 4 || ev.eventIndex === 7 || ev.eventIndex === 8) return launcherTables(s, ev);
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
  if (ev.eventIndex <= 4) return routerTables(s, ev);
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

const A = "Address" as const;
const B = "ByteVec" as const;
const U = "U256" as const;

/** Events 0-4 of MyOnion's upgradable contracts (owner change and code migration, commenced then applied). */
export const MYONION_UPGRADES: Record<number, TableEvent> = {
  0: {
    name: "ChangeOwnerCommence",
    fields: [
      ["owner", A],
      ["changeOwner", A],
    ],
    triple: ["contract", "owner_change", "upgrade"],
    read: (f) => ({ to: f.str(1), extra: { stage: "commence" } }),
  },
  1: {
    name: "ChangeOwnerApply",
    fields: [
      ["owner", A],
      ["changeOwner", A],
    ],
    triple: ["contract", "owner_change", "upgrade"],
    read: (f) => ({ to: f.str(1), extra: { stage: "apply" } }),
  },
  2: {
    name: "MigrateCommence",
    fields: [
      ["owner", A],
      ["changeCode", B],
    ],
    triple: ["contract", "migration", "upgrade"],
    read: () => ({ extra: { stage: "commence" } }),
  },
  3: {
    name: "MigrateApply",
    fields: [
      ["owner", A],
      ["changeCode", B],
    ],
    triple: ["contract", "migration", "upgrade"],
    read: () => ({ extra: { stage: "apply" } }),
  },
  4: {
    name: "MigrateWithFieldsApply",
    fields: [
      ["owner", A],
      ["changeCode", B],
      ["changeImmFieldsEncoded", B],
      ["changeMutFieldsEncoded", B],
    ],
    triple: ["contract", "migration", "upgrade"],
    read: () => ({ extra: { stage: "apply_with_fields" } }),
  },
};

const ROUTER_CHANGED: TableEvent = {
  name: "UpdateRouterAddress",
  fields: [
    ["caller", A],
    ["oldRouter", A],
    ["newRouter", A],
  ],
  triple: ["contract", "settings_changed", "upgrade"],
  read: (f) => ({ to: f.str(2) }),
};

/** TokenLauncher 7 and 8 (5, 6 and 9 are decoded by `decodeMyOnionLauncher`). */
const LAUNCHER_UPDATES: Record<number, TableEvent> = {
  7: {
    name: "UpdateTokenMeta",
    fields: [
      ["tokenId", B],
      ["caller", A],
      ["logo", B],
      ["description", B],
      ["socials", B],
    ],
    texts: ["logo", "description", "socials"],
    triple: ["launchpad", "token_updated", "launch"],
    read: (f) => ({ token: f.str(0).toLowerCase() }),
  },
  8: {
    name: "UpdateTokenBondingCurve",
    fields: [
      ["tokenId", B],
      ["caller", A],
      ["bondingCurve", B],
    ],
    triple: ["launchpad", "curve_updated", "launch"],
    read: (f) => ({ token: f.str(0).toLowerCase() }),
  },
};

export const decodeMyOnionUpgradable = tableDecoder(MYONION_UPGRADES);
const launcherTables = tableDecoder(tables(MYONION_UPGRADES, LAUNCHER_UPDATES));
const routerTables = decodeMyOnionUpgradable;

export const decodeMyOnionFeeCollector = tableDecoder({
  0: {
    name: "DepositFee",
    fields: [
      ["contractAddress", A],
      ["user", A],
      ["caller", A],
      ["feeAmount", U],
    ],
    triple: ["launchpad", "fee_deposited", "launch"],
    read: (f) => ({ to: f.str(0), amount: f.big(3) }),
  },
  1: {
    name: "HarvestFee",
    fields: [
      ["caller", A],
      ["recipient", A],
      ["feeAmount", U],
    ],
    triple: ["launchpad", "fee_harvested", "launch"],
    read: (f) => ({ to: f.str(1), amount: f.big(2) }),
  },
});

export const decodeMyOnionComments = tableDecoder(
  tables(MYONION_UPGRADES, {
    5: {
      name: "Comment",
      fields: [
        ["topic", B],
        ["caller", A],
        ["commentId", U],
        ["comment", B],
      ],
      texts: ["topic", "comment"],
      triple: ["launchpad", "comment", "launch"],
    },
    6: ROUTER_CHANGED,
  }),
);

export const decodeMyOnionProfiles = tableDecoder(
  tables(MYONION_UPGRADES, {
    5: {
      name: "CreateProfile",
      fields: [
        ["caller", A],
        ["pfp", B],
        ["name", B],
        ["status", B],
        ["xp", U],
        ["referrer", A],
        ["linkingId", B],
        ["socials", B],
      ],
      texts: ["name", "status", "socials"],
      triple: ["launchpad", "profile_created", "launch"],
      read: (f) => ({ to: f.str(5) }),
    },
    6: {
      name: "UpdateProfile",
      fields: [
        ["caller", A],
        ["pfp", B],
        ["name", B],
        ["status", B],
        ["xp", U],
        ["linkingId", B],
        ["socials", B],
      ],
      texts: ["name", "status", "socials"],
      triple: ["launchpad", "profile_updated", "launch"],
    },
    7: ROUTER_CHANGED,
    8: {
      name: "UpdateReferralSettings",
      fields: [
        ["caller", A],
        ["oldReferralThreshold", U],
        ["oldReferralReward", U],
        ["newReferralThreshold", U],
        ["newReferralReward", U],
      ],
      triple: ["contract", "settings_changed", "upgrade"],
    },
  }),
);
