/**
 * The Telegram bot (grammy): the only module that imports grammy. Webhook mode hands each update to
 * `handleUpdate` (the API's POST /telegram/webhook); polling mode (`bot poll`, or `start` with
 * TELEGRAM_MODE=polling) fetches them with getUpdates. Both run the same middleware: an update id is
 * claimed in Postgres first (Telegram retries updates), banned users are refused, then the command.
 */
import { randomUUID } from "node:crypto";
import { Api, Bot, type Context } from "grammy";
import type { Config } from "../config.ts";
import { AppError } from "../errors.ts";
import type { JobsService } from "../jobs/service.ts";
import type { KeysRepo } from "../keys/repo.ts";
import type { Logger } from "../logger.ts";
import type { PaymentOutcome, PaymentsRepo } from "../payments/repo.ts";
import type { UsageRecorder } from "../usage/recorder.ts";
import {
  ADMIN_COMMANDS,
  adminFlagMessage,
  chatOfUser,
  esc,
  helpMessage,
  invoiceMessage,
  jobsMessage,
  keysMessage,
  newKeyMessage,
  parseTimeArg,
  payerMessage,
  plansMessage,
  startMessage,
  statusMessage,
  USER_COMMANDS,
} from "./messages.ts";
import type { TelegramStore } from "./store.ts";

export interface TelegramBotDeps {
  config: Pick<
    Config,
    | "TELEGRAM_BOT_TOKEN"
    | "TELEGRAM_API_ROOT"
    | "TELEGRAM_WEBHOOK_SECRET"
    | "PAYMENT_ADDRESS"
    | "INVOICE_TTL_MS"
  >;
  log: Logger;
  keys: KeysRepo;
  payments: PaymentsRepo;
  store: TelegramStore;
  /**
   * Per-key usage figures (`key_usage`, the same as `GET /system/keys/{keyid}/usage`): /keys shows each
   * key's requests over the last 24 hours. Null hides them.
   */
  usage: Pick<UsageRecorder, "last24h"> | null;
  /** Reindex jobs (null without a database): /reindex creates and lists them. */
  jobs?: JobsService | null;
  /** The events watermark (null without an event store). */
  progress: (() => Promise<{ watermark: number }>) | null;
}

export interface TelegramBot {
  /** Handles one webhook update; resolves after its replies are sent (a duplicate update is skipped). */
  handleUpdate(update: unknown): Promise<void>;
  /** Long polling until `stop` (deletes any webhook first). */
  startPolling(): Promise<void>;
  /** Registers the webhook URL and secret with Telegram. */
  setWebhook(url: string): Promise<void>;
  stop(): Promise<void>;
}

/** Sends messages outside an update (payment notices from the payments processor). */
export interface TelegramNotifier {
  send(chatId: number, html: string): Promise<void>;
}

export const telegramUserId = (id: number): string => `tg:${id}`;

export function createTelegramNotifier(
  config: Pick<Config, "TELEGRAM_BOT_TOKEN" | "TELEGRAM_API_ROOT">,
  log: Logger,
): TelegramNotifier | null {
  if (!config.TELEGRAM_BOT_TOKEN) return null;
  const api = new Api(config.TELEGRAM_BOT_TOKEN, { apiRoot: config.TELEGRAM_API_ROOT });
  return {
    async send(chatId, html) {
      try {
        await api.sendMessage(chatId, html, { parse_mode: "HTML" });
      } catch (error) {
        // A notice is best effort: the payment is recorded and visible to the user and admins anyway.
        log.warn({ err: error, chat_id: chatId }, "Telegram message not sent.");
      }
    },
  };
}

/** Tells the payer and (for anything unusual) every bot admin about settled or reversed payments. */
export async function announcePayments(
  notifier: TelegramNotifier,
  store: Pick<TelegramStore, "listAdmins">,
  outcomes: PaymentOutcome[],
): Promise<void> {
  if (outcomes.length === 0) return;
  const admins = outcomes.some((o) => adminFlagMessage(o)) ? await store.listAdmins() : [];
  for (const o of outcomes) {
    const chat = o.invoice?.chat_id ?? chatOfUser(o.payment.user_id);
    const toPayer = payerMessage(o);
    if (chat !== null && toPayer) await notifier.send(chat, toPayer);
    const flag = adminFlagMessage(o);
    if (flag) for (const a of admins) await notifier.send(a.telegram_user_id, flag);
  }
}

const ADMIN_ONLY = new Set(ADMIN_COMMANDS.map(([c]) => c));

export function createTelegramBot(deps: TelegramBotDeps): TelegramBot {
  const { config, keys, payments, store } = deps;
  const log = deps.log.child({ component: "telegram" });
  const bot = new Bot(config.TELEGRAM_BOT_TOKEN, { client: { apiRoot: config.TELEGRAM_API_ROOT } });
  let ready: Promise<void> | null = null;
  const init = () => {
    ready ??= bot.init().catch((error: unknown) => {
      ready = null;
      throw error;
    });
    return ready;
  };
  const reply = (ctx: Context, html: string) => ctx.reply(html, { parse_mode: "HTML" });

  // Each update once: Telegram retries an update until it gets a 2xx, and polling may see one twice.
  bot.use(async (ctx, next) => {
    const id = ctx.update.update_id;
    if (!(await store.claimUpdate(id))) {
      log.info({ update_id: id }, "Telegram update already handled; skipped.");
      return;
    }
    try {
      await next();
    } catch (error) {
      await store.releaseUpdate(id);
      throw error;
    }
  });
  bot.use(async (ctx, next) => {
    const from = ctx.from;
    if (!from || from.is_bot) return;
    if (await store.isBanned(from.id)) {
      if (ctx.message) await reply(ctx, "You are banned from this bot.");
      return;
    }
    await next();
  });
  // Admin commands stop here for everyone else.
  bot.use(async (ctx, next) => {
    const command = /^\/([a-z_]+)(?:@\w+)?(?:\s|$)/i.exec(ctx.message?.text ?? "")?.[1]?.toLowerCase();
    if (command && ADMIN_ONLY.has(command) && !(await store.isAdmin(ctx.from!.id))) {
      await reply(ctx, "This command is for bot admins.");
      return;
    }
    await next();
  });

  const privateOnly = async (ctx: Context): Promise<boolean> => {
    if (ctx.chat?.type === "private") return true;
    await reply(ctx, "Send this command in a private chat with the bot.");
    return false;
  };
  /** The caller's newest key that is not revoked (expired ones can be renewed). */
  const ownKey = async (userId: number) =>
    (await keys.listKeys(telegramUserId(userId))).filter((k) => !k.revoked_at).at(-1) ?? null;

  bot.command("start", async (ctx) => {
    await store.touchUser(ctx.from!.id, ctx.from!.username ?? null, ctx.chat.id);
    await reply(ctx, startMessage());
  });
  bot.command("help", async (ctx) => reply(ctx, helpMessage(await store.isAdmin(ctx.from!.id))));
  bot.command("plans", async (ctx) => reply(ctx, plansMessage(await keys.listPlans())));
  bot.command("key", async (ctx) => {
    if (!(await privateOnly(ctx))) return;
    const uid = ctx.from!.id;
    const issued = await store.touchUser(uid, ctx.from!.username ?? null, ctx.chat.id);
    const marker = `pending:${randomUUID()}`;
    if (issued || !(await store.reserveFreeKey(uid, marker))) {
      await reply(ctx, "You already have your free key (keys are shown once). /keys lists yours.");
      return;
    }
    let keyId: string | null = null;
    try {
      const created = await keys.createKey({ userId: telegramUserId(uid), planId: "free", level: "user" });
      keyId = created.keyId;
      await store.confirmFreeKey(uid, marker, created.keyId);
      const plan = (await keys.listPlans()).find((p) => p.plan_id === "free");
      await reply(ctx, newKeyMessage(created.key, plan, created.valid_until));
      log.info({ telegram_user_id: uid, key_id: created.keyId }, "Free key issued.");
    } catch (error) {
      // A key the user never saw is no key: revoked, and Telegram's retry of the update issues another.
      if (keyId) {
        await keys.revoke(keyId);
        await store.unreserveFreeKey(uid, keyId);
      } else await store.unreserveFreeKey(uid, marker);
      throw error;
    }
  });
  bot.command("keys", async (ctx) => {
    const list = await keys.listKeys(telegramUserId(ctx.from!.id));
    const totals = deps.usage ? await deps.usage.last24h(list.map((k) => k.key_id)) : null;
    const usage = totals ? new Map([...totals].map(([id, t]) => [id, t.requests])) : null;
    await reply(ctx, keysMessage(list, await keys.listPlans(), Date.now(), usage));
  });
  bot.command("pay", async (ctx) => {
    if (!config.PAYMENT_ADDRESS) return reply(ctx, "Payments are off on this deployment.");
    const planId = ctx.match.trim().toLowerCase();
    const plans = await keys.listPlans();
    const plan = plans.find((p) => p.plan_id === planId);
    if (!plan || plan.price_alph === "0") {
      const paid = plans.filter((p) => p.price_alph !== "0").map((p) => esc(p.plan_id));
      return reply(ctx, `Usage: /pay &lt;plan&gt;, one of: ${paid.join(", ")}. See /plans.`);
    }
    const key = await ownKey(ctx.from!.id);
    if (!key) return reply(ctx, "Get a key first with /key; a payment moves it to the plan.");
    const invoice = await payments.createInvoice({
      userId: key.user_id,
      keyId: key.key_id,
      planId: plan.plan_id,
      address: config.PAYMENT_ADDRESS,
      ttlMs: config.INVOICE_TTL_MS,
      chatId: ctx.chat.id,
    });
    try {
      await reply(ctx, invoiceMessage(invoice));
    } catch (error) {
      // Unseen, it would only hold its amount until expiry: Telegram's retry makes a new one.
      await payments.cancelInvoice(invoice.invoice_id);
      throw error;
    }
    log.info({ invoice_id: invoice.invoice_id, plan_id: plan.plan_id }, "Invoice created by the bot.");
  });
  bot.command("status", async (ctx) =>
    reply(ctx, statusMessage(deps.progress ? await deps.progress() : null, Date.now())),
  );

  bot.command("stats", async (ctx) => {
    const [t, p, k] = await Promise.all([store.counts(), payments.stats(), keys.listKeys()]);
    await reply(
      ctx,
      [
        `<b>Users</b> ${t.users} (banned ${t.banned}), admins ${t.admins}`,
        `<b>Keys</b> ${k.length}, active ${k.filter((x) => !x.revoked_at && (!x.valid_until || Date.parse(x.valid_until) > Date.now())).length}`,
        `<b>Invoices</b> open ${p.invoices_open}`,
        `<b>Payments</b> credited ${p.payments_credited}, pending ${p.payments_pending}, to check ${p.payments_flagged}`,
        `<b>Received</b> ${esc(p.alph_received)} ALPH`,
      ].join("\n"),
    );
  });
  for (const action of ["ban", "unban"] as const) {
    bot.command(action, async (ctx) => {
      const target = ctx.match.trim();
      if (!/^[1-9]\d{0,15}$/.test(target) || !Number.isSafeInteger(Number(target))) {
        return reply(ctx, `Usage: /${action} &lt;telegram user id&gt;`);
      }
      const id = Number(target);
      if (action === "ban") {
        if (id === ctx.from!.id || (await store.isAdmin(id))) return reply(ctx, "Admins cannot be banned.");
        await store.ban(id, ctx.from!.id);
        log.info({ telegram_user_id: id, by: ctx.from!.id }, "Telegram user banned.");
        return reply(ctx, `User <code>${id}</code> is banned.`);
      }
      const was = await store.unban(id, ctx.from!.id);
      return reply(
        ctx,
        was ? `User <code>${id}</code> is no longer banned.` : `User <code>${id}</code> was not banned.`,
      );
    });
  }
  bot.command("reindex", async (ctx) => {
    const jobs = deps.jobs;
    if (!jobs) return reply(ctx, "Reindex jobs need the database, which this deployment runs without.");
    const args = ctx.match.trim().split(/\s+/).filter(Boolean);
    const usage = `Usage: ${ADMIN_COMMANDS.find(([c]) => c === "reindex")?.[1] ?? "/reindex"}`;
    try {
      if (args.length === 0) return reply(ctx, jobsMessage((await jobs.list({ limit: 5 })).jobs));
      if (args[0] === "cancel") {
        const id = args[1] ?? "";
        if (!/^[0-9a-f-]{36}$/i.test(id)) return reply(ctx, usage);
        const job = await jobs.cancel(id.toLowerCase());
        return reply(ctx, `Job <code>${esc(job.job_id)}</code> is ${esc(job.state)}.`);
      }
      const [fromArg = "", toArg = "", scopeArg] = args;
      const from = parseTimeArg(fromArg);
      const to = parseTimeArg(toArg);
      if (from === null || to === null || args.length > 3) return reply(ctx, usage);
      const isAddress = scopeArg !== undefined && /^[1-9A-HJ-NP-Za-km-z]{20,100}$/.test(scopeArg);
      const job = await jobs.create({
        fromTs: from,
        toTs: to,
        dappId: scopeArg !== undefined && !isAddress ? scopeArg : null,
        contractAddress: isAddress ? scopeArg : null,
        createdBy: `telegram:${ctx.from!.id}`,
      });
      log.info({ job_id: job.job_id, by: ctx.from!.id }, "Reindex job created from the bot.");
      return reply(
        ctx,
        `Reindex job <code>${esc(job.job_id)}</code> is ${esc(job.state)}. /reindex shows progress.`,
      );
    } catch (error) {
      // The service's refusals (overlap, unknown dapp, bad range) are meant for the admin.
      if (error instanceof AppError && error.status < 500) return reply(ctx, esc(error.message));
      throw error;
    }
  });
  bot.on("message:text", async (ctx) => {
    if (ctx.chat.type === "private") await reply(ctx, "Unknown command. /help lists them.");
  });

  bot.catch((error) => {
    log.error({ err: error.error, update_id: error.ctx.update.update_id }, "Telegram update failed.");
  });

  return {
    async handleUpdate(update) {
      await init();
      // Errors are thrown (not given to bot.catch): the webhook answers 500 and Telegram retries.
      await bot.handleUpdate(update as Parameters<typeof bot.handleUpdate>[0]);
    },
    async startPolling() {
      await init();
      await bot.api.setMyCommands(
        USER_COMMANDS.map(([command, d]) => ({ command, description: d.replace(/&lt;|&gt;/g, "") })),
      );
      // Resolves once polling runs (any webhook deleted); a later failure is logged.
      await new Promise<void>((resolve, reject) => {
        bot
          .start({
            onStart: () => {
              log.info("Telegram long polling started.");
              resolve();
            },
          })
          .catch((error: unknown) => {
            log.error({ err: error }, "Telegram long polling stopped.");
            reject(error);
          });
      });
    },
    async setWebhook(url) {
      await bot.api.setWebhook(url, {
        secret_token: config.TELEGRAM_WEBHOOK_SECRET || undefined,
        allowed_updates: ["message"],
      });
      await bot.api.setMyCommands(
        USER_COMMANDS.map(([command, d]) => ({ command, description: d.replace(/&lt;|&gt;/g, "") })),
      );
    },
    async stop() {
      if (bot.isRunning()) await bot.stop();
    },
  };
}
