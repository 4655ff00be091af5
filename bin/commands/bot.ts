/** `bot`: the Telegram bot (set-webhook, poll). */
import { type Command, InvalidArgumentError } from "commander";
import type { ApiDeps } from "../../api/types.ts";
import { ConfigError } from "../../lib/errors.ts";
import { runProcess } from "../../lib/run-process.ts";
import type { TelegramBot } from "../../lib/telegram/bot.ts";
import { context, openPreparedStores } from "./shared.ts";

/** The Telegram bot of the API's deps, or a ConfigError naming what is missing. */
function telegramOf(deps: ApiDeps): TelegramBot {
  if (!deps.config.TELEGRAM_BOT_TOKEN) throw new ConfigError("The bot needs TELEGRAM_BOT_TOKEN.");
  if (!deps.telegram) throw new ConfigError("The bot needs the database (DATABASES=on).");
  return deps.telegram;
}

/** Bot subcommands: set-webhook (register POST /telegram/webhook with Telegram), poll (long polling). */
export function installBotCommands(program: Command): void {
  const bot = program.command("bot").description("The Telegram bot (TELEGRAM_BOT_TOKEN)");
  bot
    .command("set-webhook")
    .description(
      "Register TELEGRAM_WEBHOOK_URL (or --url) and TELEGRAM_WEBHOOK_SECRET with Telegram as the bot's webhook",
    )
    .option("--url <url>", "public https URL of POST /telegram/webhook (default TELEGRAM_WEBHOOK_URL)")
    .action(async (opts: { url?: string }) => {
      const ctx = context();
      const url = opts.url ?? ctx.config.TELEGRAM_WEBHOOK_URL;
      if (!url) throw new InvalidArgumentError("Give --url or set TELEGRAM_WEBHOOK_URL");
      if (!ctx.config.TELEGRAM_WEBHOOK_SECRET)
        throw new InvalidArgumentError("Set TELEGRAM_WEBHOOK_SECRET: the webhook refuses updates without it");
      const { createApiDeps } = await import("../../api/deps.ts");
      const stores = await openPreparedStores(ctx, "bot set-webhook");
      try {
        await telegramOf(createApiDeps(ctx.config, stores, ctx.log, ctx.metrics)).setWebhook(url);
        process.stdout.write(`${JSON.stringify({ ok: true, url })}\n`);
      } finally {
        await stores.close();
      }
    });
  bot
    .command("poll")
    .description("Run the bot by long polling (getUpdates) instead of a webhook: local use, one process only")
    .action(async () => {
      const ctx = context();
      await runProcess("bot", ctx.log, async () => {
        const { createApiDeps } = await import("../../api/deps.ts");
        const stores = await openPreparedStores(ctx, "bot poll");
        const telegram = telegramOf(createApiDeps(ctx.config, stores, ctx.log, ctx.metrics));
        await telegram.startPolling();
        return async () => {
          await telegram.stop();
          await stores.close();
        };
      });
    });
}
