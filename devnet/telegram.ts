/**
 * HTTP test double of the Telegram Bot API (https://core.telegram.org/bots/api): `POST
 * /bot<token>/<method>` with a JSON body, answers `{ ok: true, result }` or `{ ok: false,
 * error_code, description }`. Methods: getMe, sendMessage, setWebhook, deleteWebhook,
 * getWebhookInfo, setMyCommands, getUpdates (long polling). It records what the bot sent, and plays
 * the users: `userSays` makes an update and delivers it like Telegram (to the webhook with its secret
 * header, or to the next getUpdates). The same over HTTP for a demo: `POST /double/say`
 * `{user_id, text}` and `GET /double/messages?chat_id=`.
 */
import { addressFromPublicKey } from "@alephium/web3";
import Fastify from "fastify";

/** The demo's payment address (`start --devnet`): no simulated user holds it, so only payments reach it. */
export const DEVNET_PAYMENT_ADDRESS = addressFromPublicKey(`02${"5a".repeat(32)}`);

export interface SentMessage {
  chat_id: number;
  text: string;
  parse_mode?: string;
}

export interface TelegramUpdate {
  update_id: number;
  message: {
    message_id: number;
    date: number;
    chat: { id: number; type: "private" | "group"; first_name?: string; title?: string };
    from: { id: number; is_bot: false; first_name: string; username?: string };
    text: string;
    entities?: { type: "bot_command"; offset: number; length: number }[];
  };
}

export interface TelegramDouble {
  /** Bot API root to configure (TELEGRAM_API_ROOT). */
  url: string;
  token: string;
  /** Every call received, in order. */
  calls(): { method: string; body: Record<string, unknown> }[];
  /** sendMessage calls, optionally of one chat. */
  messages(chatId?: number): SentMessage[];
  webhook(): { url: string; secret_token: string } | null;
  /** Makes a text message update (commands get their bot_command entity, as Telegram sends them). */
  update(
    userId: number,
    text: string,
    options?: { updateId?: number; chat?: "private" | "group" },
  ): TelegramUpdate;
  /**
   * A user sends `text`: delivered to the webhook (resolves with its HTTP status) or queued for
   * getUpdates (resolves with 0).
   */
  userSays(userId: number, text: string, options?: { chat?: "private" | "group" }): Promise<number>;
  /** The next `times` calls of `method` answer 500 `Internal Server Error` (failure injection). */
  failNext(method: string, times?: number): void;
  close(): Promise<void>;
}

const BOT_USER = {
  id: 7_000_000_001,
  is_bot: true,
  first_name: "Alephium Indexer",
  username: "alephium_indexer_test_bot",
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
};

export async function startTelegramDouble(
  options: { token?: string; host?: string; port?: number } = {},
): Promise<TelegramDouble> {
  const token = options.token ?? "123456:TEST-double-token";
  const calls: { method: string; body: Record<string, unknown> }[] = [];
  const sent: SentMessage[] = [];
  const queue: TelegramUpdate[] = [];
  const waiters = new Set<() => void>();
  let hook: { url: string; secret_token: string } | null = null;
  const failures = new Map<string, number>();
  let nextUpdateId = 100_000;
  let nextMessageId = 1;

  const app = Fastify({ logger: false });
  app.post<{ Params: { bot: string; method: string }; Body: Record<string, unknown> | undefined }>(
    "/:bot/:method",
    async (request, reply) => {
      const { bot, method } = request.params;
      if (bot !== `bot${token}`) {
        return reply.code(401).send({ ok: false, error_code: 401, description: "Unauthorized" });
      }
      const body = request.body ?? {};
      calls.push({ method, body });
      const failing = failures.get(method) ?? 0;
      if (failing > 0) {
        failures.set(method, failing - 1);
        return reply.code(500).send({ ok: false, error_code: 500, description: "Internal Server Error" });
      }
      const ok = (result: unknown) => ({ ok: true, result });
      switch (method) {
        case "getMe":
          return ok(BOT_USER);
        case "sendMessage": {
          if (body.chat_id === undefined || typeof body.text !== "string" || body.text === "") {
            return reply
              .code(400)
              .send({ ok: false, error_code: 400, description: "Bad Request: message text is empty" });
          }
          const message: SentMessage = { chat_id: Number(body.chat_id), text: body.text };
          if (typeof body.parse_mode === "string") message.parse_mode = body.parse_mode;
          sent.push(message);
          return ok({
            message_id: nextMessageId++,
            date: Math.floor(Date.now() / 1000),
            chat: { id: message.chat_id, type: "private" },
            from: BOT_USER,
            text: message.text,
          });
        }
        case "setWebhook":
          if (typeof body.url !== "string") {
            return reply
              .code(400)
              .send({ ok: false, error_code: 400, description: "Bad Request: bad webhook" });
          }
          hook = body.url ? { url: body.url, secret_token: String(body.secret_token ?? "") } : null;
          return ok(true);
        case "deleteWebhook":
          hook = null;
          return ok(true);
        case "getWebhookInfo":
          return ok({
            url: hook?.url ?? "",
            has_custom_certificate: false,
            pending_update_count: queue.length,
          });
        case "setMyCommands":
          return ok(true);
        case "getUpdates": {
          if (hook) {
            return reply.code(409).send({
              ok: false,
              error_code: 409,
              description: "Conflict: can't use getUpdates method while webhook is active",
            });
          }
          const offset = Number(body.offset ?? 0);
          // An offset confirms every update below it (the Bot API forgets them).
          while (queue.length > 0 && queue[0]!.update_id < offset) queue.shift();
          if (queue.length === 0 && Number(body.timeout ?? 0) > 0) {
            const waitMs = Math.min(Number(body.timeout) * 1000, 30_000);
            // Held until an update comes, the timeout passes or the client goes away. The response's "close"
            // (not the request's, which Node emits once the body is read) says the client went away.
            await new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer);
                waiters.delete(done);
                reply.raw.off("close", done);
                resolve();
              };
              const timer = setTimeout(done, waitMs);
              waiters.add(done);
              reply.raw.once("close", done);
            });
          }
          return ok(queue.slice(0, Number(body.limit ?? 100)));
        }
        default:
          return reply
            .code(404)
            .send({ ok: false, error_code: 404, description: "Not Found: method not found" });
      }
    },
  );

  const update: TelegramDouble["update"] = (userId, text, opts = {}) => {
    const command = /^\/\w+(@\w+)?/.exec(text);
    const chat = opts.chat ?? "private";
    return {
      update_id: opts.updateId ?? nextUpdateId++,
      message: {
        message_id: nextMessageId++,
        date: Math.floor(Date.now() / 1000),
        chat:
          chat === "private"
            ? { id: userId, type: "private", first_name: `User ${userId}` }
            : { id: -1_000_000_000_001, type: "group", title: "Group" },
        from: { id: userId, is_bot: false, first_name: `User ${userId}`, username: `user${userId}` },
        text,
        ...(command
          ? { entities: [{ type: "bot_command" as const, offset: 0, length: command[0].length }] }
          : {}),
      },
    };
  };

  const userSays: TelegramDouble["userSays"] = async (userId, text, opts = {}) => {
    const u = update(userId, text, opts);
    if (!hook) {
      queue.push(u);
      for (const w of [...waiters]) w();
      return 0;
    }
    const res = await fetch(hook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(hook.secret_token ? { "x-telegram-bot-api-secret-token": hook.secret_token } : {}),
      },
      body: JSON.stringify(u),
    });
    await res.arrayBuffer();
    return res.status;
  };

  app.post<{ Body: { user_id: number; text: string } }>("/double/say", async (request) => ({
    status: await userSays(Number(request.body.user_id), String(request.body.text)),
  }));
  app.get<{ Querystring: { chat_id?: string } }>("/double/messages", async (request) => ({
    messages: request.query.chat_id ? sent.filter((m) => m.chat_id === Number(request.query.chat_id)) : sent,
  }));

  await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    token,
    calls: () => [...calls],
    messages: (chatId) => (chatId === undefined ? [...sent] : sent.filter((m) => m.chat_id === chatId)),
    webhook: () => hook,
    update,
    userSays,
    failNext: (method, times = 1) => failures.set(method, times),
    async close() {
      for (const w of [...waiters]) w();
      await app.close();
    },
  };
}
