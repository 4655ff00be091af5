/**
 * Addresses group, exchange wallets: list (public), add and delete (admin). Transfers to / from an
 * exchange wallet are normalized as `cex` deposit / withdraw events of blocks after the change
 * (lib/labels/exchange-wallets.ts); `exchange-wallets backdate` and `reprocess` bring it to history.
 */
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { requireDb } from "../../require-db.ts";
import type { ApiDeps, App } from "../../types.ts";
import { MAX_TIME_MS } from "../prices/schemas.ts";

const ADDRESS = "^[1-9A-HJ-NP-Za-km-z]{20,60}$";
const EXCHANGE_ID = "^[a-z0-9][a-z0-9_-]{0,63}$";

const WalletRecord = Type.Object(
  {
    address: Type.String({ description: "Base58 address of the wallet." }),
    exchange_id: Type.String({
      description: "Exchange id: the `dapp_id` of its cex events (`gate`, `mexc` …).",
    }),
    label: Type.Union([Type.String(), Type.Null()]),
    applies_from: Type.Integer({
      description: "Block time (ms) from which its transfers are cex deposit / withdraw events.",
    }),
    applies_until: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "Block time (ms) from which it no longer classifies transfers (removed); null while active.",
    }),
    source: Type.String({ description: "`seed` (built in) or `admin`." }),
    created_at: Type.Integer(),
    updated_at: Type.Integer(),
  },
  { $id: "ExchangeWallet", title: "ExchangeWallet" },
);

export async function exchangeWalletRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(WalletRecord);
  const repo = () => need("exchangeWallets");

  app.get(
    "/addresses/exchange-wallets",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "List known exchange wallets",
        description:
          "Addresses of centralized exchanges: transfers to / from them are normalized as `cex` `deposit` / `withdraw` events (`dapp_id` = the exchange id) for blocks from `applies_from`. No exchange publishes its Alephium addresses, so none is built in: operators add them.",
        querystring: Type.Object({
          exchange_id: Type.Optional(Type.String({ pattern: EXCHANGE_ID, maxLength: 64 })),
          include_removed: Type.Boolean({ default: false, description: "Also list removed wallets." }),
        }),
        response: { 200: Type.Object({ wallets: Type.Array(Type.Ref("ExchangeWallet")) }) },
      },
    },
    async (request) => ({
      wallets: await repo().list({
        exchange_id: request.query.exchange_id,
        include_removed: request.query.include_removed,
      }),
    }),
  );

  app.post(
    "/addresses/exchange-wallets/add",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "Add (or re-open, or relabel) an exchange wallet",
        description:
          "Takes effect for blocks after every block published so far (and not before now), so blocks already normalized keep their events and replays stay the same. To classify older transfers, give `applies_from` (or run `exchange-wallets backdate`) and then `reprocess` the range.",
        body: Type.Object(
          {
            address: Type.String({ pattern: ADDRESS, description: "Base58 address." }),
            exchange_id: Type.String({ pattern: EXCHANGE_ID, description: "Exchange id (lower case)." }),
            label: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
            applies_from: Type.Optional(
              Type.Integer({
                minimum: 0,
                maximum: MAX_TIME_MS,
                description:
                  "Block time (ms) from which it applies; default: after the newest published block.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ok: Type.Boolean(), wallet: Type.Ref("ExchangeWallet") }) },
      },
    },
    async (request) => ({ ok: true, wallet: await repo().add(request.body) }),
  );

  app.post(
    "/addresses/exchange-wallets/del",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Addresses"],
        summary: "Remove an exchange wallet (for blocks after the newest published one)",
        body: Type.Object(
          { address: Type.String({ pattern: ADDRESS, description: "Base58 address." }) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ ok: Type.Boolean(), wallet: Type.Ref("ExchangeWallet") }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const wallet = await repo().remove(request.body.address);
      if (!wallet) {
        throw notFound(`No active exchange wallet ${request.body.address}`, {
          address: request.body.address,
        });
      }
      return { ok: true, wallet };
    },
  );
}
