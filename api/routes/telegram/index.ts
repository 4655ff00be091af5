/**
 * Telegram group: the bot's webhook (Telegram posts updates here, authenticated by the secret token it
 * was given at `bot set-webhook`) and the bot admins (admin key).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { notFound } from "../../../lib/errors.ts";
import { sendProblem } from "../../plugins/errors.ts";
import { requireDb } from "../../require-db.ts";
import { Nullable, Ok } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const TelegramAdmin = Type.Object(
  {
    telegram_user_id: Type.Integer({ description: "Telegram user id of the admin." }),
    username: Nullable(Type.String({ description: "Telegram username (without @), if given." })),
    added_at: Type.String({ format: "date-time" }),
  },
  { $id: "TelegramAdmin", title: "TelegramAdmin" },
);

const TelegramUserId = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "Telegram user id (a positive integer, up to 2^53-1).",
});

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Constant-time comparison of the secret header with the configured secret (an empty secret matches nothing). */
function secretMatches(given: string | string[] | undefined, secret: string): boolean {
  if (!secret || typeof given !== "string") return false;
  return timingSafeEqual(digest(given), digest(secret));
}

export async function telegramRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(TelegramAdmin);
  if (deps.telegram && deps.config.TELEGRAM_MODE === "webhook" && !deps.config.TELEGRAM_WEBHOOK_SECRET) {
    deps.log.warn("TELEGRAM_WEBHOOK_SECRET is empty: the Telegram webhook refuses every update.");
  }

  app.post(
    "/telegram/webhook",
    {
      config: { access: "public", db: "optional" },
      // After validation, like every route (the body's shape is public in the OpenAPI document).
      preHandler: async (request, reply) => {
        if (!deps.telegram || deps.config.TELEGRAM_MODE !== "webhook") {
          return sendProblem(
            request,
            reply,
            404,
            "bot_disabled",
            "Telegram bot not found: it is not enabled here.",
          );
        }
        const given = request.headers["x-telegram-bot-api-secret-token"];
        if (!secretMatches(given, deps.config.TELEGRAM_WEBHOOK_SECRET)) {
          return sendProblem(
            request,
            reply,
            401,
            "invalid_webhook_secret",
            "Missing or wrong X-Telegram-Bot-Api-Secret-Token.",
          );
        }
      },
      schema: {
        tags: ["Telegram", "Webhook"],
        summary: "Receive a Telegram bot update (called by Telegram)",
        description:
          "Telegram posts each bot update here with the secret set by `bot set-webhook` in `X-Telegram-Bot-Api-Secret-Token`; a missing or wrong secret answers 401 (after the body's validation, 400), and 404 when no bot is configured (TELEGRAM_BOT_TOKEN empty, or TELEGRAM_MODE=polling). Each `update_id` is handled once: a retried update answers 200 without being handled again. A failure answers 500 so Telegram retries.",
        body: Type.Object(
          { update_id: Type.Integer({ minimum: 0, description: "Telegram's update id." }) },
          { additionalProperties: true, description: "A Telegram `Update` object." },
        ),
        response: {
          200: Ok,
          401: Type.Ref("Problem"),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => {
      // The preHandler has answered 404 already when no bot is configured; this keeps the handler honest alone.
      if (!deps.telegram) throw notFound("Telegram bot not found: it is not enabled here.");
      await deps.telegram.handleUpdate(request.body);
      return { ok: true };
    },
  );

  app.get(
    "/system/telegram/admins",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Telegram"],
        summary: "List the bot admins",
        description:
          "Telegram users allowed to run the bot's admin commands (/stats, /ban, /unban, /reindex).",
        response: { 200: Type.Object({ admins: Type.Array(Type.Ref("TelegramAdmin")) }) },
      },
    },
    async () => ({ admins: await need("telegramStore").listAdmins() }),
  );

  app.post(
    "/system/telegram/admins/add",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Telegram"],
        summary: "Add a bot admin (or rename one)",
        body: Type.Object(
          {
            telegram_user_id: TelegramUserId,
            username: Type.Optional(
              Type.String({
                pattern: "^@?[A-Za-z0-9_]{1,32}$",
                description: "Telegram username, with or without @.",
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ok: Type.Boolean(), admin: Type.Ref("TelegramAdmin") }) },
      },
    },
    async (request) => ({
      ok: true,
      admin: await need("telegramStore").addAdmin(
        request.body.telegram_user_id,
        request.body.username?.replace(/^@/, "") ?? null,
      ),
    }),
  );

  app.post(
    "/system/telegram/admins/remove",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Telegram"],
        summary: "Remove a bot admin",
        body: Type.Object({ telegram_user_id: TelegramUserId }, { additionalProperties: false }),
        response: { 200: Ok, 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const id = request.body.telegram_user_id;
      if (!(await need("telegramStore").removeAdmin(id))) {
        throw notFound(`Telegram user ${id} not found among the bot admins`, { telegram_user_id: id });
      }
      return { ok: true };
    },
  );
}
