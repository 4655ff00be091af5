/**
 * Payments: `alephium.events.v2` → every ALPH transfer to PAYMENT_ADDRESS is recorded by its event id
 * (lib/payments/repo.ts), then settled once the events watermark passes its block (CONFIRMATIONS deep
 * and served to pollers): an invoice's exact amount credits its key (plan, valid_until,
 * last_payment_at) in one transaction; under-, over-, late and unmatched transfers are recorded for
 * admins. A retracted block reverses its payments. Transfers above the watermark wait for a later batch.
 * Payers and bot admins are told through the bot when a token is configured.
 */
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { readProgress } from "../../lib/events/reader.ts";
import {
  createPaymentsRepo,
  type PaymentOutcome,
  type PaymentsRepo,
  type TransferInput,
} from "../../lib/payments/repo.ts";
import { announcePayments, createTelegramNotifier, type TelegramNotifier } from "../../lib/telegram/bot.ts";
import { createTelegramStore, type TelegramStore } from "../../lib/telegram/store.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { defineProcessor } from "../processor.ts";

interface PaymentsState {
  repo: PaymentsRepo;
  store: TelegramStore;
  notifier: TelegramNotifier | null;
}

/** The ALPH transfers to `address` in a batch (sends and contract payouts). */
export function paymentTransfers(messages: EventsMessage[], address: string): TransferInput[] {
  const out: TransferInput[] = [];
  for (const m of messages) {
    if (m.kind !== "block") continue;
    for (const e of m.events) {
      if (e.category !== "transfer" || e.type !== "alph" || e.to !== address) continue;
      if (e.sub_kind !== "send" && e.sub_kind !== "payout") continue;
      if (e.token_id !== ALPH_TOKEN_ID) continue;
      out.push({
        event_id: e.id,
        amount_atto: e.amount,
        to_address: e.to,
        from_address: e.from,
        tx_id: e.tx_id,
        block_hash: m.block_hash,
        chain_index: m.chain_index,
        block_ts: m.block_timestamp,
        seq: m.seq,
      });
    }
  }
  return out;
}

export const paymentsProcessor = defineProcessor<
  EventsMessage,
  PaymentsState,
  { outcomes: PaymentOutcome[]; recorded: number }
>({
  name: "payments",
  topic: "events",
  group: CONSUMER_GROUPS.payments,
  codec: (codecs) => codecs.events,
  setup: (deps) => ({
    repo: createPaymentsRepo(deps.pg),
    store: createTelegramStore(deps.pg),
    notifier: createTelegramNotifier(deps.config, deps.log),
  }),
  runs: {
    begin: () => ({ outcomes: [] as PaymentOutcome[], recorded: 0 }),
    // A run's transfers to PAYMENT_ADDRESS, recorded as one write.
    async blocks(run, { deps, state }, batch) {
      const address = deps.config.PAYMENT_ADDRESS;
      if (!address) return;
      const transfers = paymentTransfers(run, address);
      await state.repo.recordTransfers(transfers);
      batch.recorded += transfers.length;
    },
    // A retraction takes back its block's transfers (and what they settled).
    async retraction(m, { deps, state }, batch) {
      if (!deps.config.PAYMENT_ADDRESS) return;
      batch.outcomes.push(...(await state.repo.retractBlock(m.block_hash, m.seq)));
    },
    // Then the payments whose block the watermark passed are settled and announced.
    async end(batch, { deps, log, state }) {
      if (!deps.config.PAYMENT_ADDRESS) return;
      const { outcomes } = batch;
      deps.metrics.pipelineRows.inc({ stage: "payments", table: "payments" }, batch.recorded);
      // The watermark (a ClickHouse read) only when a transfer waits for it.
      outcomes.push(...(await state.repo.settlePending(async () => (await readProgress(deps.ch)).watermark)));
      for (const o of outcomes) {
        log.info(
          {
            payment_id: o.payment.payment_id,
            status: o.payment.status,
            invoice_id: o.invoice?.invoice_id ?? null,
          },
          "Payment settled.",
        );
      }
      if (state.notifier) await announcePayments(state.notifier, state.store, outcomes);
    },
  },
});
