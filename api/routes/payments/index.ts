/**
 * Payment group: invoices and ALPH payments (lib/payments). A user key sees and creates its owner's
 * invoices and sees its payments; an admin key sees everyone's (filters), records a manual payment and
 * cancels an invoice. Chain payments are settled by the `payments` processor.
 */
import { Type } from "@sinclair/typebox";
import { AppError, badRequest, forbidden, notFound } from "../../../lib/errors.ts";
import type { KeyWithPlan } from "../../../lib/keys/repo.ts";
import { alphToAtto } from "../../../lib/payments/amount.ts";
import { INVOICE_STATUSES, PAYMENT_STATUSES } from "../../../lib/payments/repo.ts";
import { requireDb } from "../../require-db.ts";
import { DateTime, NoBody, Nullable, StringEnum } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const AttoAlph = (description: string) => Type.String({ pattern: "^\\d+$", description });

const Invoice = Type.Object(
  {
    invoice_id: Type.String({ format: "uuid" }),
    user_id: Type.String({ description: "Owner of the key (`tg:<telegram user id>` for bot users)." }),
    key_id: Type.String({ format: "uuid", description: "Key the payment moves to the plan." }),
    plan_id: Type.String(),
    address: Type.String({ description: "Alephium address to pay (PAYMENT_ADDRESS)." }),
    amount_atto: AttoAlph("Exact amount to send, attoALPH: the plan's price plus a unique fraction."),
    amount_alph: Type.String({ description: "The same amount in ALPH (decimal)." }),
    status: StringEnum(INVOICE_STATUSES, {
      description: "`open` until paid, cancelled or past `expires_at` (`expired`).",
    }),
    chat_id: Nullable(Type.Integer({ description: "Telegram chat told about the payment." })),
    payment_id: Nullable(Type.String({ description: "The payment that paid it." })),
    created_at: DateTime(),
    expires_at: DateTime("A transfer in a block after this time is recorded as `late`, not credited."),
  },
  { $id: "Invoice", title: "Invoice" },
);

const Payment = Type.Object(
  {
    payment_id: Type.String({ description: "Normalized event id of the transfer, or `manual:<uuid>`." }),
    source: StringEnum(["chain", "manual"]),
    status: StringEnum(PAYMENT_STATUSES, {
      description:
        "`pending` until the events watermark passes its block; `credited` / `overpaid` moved the key; `underpaid`, `late`, `unmatched` are kept for admins; `reversed`: its block left the main chain.",
    }),
    amount_atto: AttoAlph("Amount received, attoALPH."),
    amount_alph: Type.String(),
    to_address: Type.String(),
    from_address: Type.String(),
    tx_id: Type.String(),
    block_hash: Type.String(),
    chain_index: Nullable(Type.Integer()),
    block_ts: Nullable(DateTime()),
    invoice_id: Nullable(Type.String()),
    user_id: Nullable(Type.String()),
    key_id: Nullable(Type.String()),
    plan_id: Nullable(Type.String()),
    note: Nullable(Type.String()),
    created_at: DateTime(),
    settled_at: Nullable(DateTime()),
  },
  { $id: "Payment", title: "Payment" },
);

const KeyAfter = Type.Object({
  key_id: Type.String(),
  plan_id: Type.String(),
  valid_until: Nullable(DateTime()),
});

const listQuery = (statuses: readonly string[]) =>
  Type.Object({
    user_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "Admins only: this user's rows." }),
    ),
    status: Type.Optional(StringEnum(statuses)),
    from: Type.Optional(DateTime("Created at or after.")),
    to: Type.Optional(DateTime("Created before.")),
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
  });

const PlanId = Type.String({ pattern: "^[a-z0-9_-]{1,64}$", description: "Plan to buy or renew." });
const InvoiceIdParams = Type.Object({ invoiceid: Type.String({ format: "uuid" }) });

/** The user whose rows a caller may list: their own, or (admins) anyone's or everyone's. */
function scopeOf(caller: KeyWithPlan | null, wanted: string | undefined): string | undefined {
  if (!caller || caller.level === "admin") return wanted;
  if (wanted !== undefined && wanted !== caller.user_id) {
    throw forbidden("admin_required", "Only admins may list another user's invoices and payments.");
  }
  return caller.user_id;
}

export async function paymentRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Invoice);
  app.addSchema(Payment);

  app.get(
    "/payments/invoices",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Payment"],
        summary: "List invoices: your own, or everyone's (admin)",
        querystring: listQuery(INVOICE_STATUSES),
        response: { 200: Type.Object({ invoices: Type.Array(Type.Ref("Invoice")) }) },
      },
    },
    async (request) => {
      const q = request.query;
      const user_id = scopeOf(request.apiKey, q.user_id);
      return {
        invoices: await need("payments").listInvoices({ ...q, user_id, limit: q.limit }),
      };
    },
  );

  app.post(
    "/payments/invoices",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Payment"],
        summary: "Create an invoice to buy or renew a plan in ALPH",
        description:
          "For the calling key, or `key_id` (yours; any key for an admin). Send exactly `amount_alph` to `address` before `expires_at`: once the transfer's block is under the events watermark, the key moves to the plan and its `valid_until` grows by the plan's `validity_days` from the later of now and its current end. 404 `payments_disabled` when PAYMENT_ADDRESS is empty.",
        body: Type.Object(
          {
            plan_id: PlanId,
            key_id: Type.Optional(
              Type.String({ format: "uuid", description: "Key to renew (default: this key)." }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ ok: Type.Boolean(), invoice: Type.Ref("Invoice") }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      if (!deps.config.PAYMENT_ADDRESS) {
        throw new AppError(
          "payments_disabled",
          "Payments not found: they are off on this deployment (PAYMENT_ADDRESS).",
          {
            status: 404,
          },
        );
      }
      const caller = request.apiKey!;
      const keyId = request.body.key_id ?? caller.key_id;
      const key = await need("keys").getKey(keyId);
      if (!key) throw notFound(`API key ${keyId} not found`, { keyId });
      if (caller.level !== "admin" && key.user_id !== caller.user_id) {
        throw forbidden("not_key_owner", "Only the key's owner or an admin may pay for it.");
      }
      if (key.revoked_at) throw badRequest(`API key ${keyId} is revoked.`, { keyId });
      const invoice = await need("payments").createInvoice({
        userId: key.user_id,
        keyId: key.key_id,
        planId: request.body.plan_id,
        address: deps.config.PAYMENT_ADDRESS,
        ttlMs: deps.config.INVOICE_TTL_MS,
      });
      return { ok: true, invoice };
    },
  );

  app.get(
    "/payments",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Payment"],
        summary: "List payments: your own, or every payment (admin)",
        description:
          "Admins also see transfers no invoice explains (`unmatched`, without a user) and the flagged ones (`overpaid`, `underpaid`, `late`, `reversed`).",
        querystring: listQuery(PAYMENT_STATUSES),
        response: { 200: Type.Object({ payments: Type.Array(Type.Ref("Payment")) }) },
      },
    },
    async (request) => {
      const q = request.query;
      const user_id = scopeOf(request.apiKey, q.user_id);
      return { payments: await need("payments").listPayments({ ...q, user_id, limit: q.limit }) };
    },
  );

  app.post(
    "/payments/manual",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Payment"],
        summary: "Record a manual payment of an invoice (credits its key)",
        body: Type.Object(
          {
            invoice_id: Type.String({ format: "uuid" }),
            amount_alph: Type.Optional(
              Type.String({
                pattern: "^\\d{1,30}(\\.\\d{1,18})?$",
                description: "Amount received in ALPH (default: the invoice's).",
              }),
            ),
            note: Type.Optional(Type.String({ maxLength: 500 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ ok: Type.Boolean(), payment: Type.Ref("Payment"), key: Nullable(KeyAfter) }),
          404: Type.Ref("Problem"),
          409: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      const amount = request.body.amount_alph;
      const r = await need("payments").recordManual({
        invoiceId: request.body.invoice_id,
        ...(amount ? { amountAtto: alphToAtto(amount).toString() } : {}),
        ...(request.body.note ? { note: request.body.note } : {}),
      });
      return { ok: true, payment: r.payment, key: r.key };
    },
  );

  app.post(
    "/payments/invoice/:invoiceid/cancel",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Payment"],
        summary: "Cancel an open or expired invoice",
        params: InvoiceIdParams,
        body: NoBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), invoice: Type.Ref("Invoice") }),
          404: Type.Ref("Problem"),
          409: Type.Ref("Problem"),
        },
      },
    },
    async (request) => ({
      ok: true,
      invoice: await need("payments").cancelInvoice(request.params.invoiceid),
    }),
  );
}
