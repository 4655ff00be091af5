/**
 * Schemas of the decorated explorer routes. The explorer's objects are open (`additionalProperties: true`):
 * the listed fields document the explorer's shape, every other field it sends is passed through as is. The
 * decoration's key is configuration (DECORATION_KEY, `ext` by default); the schemas below the key keep their names.
 */
import { Type } from "@sinclair/typebox";
import { INT32_MAX, Nullable } from "../../schemas.ts";

const HEX64 = "^[0-9a-fA-F]{64}$";
/**
 * Base58 (no 0, O, I, l) with an optional `:group` suffix of groupless addresses. Fastify's default
 * `maxParamLength` (100) answers 414 to longer path parameters before this pattern is checked.
 */
export const ADDRESS_PATTERN = "^[1-9A-HJ-NP-Za-km-z]{20,98}(:[0-3])?$";

const Open = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const TxParams = Type.Object({
  transaction_id: Type.String({ pattern: HEX64, description: "Transaction hash (64 hex)." }),
});
export const BlockParams = Type.Object({
  block_hash: Type.String({ pattern: HEX64, description: "Block hash (64 hex)." }),
});
export const AddressParams = Type.Object({
  address: Type.String({
    pattern: ADDRESS_PATTERN,
    maxLength: 100,
    description: "Base58 address (20-98 characters), optionally with a `:group` suffix (0-3).",
  }),
});
export const AddressTokenParams = Type.Object({
  address: AddressParams.properties.address,
  tokenid: Type.String({ pattern: HEX64, description: "Token id (64 hex)." }),
});
export const TokenParams = Type.Object({
  tokenid: Type.String({ pattern: HEX64, description: "Token id (64 hex)." }),
});

/** The explorer's pagination, with `limit` ≥ 1 (an empty page is never useful). */
export const PageQuery = Type.Object({
  page: Type.Integer({
    minimum: 1,
    maximum: INT32_MAX,
    default: 1,
    description: "Page number (from 1).",
  }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: "Transactions per page." }),
});

const ExplorerTxFields = {
  hash: Type.String(),
  blockHash: Type.Optional(Type.String()),
  timestamp: Type.Optional(Type.Integer({ description: "Block time, Unix ms." })),
  inputs: Type.Optional(Type.Array(Open("Explorer Input (outputRef, address, attoAlphAmount, tokens …)."))),
  outputs: Type.Optional(Type.Array(Open("Explorer AssetOutput or ContractOutput."))),
  gasAmount: Type.Optional(Type.Integer()),
  gasPrice: Type.Optional(Type.String()),
  scriptExecutionOk: Type.Optional(Type.Boolean()),
  coinbase: Type.Optional(Type.Boolean()),
};

const AddressLabels = Type.Record(Type.String(), Type.Ref("AddressLabel"), {
  description:
    "Primary label per address, for the addresses of the inputs, outputs and main event; only when any has one.",
});

export const TransactionExt = Type.Object(
  {
    events: Type.Array(Type.Ref("NormalizedEvent"), {
      description: "Every normalized event of the transaction (as /transaction/{txid}/events).",
    }),
    meta: Type.Object({ payload_chunk_hydration_enabled: Type.Boolean() }),
    address_labels: Type.Optional(AddressLabels),
  },
  { $id: "DecoratedTransactionExt", title: "DecoratedTransactionExt" },
);

export const ListItemExt = Type.Object(
  {
    main_event_pending: Type.Boolean({
      description: "True while the pipeline has produced no event for the transaction.",
    }),
    dapp_id: Type.Optional(Type.String({ description: "Of the main event; absent while pending." })),
    category: Type.Optional(Type.String()),
    sub_kind: Type.Optional(Type.String()),
    type: Type.Optional(Type.String()),
    address_labels: Type.Optional(AddressLabels),
  },
  { $id: "DecoratedListItemExt", title: "DecoratedListItemExt" },
);

export const BlockExt = Type.Object(
  {
    genesis_mints: Nullable(
      Type.Array(Type.Ref("NormalizedEvent"), {
        description: "Main events with category `token` and sub_kind `genesis_mint`; null when none.",
      }),
    ),
    coinbases: Nullable(
      Type.Array(Type.Ref("NormalizedEvent"), {
        description: "Main events of the coinbase transactions; null when none.",
      }),
    ),
  },
  { $id: "DecoratedBlockExt", title: "DecoratedBlockExt" },
);

/**
 * The decorated objects' schemas, their decoration under `key` (DECORATION_KEY): built when the app is built, so
 * the OpenAPI document names the key the API writes.
 */
export function decoratedSchemas(key: string) {
  const ext = `\`${key}\``;
  return {
    transaction: Type.Object(
      {
        type: Type.Optional(Type.String({ description: "`Accepted` or `Pending`." })),
        ...ExplorerTxFields,
        [key]: Type.Optional(Type.Ref("DecoratedTransactionExt")),
      },
      {
        additionalProperties: true,
        description: `The explorer's TransactionLike, unchanged (its fields and their order), plus ${ext} when the database is configured.`,
      },
    ),
    listItem: Type.Object(
      { ...ExplorerTxFields, [key]: Type.Ref("DecoratedListItemExt") },
      { additionalProperties: true, description: `The explorer's Transaction, unchanged, plus ${ext}.` },
    ),
    block: Type.Object(
      {
        hash: Type.String(),
        timestamp: Type.Integer(),
        chainFrom: Type.Integer(),
        chainTo: Type.Integer(),
        height: Type.Integer(),
        txNumber: Type.Integer(),
        mainChain: Type.Boolean(),
        [key]: Type.Optional(Type.Ref("DecoratedBlockExt")),
      },
      {
        additionalProperties: true,
        description:
          `The explorer's BlockEntry, unchanged, plus ${ext} when the database is configured and txNumber > 0 ` +
          "(computed from its first 100 transactions).",
      },
    ),
  };
}
