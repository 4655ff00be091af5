// Test passes: embedded and server (a payment credited once through processor restarts and a reprocess over Kafka).
/**
 * The whole loop on the simulated network: a Telegram user gets a key and an invoice through the bot,
 * pays it on the devnet, and the payments processor (real stores, the bus, every processor) moves
 * the key to the plan once, through processor restarts and a reprocess of the block; a retracted
 * payment block reverses its credit and tells the admins; odd transfers are recorded, never lost.
 */
import { addressFromPublicKey } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTelegramDouble, type TelegramDouble } from "../../devnet/telegram.ts";
import { ONE_ALPH } from "../../lib/payments/amount.ts";
import { reprocessRange } from "../../pipeline/reprocess.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";

const SECRET = "loop-secret";
/** An address no devnet user holds: only the test pays it. */
const PAYMENT_ADDRESS = addressFromPublicKey(`02${"5a".repeat(32)}`);
const ADMIN_TG = 9001;

interface PaymentRow {
  payment_id: string;
  status: string;
  amount_atto: string;
  invoice_id: string | null;
  block_hash: string;
  block_ts_ms: string;
}

describe("bot payments on the simulated network", () => {
  let tg: TelegramDouble;
  let p: TestPipeline;

  beforeAll(async () => {
    tg = await startTelegramDouble();
    p = await startTestPipeline({
      blocks: 200,
      confirmations: 0,
      env: {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.url,
        TELEGRAM_WEBHOOK_SECRET: SECRET,
        PAYMENT_ADDRESS,
      },
    });
    await p.catchUp();
    await p.api.deps.telegramStore!.addAdmin(ADMIN_TG, "admin");
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    await tg?.close();
  });

  const say = async (uid: number, text: string) => {
    const before = tg.messages(uid).length;
    const res = await p.api.app.inject({
      method: "POST",
      url: "/telegram/webhook",
      headers: { "x-telegram-bot-api-secret-token": SECRET },
      payload: tg.update(uid, text),
    });
    expect(res.statusCode).toBe(200);
    return tg.messages(uid).slice(before);
  };
  const payments = () =>
    p.pg.pg.query<PaymentRow>(
      "t",
      `SELECT payment_id, status, amount_atto::text AS amount_atto, invoice_id, block_hash,
              (extract(epoch FROM block_ts) * 1000)::bigint::text AS block_ts_ms
       FROM payments ORDER BY created_at, payment_id`,
    );
  const keyRow = async (keyId: string) =>
    (
      await p.pg.pg.query<{ plan_id: string; valid_until: string; last_payment_at: string | null }>(
        "t",
        `SELECT plan_id, to_char(valid_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS valid_until,
                last_payment_at::text AS last_payment_at FROM api_keys WHERE key_id = $1`,
        [keyId],
      )
    )[0]!;
  /** Pays on the devnet, then makes blocks until every transfer to the address is settled. */
  const payAndSettle = async (amounts: bigint[], between?: () => Promise<void>) => {
    for (const a of amounts) p.chain.sendAlph(PAYMENT_ADDRESS, a);
    while (p.chain.pendingSends() > 0) p.chain.advance(16);
    await between?.();
    await waitFor(
      "payments settled",
      async () => {
        p.chain.advance(16);
        await p.catchUp();
        const rows = await payments();
        return rows.every((r) => r.status !== "pending");
      },
      120_000,
    );
  };
  const invoicesOf = async (key: string) => {
    const res = await p.api.app.inject({
      method: "GET",
      url: "/payments/invoices",
      headers: p.api.auth(key),
    });
    expect(res.statusCode).toBe(200);
    return res.json().invoices as {
      invoice_id: string;
      amount_atto: string;
      status: string;
      key_id: string;
    }[];
  };

  let rawKey = "";
  let keyId = "";

  it("credits a paid invoice once: /start, /key, /pay pro, a transfer, restarts and a replay", async () => {
    const uid = 4242;
    await say(uid, "/start");
    const [keyMsg] = await say(uid, "/key");
    rawKey = /<code>(alk_[\w-]+)<\/code>/.exec(keyMsg!.text)![1]!;
    const [payMsg] = await say(uid, "/pay pro");
    expect(payMsg!.text).toContain(PAYMENT_ADDRESS);
    const [invoice] = await invoicesOf(rawKey);
    expect(invoice).toMatchObject({ status: "open" });
    keyId = invoice!.key_id;
    expect(payMsg!.text).toContain(
      `${(BigInt(invoice!.amount_atto) / 10n ** 14n).toString().replace(/(\d{4})$/, ".$1")} ALPH`,
    );
    const before = await keyRow(keyId);
    expect(before.plan_id).toBe("free");
    expect(before.last_payment_at).toBeNull();

    // Paid through the devnet's HTTP endpoint (as a demo user would); the payments processor restarts
    // while the transfer's block is on its way.
    const send = (body: object) =>
      fetch(`${p.server.url}/devnet/send`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await send({ to: PAYMENT_ADDRESS, amount: "-5" })).status).toBe(400);
    expect((await send({ to: "not-an-address", amount: "5" })).status).toBe(400);
    const sent = await send({ to: PAYMENT_ADDRESS, amount: invoice!.amount_atto });
    expect(await sent.json()).toEqual({ queued: 1 });
    await payAndSettle([], () => p.restartProcessor("payments"));
    const [payment] = await payments();
    expect(payment).toMatchObject({ status: "credited", invoice_id: invoice!.invoice_id });
    const after = await keyRow(keyId);
    expect(after.plan_id).toBe("pro");
    expect(after.last_payment_at).not.toBeNull();
    // Extended by pro's 30 days from the later of now and the free key's end (30 days from its creation).
    const extended =
      (Date.parse(`${after.valid_until}Z`) - Date.parse(`${before.valid_until}Z`)) / 86_400_000;
    expect(extended).toBeGreaterThan(29.99);
    expect(extended).toBeLessThan(30.01);
    const told = tg.messages(uid).filter((m) => m.text.startsWith("Payment of"));
    expect(told).toHaveLength(1);
    expect(told[0]!.text).toContain("<b>pro</b>");
    expect((await invoicesOf(rawKey))[0]!.status).toBe("paid");

    // The same block again (restart, then a reprocess of its time range): credited once.
    await p.restartProcessor("payments");
    const ts = Number(payment!.block_ts_ms);
    expect(await reprocessRange(p.deps, ts, ts)).toBeGreaterThan(0);
    p.chain.advance(16);
    await p.catchUp();
    expect(await payments()).toHaveLength(1);
    expect((await payments())[0]!.status).toBe("credited");
    expect(await keyRow(keyId)).toEqual(after);
    expect(tg.messages(uid).filter((m) => m.text.startsWith("Payment of"))).toHaveLength(1);

    // The key serves the API on its new plan; /keys shows it.
    const keys = await p.api.app.inject({ method: "GET", url: "/system/keys", headers: p.api.auth(rawKey) });
    expect(keys.json().keys[0]).toMatchObject({ plan_id: "pro", active: true });
    const [list] = await say(uid, "/keys");
    expect(list!.text).toContain("pro (600/min");
  }, 240_000);

  it("records unmatched, late, under- and overpaid transfers; open invoices get distinct amounts", async () => {
    const a = await p.api.deps.payments!.createInvoice({
      userId: "tg:4242",
      keyId,
      planId: "pro",
      address: PAYMENT_ADDRESS,
      ttlMs: 3_600_000,
    });
    const b = await p.api.deps.payments!.createInvoice({
      userId: "tg:4242",
      keyId,
      planId: "pro",
      address: PAYMENT_ADDRESS,
      ttlMs: 3_600_000,
    });
    const c = await p.api.deps.payments!.createInvoice({
      userId: "tg:4242",
      keyId,
      planId: "pro",
      address: PAYMENT_ADDRESS,
      ttlMs: 3_600_000,
    });
    const amounts = new Set([a.amount_atto, b.amount_atto, c.amount_atto]);
    expect(amounts.size).toBe(3);
    for (const i of [a, b, c]) expect(BigInt(i.amount_atto) / ONE_ALPH).toBe(150n);
    // Invoice c expired before any block the devnet makes now.
    await p.pg.pg.query(
      "t",
      "UPDATE payment_invoices SET expires_at = '2001-01-01T00:00:00Z' WHERE invoice_id = $1",
      [c.invoice_id],
    );
    const validBefore = (await keyRow(keyId)).valid_until;
    const adminBefore = tg.messages(ADMIN_TG).length;
    const unmatched = 7n * ONE_ALPH + 123n;
    await payAndSettle([
      BigInt(a.amount_atto) - 100n * ONE_ALPH, // a's tag, 100 ALPH short
      BigInt(b.amount_atto) + 5n * ONE_ALPH, // b's tag, 5 ALPH more
      BigInt(c.amount_atto), // c's exact amount, after its expiry
      unmatched,
    ]);
    const rows = (await payments()).slice(1);
    const byAmount = new Map(rows.map((r) => [r.amount_atto, r]));
    expect(byAmount.get((BigInt(a.amount_atto) - 100n * ONE_ALPH).toString())).toMatchObject({
      status: "underpaid",
      invoice_id: a.invoice_id,
    });
    expect(byAmount.get((BigInt(b.amount_atto) + 5n * ONE_ALPH).toString())).toMatchObject({
      status: "overpaid",
      invoice_id: b.invoice_id,
    });
    expect(byAmount.get(c.amount_atto)).toMatchObject({ status: "late", invoice_id: c.invoice_id });
    expect(byAmount.get(unmatched.toString())).toMatchObject({ status: "unmatched", invoice_id: null });
    // Only the overpayment credits: one more period.
    const extended =
      (Date.parse(`${(await keyRow(keyId)).valid_until}Z`) - Date.parse(`${validBefore}Z`)) / 86_400_000;
    expect(extended).toBeGreaterThan(29.99);
    expect(extended).toBeLessThan(30.01);
    // Each odd transfer is flagged to the bot admins once.
    const flags = tg.messages(ADMIN_TG).slice(adminBefore);
    expect(flags.map((m) => /Payment <b>(\w+)<\/b>/.exec(m.text)?.[1]).sort()).toEqual([
      "late",
      "overpaid",
      "underpaid",
      "unmatched",
    ]);
    // Admins list them by status; the payer sees only their own.
    const flagged = await p.api.app.inject({
      method: "GET",
      url: "/payments?status=unmatched",
      headers: p.api.auth(p.api.adminKey),
    });
    expect(flagged.json().payments).toHaveLength(1);
    const own = await p.api.app.inject({ method: "GET", url: "/payments", headers: p.api.auth(rawKey) });
    expect(
      own
        .json()
        .payments.map((x: PaymentRow) => x.status)
        .sort(),
    ).toEqual(["credited", "late", "overpaid", "underpaid"]);
  }, 240_000);

  it("reverses the credit of a payment whose block is retracted, and tells the admins", async () => {
    const invoice = await p.api.deps.payments!.createInvoice({
      userId: "tg:4242",
      keyId,
      planId: "enterprise",
      address: PAYMENT_ADDRESS,
      ttlMs: 3_600_000,
      chatId: 4242,
    });
    const before = await keyRow(keyId);
    const adminBefore = tg.messages(ADMIN_TG).length;
    p.chain.sendAlph(PAYMENT_ADDRESS, BigInt(invoice.amount_atto));
    // Make blocks one by one until the payment is mined, then enough for every chain to pass it.
    while (p.chain.pendingSends() > 0) p.chain.advance(1);
    p.chain.advance(20);
    await waitFor(
      "the payment credited",
      async () => {
        await p.catchUp();
        // Pending until the watermark passes its block: settled by a later batch, so blocks keep coming.
        const row = (await payments()).find((r) => r.amount_atto === invoice.amount_atto);
        if (row?.status !== "credited") p.chain.advance(1);
        return row?.status === "credited";
      },
      120_000,
    );
    const credited = await keyRow(keyId);
    expect(credited.plan_id).toBe("enterprise");
    const row = (await payments()).find((r) => r.invoice_id === invoice.invoice_id)!;
    const block = p.chain.getBlock(row.block_hash)!;
    const depth = p.chain.height(block.chainIndex) - block.block.height + 1;
    expect(depth).toBeLessThanOrEqual(6);
    const reorg = p.chain.reorg(block.chainIndex, depth);
    expect(reorg.orphaned).toContain(row.block_hash);
    p.chain.advance(32);
    await waitFor(
      "the payment reversed",
      async () => {
        await p.catchUp();
        return (await payments()).find((r) => r.payment_id === row.payment_id)?.status === "reversed";
      },
      120_000,
    );
    const after = await keyRow(keyId);
    expect(after.plan_id).toBe(before.plan_id);
    expect(after.valid_until).toBe(before.valid_until);
    // The invoice is open again (the same transfer mined elsewhere would pay it).
    expect((await p.api.deps.payments!.getInvoice(invoice.invoice_id))!.status).toBe("open");
    const flags = tg.messages(ADMIN_TG).slice(adminBefore);
    expect(flags.some((m) => m.text.includes("Payment <b>reversed</b>"))).toBe(true);
    expect(tg.messages(4242).some((m) => m.text.includes("left the main chain"))).toBe(true);
  }, 240_000);
});
