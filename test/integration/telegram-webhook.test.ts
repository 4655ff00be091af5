// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * The Telegram bot through its webhook, on real stores, talking to the Bot API double
 * (devnet/telegram.ts): the secret header, each update once, user and admin commands, bans, and the
 * bot-admin routes.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelegramDouble, type TelegramDouble } from "../../devnet/telegram.ts";
import { createTelegramBot } from "../../lib/telegram/bot.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { waitFor } from "../helpers/pipeline.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const SECRET = "s3cret_webhook-token";
const PAYMENT_ADDRESS = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH";

describe("telegram webhook", () => {
  let pg: TestPg;
  let ch: TestCh;
  let tg: TelegramDouble;
  let t: TestApp;

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    tg = await startTelegramDouble();
    t = await createTestApp({
      stores: { pg, ch },
      env: {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.url,
        TELEGRAM_WEBHOOK_SECRET: SECRET,
        PAYMENT_ADDRESS,
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await tg?.close();
    await pg?.close();
    await ch?.close();
  });

  const post = (payload: unknown, secret: string | null = SECRET) =>
    t.app.inject({
      method: "POST",
      url: "/telegram/webhook",
      headers: secret === null ? {} : { "x-telegram-bot-api-secret-token": secret },
      payload: payload as object,
    });

  /** Sends `text` as user `uid` and returns the bot's new messages to that chat. */
  const say = async (uid: number, text: string, chat: "private" | "group" = "private") => {
    const update = tg.update(uid, text, { chat });
    const chatId = update.message.chat.id;
    const before = tg.messages(chatId).length;
    const res = await post(update);
    expect(res.statusCode).toBe(200);
    return tg.messages(chatId).slice(before);
  };

  it("refuses an update without the secret or with a wrong one (401, the one error body)", async () => {
    const update = tg.update(501, "/start");
    const missing = await post(update, null);
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toMatchObject({ status: 401, code: "invalid_webhook_secret" });
    expect(missing.headers["content-type"]).toContain("application/problem+json");
    const wrong = await post(update, `${SECRET}x`);
    expect(wrong.statusCode).toBe(401);
    // The body is validated first, like on every route (its shape is in the OpenAPI document).
    const malformed = await post({ nonsense: true }, "nope");
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().code).not.toBe("invalid_webhook_secret");
    expect(tg.messages(501)).toHaveLength(0);
  });

  it("handles each update id once", async () => {
    const update = tg.update(502, "/start");
    expect((await post(update)).statusCode).toBe(200);
    expect((await post(update)).statusCode).toBe(200);
    const sent = tg.messages(502);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ parse_mode: "HTML" });
    expect(sent[0]!.text).toContain("/key");
  });

  it("answers 500 when an update fails, so Telegram's retry of it is handled", async () => {
    const update = tg.update(512, "/plans");
    tg.failNext("sendMessage");
    const failed = await post(update);
    expect(failed.statusCode).toBe(500);
    expect(failed.json()).toMatchObject({ status: 500, code: "internal_error" });
    expect(tg.messages(512)).toHaveLength(0);
    expect((await post(update)).statusCode).toBe(200);
    expect(tg.messages(512)).toHaveLength(1);
    expect((await post(update)).statusCode).toBe(200);
    expect(tg.messages(512)).toHaveLength(1);

    // A /key whose message fails: that key is revoked, and the retry shows a new one.
    const key = tg.update(512, "/key");
    tg.failNext("sendMessage");
    expect((await post(key)).statusCode).toBe(500);
    expect((await post(key)).statusCode).toBe(200);
    const shown = /<code>(alk_[\w-]+)<\/code>/.exec(tg.messages(512)[1]!.text)?.[1];
    expect(shown).toBeDefined();
    const keys = await t.deps.keys!.listKeys("tg:512");
    expect(keys).toHaveLength(2);
    expect(keys.filter((k) => k.revoked_at === null)).toHaveLength(1);
    expect(shown!.startsWith(keys.find((k) => k.revoked_at === null)!.key_prefix)).toBe(true);
  });

  it("issues one free key per user, shown once, that works on the API", async () => {
    const [first] = await say(503, "/key");
    const raw = /<code>(alk_[\w-]+)<\/code>/.exec(first!.text)?.[1];
    expect(raw).toBeDefined();
    expect(first!.text).toContain("60/min");
    const mine = await t.app.inject({ method: "GET", url: "/system/keys", headers: t.auth(raw!) });
    expect(mine.statusCode).toBe(200);
    const [key] = mine.json().keys;
    expect(key).toMatchObject({ user_id: "tg:503", plan_id: "free", level: "user", active: true });
    // New keys are valid for the plan's validity_days (free: 30).
    const days = (Date.parse(key.valid_until) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);

    const [again] = await say(503, "/key");
    expect(again!.text).toContain("already have");
    expect(again!.text).not.toContain("alk_");
    const [list] = await say(503, "/keys");
    expect(list!.text).toContain(key.key_prefix);
    expect(list!.text).toContain("valid until");
    // The key's use over the last 24 hours, from the usage table (the same on PGlite and PostgreSQL):
    // the one GET /system/keys above, flushed by the read.
    expect(list!.text).toContain("used in the last 24 h 1/10000");
    for (let i = 0; i < 2; i++) {
      const again = await t.app.inject({ method: "GET", url: "/system/keys", headers: t.auth(raw!) });
      expect(again.statusCode).toBe(200);
    }
    const [list3] = await say(503, "/keys");
    expect(list3!.text).toContain("used in the last 24 h 3/10000");
    const usage = await t.app.inject({
      url: `/system/keys/${key.key_id}/usage?window=1h`,
      headers: t.auth(raw!),
    });
    expect(usage.statusCode).toBe(200);
    expect(usage.json().last_24h.requests).toBe(4); // the three above and this one

    // Expired: the API answers 403 key_expired and /keys offers the renewal.
    await t.deps.keys!.update(key.key_id, { valid_until: new Date(Date.now() - 60_000).toISOString() });
    const expired = await t.app.inject({ method: "GET", url: "/system/keys", headers: t.auth(raw!) });
    expect(expired.statusCode).toBe(403);
    expect(expired.json().code).toBe("key_expired");
    const [renew] = await say(503, "/keys");
    expect(renew!.text).toContain("<b>expired</b>");
    expect(renew!.text).toContain("/pay pro");
  });

  it("shows only the caller's own keys and never sends a key into a group", async () => {
    await say(504, "/key");
    const [list] = await say(505, "/keys");
    expect(list!.text).toContain("no key yet");
    const [group] = await say(506, "/key", "group");
    expect(group!.text).toContain("private chat");
    expect(group!.text).not.toContain("alk_");
  });

  it("gives an invoice with a unique amount for /pay, after /key", async () => {
    const [noKey] = await say(507, "/pay pro");
    expect(noKey!.text).toContain("/key");
    await say(507, "/key");
    const [usage] = await say(507, "/pay gold");
    expect(usage!.text).toContain("Usage");
    const [invoice] = await say(507, "/pay pro");
    expect(invoice!.text).toContain(PAYMENT_ADDRESS);
    expect(invoice!.text).toMatch(/<b>150\.\d{4} ALPH<\/b>/);
    const [plans] = await say(507, "/plans");
    expect(plans!.text).toContain("<b>Pro</b>");
    const [status] = await say(507, "/status");
    expect(status!.text).toContain("Indexer status");
  });

  it("keeps admin commands to bot admins, managed through the admin routes", async () => {
    for (const cmd of ["/stats", "/ban 600", "/unban 600", "/reindex"]) {
      const [refused] = await say(508, cmd);
      expect(refused!.text).toBe("This command is for bot admins.");
    }
    const admin = t.auth(t.adminKey);
    const add = await t.app.inject({
      method: "POST",
      url: "/system/telegram/admins/add",
      headers: admin,
      payload: { telegram_user_id: 508, username: "@boss" },
    });
    expect(add.statusCode).toBe(200);
    expect(add.json().admin).toMatchObject({ telegram_user_id: 508, username: "boss" });
    const list = await t.app.inject({ method: "GET", url: "/system/telegram/admins", headers: admin });
    expect(list.json().admins.map((a: { telegram_user_id: number }) => a.telegram_user_id)).toEqual([508]);

    const [stats] = await say(508, "/stats");
    expect(stats!.text).toContain("<b>Users</b>");
    const [reindex] = await say(508, "/reindex");
    expect(reindex!.text).toBe("No reindex jobs yet.");
    const [help] = await say(508, "/help");
    expect(help!.text).toContain("/ban");
    const [userHelp] = await say(509, "/help");
    expect(userHelp!.text).not.toContain("/ban");

    // A ban refuses the user until an unban.
    const [banned] = await say(508, "/ban 509");
    expect(banned!.text).toContain("banned");
    const [refused] = await say(509, "/start");
    expect(refused!.text).toBe("You are banned from this bot.");
    await say(508, "/unban 509");
    const [back] = await say(509, "/start");
    expect(back!.text).toContain("/key");

    const remove = await t.app.inject({
      method: "POST",
      url: "/system/telegram/admins/remove",
      headers: admin,
      payload: { telegram_user_id: 508 },
    });
    expect(remove.statusCode).toBe(200);
    const [after] = await say(508, "/stats");
    expect(after!.text).toBe("This command is for bot admins.");
    const again = await t.app.inject({
      method: "POST",
      url: "/system/telegram/admins/remove",
      headers: admin,
      payload: { telegram_user_id: 508 },
    });
    expect(again.statusCode).toBe(404);
  });

  it("answers 400, 401 and 403 on the admin routes", async () => {
    const admin = t.auth(t.adminKey);
    for (const payload of [
      { telegram_user_id: 0 },
      { telegram_user_id: -5 },
      { telegram_user_id: "abc" },
      { telegram_user_id: 2 ** 53 },
      { telegram_user_id: 1.5 },
      {},
      { telegram_user_id: 5, username: "bad name!" },
      { telegram_user_id: 5, extra: 1 },
    ]) {
      const res = await t.app.inject({
        method: "POST",
        url: "/system/telegram/admins/add",
        headers: admin,
        payload,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const ok = await t.app.inject({
      method: "POST",
      url: "/system/telegram/admins/add",
      headers: admin,
      payload: { telegram_user_id: 2 ** 53 - 1 },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().admin.telegram_user_id).toBe(2 ** 53 - 1);
    const noKey = await t.app.inject({ method: "GET", url: "/system/telegram/admins" });
    expect(noKey.statusCode).toBe(401);
    const user = await t.app.inject({
      method: "GET",
      url: "/system/telegram/admins",
      headers: t.auth(t.userKey),
    });
    expect(user.statusCode).toBe(403);
  });

  it("registers its webhook with the secret, and runs by long polling too", async () => {
    const bot = createTelegramBot({
      config: t.deps.config,
      log: quietLog,
      keys: t.deps.keys!,
      payments: t.deps.payments!,
      store: t.deps.telegramStore!,
      usage: null,
      progress: null,
    });
    await bot.setWebhook("https://bot.example/telegram/webhook");
    expect(tg.webhook()).toEqual({ url: "https://bot.example/telegram/webhook", secret_token: SECRET });
    await bot.startPolling();
    try {
      expect(tg.webhook()).toBeNull(); // polling removes the webhook first
      expect(await tg.userSays(511, "/start")).toBe(0);
      await waitFor("the polled /start answered", async () => tg.messages(511).length === 1);
      await tg.userSays(511, "/reindex");
      await waitFor("the polled /reindex answered", async () => tg.messages(511).length === 2);
      expect(tg.messages(511)[1]!.text).toBe("This command is for bot admins.");
    } finally {
      await bot.stop();
    }
  });

  it("answers 404 when no bot is configured", async () => {
    const off = await createTestApp({ stores: { pg, ch } });
    try {
      const res = await off.app.inject({
        method: "POST",
        url: "/telegram/webhook",
        headers: { "x-telegram-bot-api-secret-token": SECRET },
        payload: tg.update(510, "/start"),
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("bot_disabled");
    } finally {
      await off.close();
    }
  });
});
