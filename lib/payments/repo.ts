/**
 * Invoices and payments (Postgres), shared by the payments processor (writer of chain transfers), the
 * API and the bot. A chain transfer is recorded `pending` by its event id, then settled once, in one
 * transaction that also moves the key (plan, valid_until, last_payment_at): replays and reprocessing
 * find the row already there and never credit twice.
 */
import { randomUUID } from "node:crypto";
import { AppError, badRequest, notFound } from "../errors.ts";
import type { PgParam, PgQueryable } from "../stores/postgres.ts";
import { alphToAtto, amountTag, attoToAlph, judgeTransfer, uniqueAmount } from "./amount.ts";

export type InvoiceStatus = "open" | "paid" | "expired" | "cancelled";
export type PaymentStatus =
  | "pending"
  | "credited"
  | "overpaid"
  | "underpaid"
  | "late"
  | "unmatched"
  | "reversed";

export const INVOICE_STATUSES: InvoiceStatus[] = ["open", "paid", "expired", "cancelled"];
export const PAYMENT_STATUSES: PaymentStatus[] = [
  "pending",
  "credited",
  "overpaid",
  "underpaid",
  "late",
  "unmatched",
  "reversed",
];

export interface Invoice {
  invoice_id: string;
  user_id: string;
  key_id: string;
  plan_id: string;
  address: string;
  amount_atto: string;
  amount_alph: string;
  status: InvoiceStatus;
  chat_id: number | null;
  payment_id: string | null;
  created_at: string;
  expires_at: string;
}

export interface Payment {
  payment_id: string;
  source: "chain" | "manual";
  status: PaymentStatus;
  amount_atto: string;
  amount_alph: string;
  to_address: string;
  from_address: string;
  tx_id: string;
  block_hash: string;
  chain_index: number | null;
  block_ts: string | null;
  invoice_id: string | null;
  user_id: string | null;
  key_id: string | null;
  plan_id: string | null;
  note: string | null;
  created_at: string;
  settled_at: string | null;
}

/** An ALPH transfer to a payment address, from a normalized event. */
export interface TransferInput {
  event_id: string;
  amount_atto: string;
  to_address: string;
  from_address: string;
  tx_id: string;
  block_hash: string;
  chain_index: number;
  block_ts: number;
  seq: number;
}

/** What a settlement or reversal changed, for the messages the bot sends. */
export interface PaymentOutcome {
  payment: Payment;
  invoice: Invoice | null;
  /** The key after a credit or reversal. */
  key: { key_id: string; plan_id: string; valid_until: string | null } | null;
}

export interface ListFilter {
  user_id?: string;
  status?: string;
  from?: string;
  to?: string;
  limit: number;
}

export interface PaymentStats {
  invoices_open: number;
  payments_credited: number;
  payments_flagged: number;
  payments_pending: number;
  alph_received: string;
}

export interface PaymentsRepo {
  createInvoice(input: {
    userId: string;
    keyId: string;
    planId: string;
    address: string;
    ttlMs: number;
    chatId?: number | null;
  }): Promise<Invoice>;
  getInvoice(invoiceId: string): Promise<Invoice | null>;
  listInvoices(filter: ListFilter): Promise<Invoice[]>;
  cancelInvoice(invoiceId: string): Promise<Invoice>;
  listPayments(filter: ListFilter): Promise<Payment[]>;
  /** Records transfers as pending (a newer message of the same block revives a reversed one). */
  recordTransfers(transfers: TransferInput[]): Promise<void>;
  /**
   * Settles every pending transfer of a block at or before the watermark, oldest first. `watermarkMs`
   * is a function so that it is read only when something is pending.
   */
  settlePending(watermarkMs: number | (() => Promise<number>)): Promise<PaymentOutcome[]>;
  /** Reverses the payments of a retracted block (a newer message than the one they came from). */
  retractBlock(blockHash: string, seq: number): Promise<PaymentOutcome[]>;
  /** An admin's manual payment of an invoice: credits it at once. */
  recordManual(input: { invoiceId: string; amountAtto?: string; note?: string }): Promise<PaymentOutcome>;
  stats(): Promise<PaymentStats>;
}

const TS = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const INVOICE_COLUMNS = `invoice_id, user_id, key_id, plan_id, address, amount_atto::text AS amount_atto,
  status, chat_id::text AS chat_id, payment_id, ${TS("created_at")} AS created_at, ${TS("expires_at")} AS expires_at`;

const PAYMENT_COLUMNS = `payment_id, source, status, amount_atto::text AS amount_atto, to_address, from_address,
  tx_id, block_hash, chain_index, ${TS("block_ts")} AS block_ts, invoice_id, user_id, key_id, plan_id, note,
  ${TS("created_at")} AS created_at, ${TS("settled_at")} AS settled_at`;

type InvoiceRow = Omit<Invoice, "amount_alph" | "chat_id"> & { chat_id: string | null };
type PaymentRow = Omit<Payment, "amount_alph">;

const mapInvoice = (r: InvoiceRow): Invoice => ({
  ...r,
  amount_alph: attoToAlph(r.amount_atto),
  chat_id: r.chat_id === null ? null : Number(r.chat_id),
});
const mapPayment = (r: PaymentRow): Payment => ({ ...r, amount_alph: attoToAlph(r.amount_atto) });

/** Open invoices past their expiry become expired (a transfer of a block before expiry still pays them). */
const EXPIRE_SQL = `UPDATE payment_invoices SET status = 'expired', updated_at = now()
  WHERE status = 'open' AND expires_at <= now()`;

function filterSql(filter: ListFilter, timeColumn: string): { where: string; params: PgParam[] } {
  const clauses: string[] = [];
  const params: PgParam[] = [];
  const add = (sql: string, value: PgParam) => {
    params.push(value);
    clauses.push(sql.replace("?", `$${params.length}`));
  };
  if (filter.user_id !== undefined) add("user_id = ?", filter.user_id);
  if (filter.status !== undefined) add("status = ?", filter.status);
  if (filter.from !== undefined) add(`${timeColumn} >= ?::timestamptz`, filter.from);
  if (filter.to !== undefined) add(`${timeColumn} < ?::timestamptz`, filter.to);
  params.push(filter.limit);
  return {
    where: clauses.length ? `WHERE ${clauses.join(" AND ")}` : "",
    params,
  };
}

export function createPaymentsRepo(pg: {
  query: PgQueryable["query"];
  transaction<T>(fn: (tx: PgQueryable) => Promise<T>): Promise<T>;
}): PaymentsRepo {
  const invoiceIn = async (tx: PgQueryable, invoiceId: string): Promise<Invoice | null> => {
    const rows = await tx.query<InvoiceRow>(
      "invoices_get",
      `SELECT ${INVOICE_COLUMNS} FROM payment_invoices WHERE invoice_id = $1`,
      [invoiceId],
    );
    return rows[0] ? mapInvoice(rows[0]) : null;
  };
  const paymentIn = async (tx: PgQueryable, paymentId: string): Promise<Payment> => {
    const rows = await tx.query<PaymentRow>(
      "payments_get",
      `SELECT ${PAYMENT_COLUMNS} FROM payments WHERE payment_id = $1`,
      [paymentId],
    );
    return mapPayment(rows[0]!);
  };

  /** Moves the invoice's key to its plan for one more validity period; records the key's previous state. */
  const credit = async (tx: PgQueryable, paymentId: string, invoice: Invoice) => {
    const keys = await tx.query<{ plan_id: string; valid_until: Date | string | null }>(
      "payments_key_lock",
      "SELECT plan_id, valid_until FROM api_keys WHERE key_id = $1 FOR UPDATE",
      [invoice.key_id],
    );
    const before = keys[0];
    if (!before)
      throw new AppError("key_missing", `Key ${invoice.key_id} of invoice ${invoice.invoice_id} is gone`);
    const updated = await tx.query<{ key_id: string; plan_id: string; valid_until: string | null }>(
      "payments_key_credit",
      `UPDATE api_keys k SET plan_id = p.plan_id,
         valid_until = GREATEST(now(), COALESCE(k.valid_until, now())) + make_interval(days => p.validity_days),
         last_payment_at = now(), updated_at = now()
       FROM api_plans p WHERE k.key_id = $1 AND p.plan_id = $2
       RETURNING k.key_id, k.plan_id, ${TS("k.valid_until")} AS valid_until`,
      [invoice.key_id, invoice.plan_id],
    );
    const key = updated[0]!;
    await tx.query(
      "payments_credit_record",
      `UPDATE payments SET prev_plan_id = $2, prev_valid_until = $3::timestamptz,
         credited_until = $4::timestamptz WHERE payment_id = $1`,
      [
        paymentId,
        before.plan_id,
        before.valid_until === null ? null : new Date(before.valid_until).toISOString(),
        key.valid_until,
      ],
    );
    await tx.query(
      "invoices_paid",
      `UPDATE payment_invoices SET status = 'paid', payment_id = $2, updated_at = now() WHERE invoice_id = $1`,
      [invoice.invoice_id, paymentId],
    );
    return key;
  };

  const settleOne = async (paymentId: string): Promise<PaymentOutcome | null> =>
    pg.transaction(async (tx) => {
      const rows = await tx.query<PaymentRow & { block_ms: string }>(
        "payments_lock_pending",
        `SELECT ${PAYMENT_COLUMNS}, (extract(epoch FROM block_ts) * 1000)::bigint::text AS block_ms
         FROM payments WHERE payment_id = $1 AND status = 'pending' FOR UPDATE`,
        [paymentId],
      );
      const p = rows[0];
      if (!p) return null; // settled by another process meanwhile
      const paid = BigInt(p.amount_atto);
      // The invoice holding this tag: an open one first, else the latest expired one (a late transfer).
      const candidates = await tx.query<InvoiceRow>(
        "invoices_match",
        `SELECT ${INVOICE_COLUMNS} FROM payment_invoices
         WHERE address = $1 AND amount_tag = $2::numeric AND status IN ('open', 'expired')
         ORDER BY (status = 'open') DESC, created_at DESC LIMIT 1 FOR UPDATE`,
        [p.to_address, amountTag(paid).toString()],
      );
      const invoice = candidates[0] ? mapInvoice(candidates[0]) : null;
      let status: PaymentStatus;
      if (!invoice) status = "unmatched";
      else if (Number(p.block_ms) > Date.parse(invoice.expires_at)) status = "late";
      else status = judgeTransfer(BigInt(invoice.amount_atto), paid);
      await tx.query(
        "payments_settle",
        `UPDATE payments SET status = $2, invoice_id = $3, user_id = $4, key_id = $5, plan_id = $6,
           settled_at = now(), updated_at = now() WHERE payment_id = $1`,
        [
          paymentId,
          status,
          invoice?.invoice_id ?? null,
          invoice?.user_id ?? null,
          invoice?.key_id ?? null,
          invoice?.plan_id ?? null,
        ],
      );
      const key =
        invoice && (status === "credited" || status === "overpaid")
          ? await credit(tx, paymentId, invoice)
          : null;
      return {
        payment: await paymentIn(tx, paymentId),
        invoice: invoice ? await invoiceIn(tx, invoice.invoice_id) : null,
        key,
      };
    });

  return {
    async createInvoice(input) {
      const plans = await pg.query<{ price_alph: string }>(
        "plans_price",
        "SELECT price_alph FROM api_plans WHERE plan_id = $1",
        [input.planId],
      );
      const plan = plans[0];
      if (!plan) throw badRequest(`Unknown plan ${input.planId}`, { planId: input.planId });
      const price = alphToAtto(plan.price_alph);
      if (price === 0n) throw badRequest(`Plan ${input.planId} is free: it needs no payment.`);
      // Two requests may pick the same tag: the partial unique index refuses the second, which picks again.
      for (let attempt = 0; ; attempt++) {
        try {
          return await pg.transaction(async (tx) => {
            await tx.query("invoices_expire", EXPIRE_SQL);
            const taken = await tx.query<{ tag: string }>(
              "invoices_open_tags",
              "SELECT amount_tag::text AS tag FROM payment_invoices WHERE address = $1 AND status = 'open'",
              [input.address],
            );
            const amount = uniqueAmount(price, new Set(taken.map((t) => BigInt(t.tag))));
            if (amount === null) {
              throw new AppError("too_many_invoices", "Too many open invoices; try again later.", {
                status: 503,
              });
            }
            const rows = await tx.query<InvoiceRow>(
              "invoices_create",
              `INSERT INTO payment_invoices (invoice_id, user_id, key_id, plan_id, address, amount_atto,
                 amount_tag, status, chat_id, expires_at)
               VALUES ($1, $2, $3, $4, $5, $6::numeric, $7::numeric, 'open', $8::bigint,
                 now() + make_interval(secs => $9::double precision / 1000))
               RETURNING ${INVOICE_COLUMNS}`,
              [
                randomUUID(),
                input.userId,
                input.keyId,
                input.planId,
                input.address,
                amount.toString(),
                amountTag(amount).toString(),
                input.chatId == null ? null : String(input.chatId),
                input.ttlMs,
              ],
            );
            return mapInvoice(rows[0]!);
          });
        } catch (error) {
          if (error instanceof AppError && error.code === "conflict" && attempt < 5) continue;
          throw error;
        }
      }
    },

    getInvoice: (invoiceId) => invoiceIn(pg, invoiceId),

    async listInvoices(filter) {
      await pg.query("invoices_expire", EXPIRE_SQL);
      const { where, params } = filterSql(filter, "created_at");
      const rows = await pg.query<InvoiceRow>(
        "invoices_list",
        `SELECT ${INVOICE_COLUMNS} FROM payment_invoices ${where}
         ORDER BY created_at DESC, invoice_id LIMIT $${params.length}`,
        params,
      );
      return rows.map(mapInvoice);
    },

    async cancelInvoice(invoiceId) {
      const rows = await pg.query<InvoiceRow>(
        "invoices_cancel",
        `UPDATE payment_invoices SET status = 'cancelled', updated_at = now()
         WHERE invoice_id = $1 AND status IN ('open', 'expired') RETURNING ${INVOICE_COLUMNS}`,
        [invoiceId],
      );
      if (rows[0]) return mapInvoice(rows[0]);
      const existing = await invoiceIn(pg, invoiceId);
      if (!existing) throw notFound(`Invoice ${invoiceId} not found`, { invoiceId });
      throw new AppError(
        "invoice_not_open",
        `Invoice ${invoiceId} is ${existing.status}; it cannot be cancelled.`,
        {
          status: 409,
        },
      );
    },

    async listPayments(filter) {
      const { where, params } = filterSql(filter, "created_at");
      const rows = await pg.query<PaymentRow>(
        "payments_list",
        `SELECT ${PAYMENT_COLUMNS} FROM payments ${where}
         ORDER BY created_at DESC, payment_id LIMIT $${params.length}`,
        params,
      );
      return rows.map(mapPayment);
    },

    async recordTransfers(transfers) {
      for (const t of transfers) {
        await pg.query(
          "payments_record_transfer",
          `INSERT INTO payments (payment_id, source, status, amount_atto, to_address, from_address, tx_id,
             block_hash, chain_index, block_ts, block_seq)
           VALUES ($1, 'chain', 'pending', $2::numeric, $3, $4, $5, $6, $7, to_timestamp($8::double precision / 1000), $9)
           ON CONFLICT (payment_id) DO UPDATE SET block_seq = EXCLUDED.block_seq, block_hash = EXCLUDED.block_hash,
             status = CASE WHEN payments.status = 'reversed' THEN 'pending' ELSE payments.status END,
             updated_at = now()
           WHERE payments.source = 'chain' AND payments.block_seq < EXCLUDED.block_seq`,
          [
            t.event_id,
            t.amount_atto,
            t.to_address,
            t.from_address,
            t.tx_id,
            t.block_hash,
            t.chain_index,
            t.block_ts,
            t.seq,
          ],
        );
      }
    },

    async settlePending(watermark) {
      const any = await pg.query(
        "payments_any_pending",
        "SELECT 1 FROM payments WHERE status = 'pending' LIMIT 1",
      );
      if (any.length === 0) return [];
      const watermarkMs = typeof watermark === "number" ? watermark : await watermark();
      const pending = await pg.query<{ payment_id: string }>(
        "payments_pending",
        `SELECT payment_id FROM payments WHERE status = 'pending'
           AND block_ts <= to_timestamp($1::double precision / 1000)
         ORDER BY block_ts, payment_id`,
        [watermarkMs],
      );
      const out: PaymentOutcome[] = [];
      for (const { payment_id } of pending) {
        const r = await settleOne(payment_id);
        if (r) out.push(r);
      }
      return out;
    },

    async retractBlock(blockHash, seq) {
      const hit = await pg.query<{ payment_id: string }>(
        "payments_of_block",
        "SELECT payment_id FROM payments WHERE block_hash = $1 AND source = 'chain' AND block_seq < $2",
        [blockHash, seq],
      );
      const out: PaymentOutcome[] = [];
      for (const { payment_id } of hit) {
        const r = await pg.transaction(async (tx) => {
          const rows = await tx.query<{
            status: PaymentStatus;
            invoice_id: string | null;
            key_id: string | null;
            plan_id: string | null;
            prev_plan_id: string | null;
            credited_until: string | null;
          }>(
            "payments_lock_retract",
            `SELECT status, invoice_id, key_id, plan_id, prev_plan_id, ${TS("credited_until")} AS credited_until
             FROM payments WHERE payment_id = $1 AND block_seq < $2 FOR UPDATE`,
            [payment_id, seq],
          );
          const p = rows[0];
          if (!p) return null;
          const wasCredit = p.status === "credited" || p.status === "overpaid";
          await tx.query(
            "payments_reverse",
            `UPDATE payments SET status = 'reversed', block_seq = $2, updated_at = now(),
               note = CASE WHEN $3 THEN 'block retracted after the credit' ELSE 'block retracted' END
             WHERE payment_id = $1`,
            [payment_id, seq, wasCredit],
          );
          let key: PaymentOutcome["key"] = null;
          if (wasCredit && p.key_id && p.invoice_id) {
            // Back to the previous plan; the validity loses this payment's period (later changes stay).
            const keys = await tx.query<{ key_id: string; plan_id: string; valid_until: string | null }>(
              "payments_key_reverse",
              `UPDATE api_keys k SET plan_id = COALESCE($2, k.plan_id),
                 valid_until = k.valid_until - make_interval(days => p.validity_days), updated_at = now()
               FROM api_plans p WHERE k.key_id = $1 AND p.plan_id = $3
               RETURNING k.key_id, k.plan_id, ${TS("k.valid_until")} AS valid_until`,
              [p.key_id, p.prev_plan_id, p.plan_id],
            );
            key = keys[0] ?? null;
            // The invoice is open again: the same transfer mined in another block pays it.
            await tx.query(
              "invoices_reopen",
              `UPDATE payment_invoices SET status = 'open', payment_id = NULL, updated_at = now()
               WHERE invoice_id = $1 AND payment_id = $2`,
              [p.invoice_id, payment_id],
            );
          }
          return {
            payment: await paymentIn(tx, payment_id),
            invoice: p.invoice_id ? await invoiceIn(tx, p.invoice_id) : null,
            key,
          };
        });
        if (r) out.push(r);
      }
      return out;
    },

    async recordManual(input) {
      return pg.transaction(async (tx) => {
        await tx.query("invoices_expire", EXPIRE_SQL);
        const rows = await tx.query<InvoiceRow>(
          "invoices_lock",
          `SELECT ${INVOICE_COLUMNS} FROM payment_invoices WHERE invoice_id = $1 FOR UPDATE`,
          [input.invoiceId],
        );
        const invoice = rows[0] ? mapInvoice(rows[0]) : null;
        if (!invoice) throw notFound(`Invoice ${input.invoiceId} not found`, { invoiceId: input.invoiceId });
        if (invoice.status === "paid" || invoice.status === "cancelled") {
          throw new AppError("invoice_not_open", `Invoice ${invoice.invoice_id} is ${invoice.status}.`, {
            status: 409,
          });
        }
        const paymentId = `manual:${randomUUID()}`;
        await tx.query(
          "payments_manual",
          `INSERT INTO payments (payment_id, source, status, amount_atto, to_address, invoice_id, user_id,
             key_id, plan_id, note, settled_at)
           VALUES ($1, 'manual', 'credited', $2::numeric, $3, $4, $5, $6, $7, $8, now())`,
          [
            paymentId,
            input.amountAtto ?? invoice.amount_atto,
            invoice.address,
            invoice.invoice_id,
            invoice.user_id,
            invoice.key_id,
            invoice.plan_id,
            input.note ?? null,
          ],
        );
        const key = await credit(tx, paymentId, invoice);
        return {
          payment: await paymentIn(tx, paymentId),
          invoice: await invoiceIn(tx, invoice.invoice_id),
          key,
        };
      });
    },

    async stats() {
      const rows = await pg.query<Record<keyof PaymentStats, string>>(
        "payments_stats",
        `SELECT
           (SELECT count(*) FROM payment_invoices WHERE status = 'open' AND expires_at > now())::text AS invoices_open,
           (SELECT count(*) FROM payments WHERE status IN ('credited', 'overpaid'))::text AS payments_credited,
           (SELECT count(*) FROM payments
              WHERE status IN ('overpaid', 'underpaid', 'late', 'unmatched', 'reversed'))::text AS payments_flagged,
           (SELECT count(*) FROM payments WHERE status = 'pending')::text AS payments_pending,
           (SELECT COALESCE(sum(amount_atto), 0) FROM payments
              WHERE source = 'chain' AND status IN ('credited', 'overpaid'))::text AS alph_received`,
      );
      const r = rows[0]!;
      return {
        invoices_open: Number(r.invoices_open),
        payments_credited: Number(r.payments_credited),
        payments_flagged: Number(r.payments_flagged),
        payments_pending: Number(r.payments_pending),
        alph_received: attoToAlph(r.alph_received),
      };
    },
  };
}
