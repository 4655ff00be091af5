/** The bot's messages (pure): short, HTML parse mode, every user-given or stored value escaped. */

import type { ApiKey, ApiPlan } from "../keys/repo.ts";
import type { Invoice, PaymentOutcome } from "../payments/repo.ts";

/** Escapes text for Telegram's HTML parse mode. */
export function esc(text: string | number): string {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const day = (iso: string | null): string => (iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "no end");

export const USER_COMMANDS: [string, string][] = [
  ["start", "what this bot does"],
  ["help", "the commands"],
  ["plans", "plans, limits and prices"],
  ["key", "get your free API key (once)"],
  ["keys", "your keys, their plan and validity"],
  ["pay", "/pay &lt;plan&gt;: an invoice to buy or renew a plan in ALPH"],
  ["status", "how far the indexer is"],
];

export const ADMIN_COMMANDS: [string, string][] = [
  ["stats", "users, keys and payments"],
  ["ban", "/ban &lt;telegram user id&gt;"],
  ["unban", "/unban &lt;telegram user id&gt;"],
  [
    "reindex",
    "/reindex &lt;from&gt; &lt;to&gt; [dapp id | contract address]: reprocess a block-time range (dates as 2026-11-01 or 2026-11-01T12:00Z, or Unix ms); /reindex alone lists recent jobs; /reindex cancel &lt;job id&gt;",
  ],
];

export function helpMessage(isAdmin: boolean): string {
  const lines = USER_COMMANDS.map(([c, d]) => `/${c}: ${d}`);
  if (isAdmin) lines.push("", "<b>Admin</b>", ...ADMIN_COMMANDS.map(([c, d]) => `/${c}: ${d}`));
  return lines.join("\n");
}

export function startMessage(): string {
  return [
    "<b>Alephium indexer API</b>",
    "Normalized events, prices and tokens of the Alephium chain over HTTP.",
    "Get a free key with /key; buy or renew a plan with /pay &lt;plan&gt; (see /plans).",
  ].join("\n");
}

export function plansMessage(plans: ApiPlan[]): string {
  return plans
    .map(
      (p) =>
        `<b>${esc(p.name)}</b> (<code>${esc(p.plan_id)}</code>): ${p.rpm}/min, ${p.rpd}/day, ` +
        (p.price_alph === "0" ? "free" : `${esc(p.price_alph)} ALPH`) +
        ` for ${p.validity_days} days`,
    )
    .join("\n");
}

export function newKeyMessage(key: string, plan: ApiPlan | undefined, validUntil: string | null): string {
  return [
    "Your API key (shown once: store it now):",
    `<code>${esc(key)}</code>`,
    plan ? `Plan <b>${esc(plan.name)}</b>: ${plan.rpm}/min, ${plan.rpd}/day.` : "",
    `Valid until ${day(validUntil)}. Send it in both X-API-Key and Authorization: Bearer.`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** `usage`: requests of each key over the last 24 hours (`key_usage`, the usage route's figures). */
export function keysMessage(
  keys: ApiKey[],
  plans: ApiPlan[],
  now: number,
  usage: ReadonlyMap<string, number> | null = null,
): string {
  if (keys.length === 0) return "You have no key yet: /key gives you a free one.";
  const byId = new Map(plans.map((p) => [p.plan_id, p]));
  const lines = keys.map((k) => {
    const plan = byId.get(k.plan_id);
    const limits = plan ? ` (${plan.rpm}/min, ${plan.rpd}/day)` : "";
    const head = `<code>${esc(k.key_prefix)}…</code> ${esc(k.plan_id)}${limits}`;
    if (k.revoked_at) return `${head}: revoked`;
    if (k.valid_until && Date.parse(k.valid_until) <= now) {
      const renew = k.plan_id === "free" ? "pro" : k.plan_id;
      return `${head}: <b>expired</b> ${day(k.valid_until)}; renew with /pay ${esc(renew)}`;
    }
    const used = usage ? `; used in the last 24 h ${usage.get(k.key_id) ?? 0}/${plan?.rpd ?? "?"}` : "";
    return `${head}: valid until ${day(k.valid_until)}${used}`;
  });
  return lines.join("\n");
}

export function invoiceMessage(invoice: Invoice): string {
  return [
    `Invoice for plan <b>${esc(invoice.plan_id)}</b>:`,
    `send exactly <b>${esc(invoice.amount_alph)} ALPH</b> to`,
    `<code>${esc(invoice.address)}</code>`,
    `before ${day(invoice.expires_at)}. The exact amount identifies your payment.`,
  ].join("\n");
}

/** The message to the payer about a settled or reversed payment, or null when nothing is worth saying. */
export function payerMessage(o: PaymentOutcome): string | null {
  const p = o.payment;
  const amount = `${esc(p.amount_alph)} ALPH`;
  switch (p.status) {
    case "credited":
    case "overpaid":
      return [
        `Payment of ${amount} received: your key is on plan <b>${esc(o.key?.plan_id ?? p.plan_id ?? "")}</b>`,
        `until ${day(o.key?.valid_until ?? null)}.`,
        p.status === "overpaid" ? "You paid more than the invoice; an admin has been told." : "",
      ]
        .filter(Boolean)
        .join("\n");
    case "underpaid":
      return `Payment of ${amount} received, less than the invoice's ${esc(o.invoice?.amount_alph ?? "?")} ALPH: not credited. An admin has been told.`;
    case "late":
      return `Payment of ${amount} arrived after the invoice expired: not credited. An admin has been told.`;
    case "reversed":
      return `Your payment of ${amount} was in a block that left the main chain: its credit is reversed. An admin has been told.`;
    default:
      return null;
  }
}

/** The message to bot admins about a payment that needs a look, or null. */
export function adminFlagMessage(o: PaymentOutcome): string | null {
  const p = o.payment;
  if (!["overpaid", "underpaid", "late", "unmatched", "reversed"].includes(p.status)) return null;
  return [
    `Payment <b>${esc(p.status)}</b>: ${esc(p.amount_alph)} ALPH`,
    `tx <code>${esc(p.tx_id)}</code>`,
    o.invoice
      ? `invoice <code>${esc(o.invoice.invoice_id)}</code> (${esc(o.invoice.amount_alph)} ALPH)`
      : "no invoice",
    p.user_id ? `user ${esc(p.user_id)}` : "",
  ]
    .filter(Boolean)
    .join("\n");
}

/** The chat of a Telegram key owner (`tg:<id>`), or null for other users. */
export function chatOfUser(userId: string | null): number | null {
  const m = userId ? /^tg:(\d{1,16})$/.exec(userId) : null;
  return m ? Number(m[1]) : null;
}

export function statusMessage(progress: { watermark: number } | null, now: number): string {
  if (!progress) return "Indexer status: no event store on this deployment.";
  if (progress.watermark === 0) return "Indexer status: <b>starting</b> (not every chain is indexed yet).";
  const lagS = Math.max(0, Math.round((now - progress.watermark) / 1000));
  return `Indexer status: <b>ok</b>, events served up to ${day(new Date(progress.watermark).toISOString())} (lag ${lagS} s).`;
}

/** One line per reindex job for the bot's /reindex. */
export function jobsMessage(
  jobs: {
    job_id: string;
    state: string;
    from_ts: number;
    to_ts: number;
    blocks_done: number;
    blocks_total: number | null;
    error: string | null;
  }[],
): string {
  if (jobs.length === 0) return "No reindex jobs yet.";
  const day = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");
  return [
    "<b>Reindex jobs</b> (newest first)",
    ...jobs.map(
      (j) =>
        `<code>${esc(j.job_id)}</code> ${esc(j.state)} ${esc(day(j.from_ts))} → ${esc(day(j.to_ts))}, ${j.blocks_done}/${j.blocks_total ?? "?"} blocks${j.error ? `, error: ${esc(j.error.slice(0, 200))}` : ""}`,
    ),
  ].join("\n");
}

/** A /reindex time argument: Unix ms, or an ISO 8601 date or date-time (UTC when no zone is given). */
export function parseTimeArg(text: string): number | null {
  if (/^\d{1,16}$/.test(text)) return Number.isSafeInteger(Number(text)) ? Number(text) : null;
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text))
    return null;
  const withZone = /T|\s/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text}Z` : text;
  const ms = Date.parse(withZone.replace(" ", "T"));
  return Number.isNaN(ms) ? null : ms;
}
