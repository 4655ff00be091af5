// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * Payment routes on real stores: a user sees and creates only their own invoices and payments; an
 * admin sees everyone's with filters, records a manual payment and cancels an invoice; a chain
 * transfer waits for the events watermark before it is settled, and is settled once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ONE_ALPH } from "../../lib/payments/amount.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

const PAYMENT_ADDRESS = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH";

describe("payment routes", () => {
  let pg: TestPg;
  let ch: TestCh;
  let t: TestApp;
  let aliceKey = "";
  let aliceKeyId = "";
  let bobKey = "";

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    t = await createTestApp({ stores: { pg, ch }, env: { PAYMENT_ADDRESS, INVOICE_TTL_MS: "600000" } });
    const alice = await t.deps.keys!.createKey({ userId: "alice", planId: "free", level: "user" });
    aliceKey = alice.key;
    aliceKeyId = alice.keyId;
    bobKey = (await t.deps.keys!.createKey({ userId: "bob", planId: "free", level: "user" })).key;
  });
  afterAll(async () => {
    await t?.close();
    await pg?.close();
    await ch?.close();
  });

  const call = (method: "GET" | "POST", url: string, key: string | null, payload?: object) =>
    t.app.inject({ method, url, headers: key ? t.auth(key) : {}, ...(payload ? { payload } : {}) });

  it("creates invoices for your own key only, with distinct amounts", async () => {
    const first = await call("POST", "/payments/invoices", aliceKey, { plan_id: "pro" });
    expect(first.statusCode).toBe(200);
    const a = first.json().invoice;
    expect(a).toMatchObject({
      user_id: "alice",
      key_id: aliceKeyId,
      plan_id: "pro",
      address: PAYMENT_ADDRESS,
      status: "open",
    });
    expect(BigInt(a.amount_atto) / ONE_ALPH).toBe(150n);
    const ttl = Date.parse(a.expires_at) - Date.parse(a.created_at);
    expect(ttl).toBe(600_000);
    const second = (await call("POST", "/payments/invoices", aliceKey, { plan_id: "pro" })).json().invoice;
    expect(second.amount_atto).not.toBe(a.amount_atto);

    // Another user's key: 403; an unknown plan or a free one: 400; an unknown key: 404.
    expect(
      (await call("POST", "/payments/invoices", bobKey, { plan_id: "pro", key_id: aliceKeyId })).statusCode,
    ).toBe(403);
    expect((await call("POST", "/payments/invoices", aliceKey, { plan_id: "gold" })).statusCode).toBe(400);
    expect((await call("POST", "/payments/invoices", aliceKey, { plan_id: "free" })).statusCode).toBe(400);
    expect(
      (
        await call("POST", "/payments/invoices", t.adminKey, {
          plan_id: "pro",
          key_id: "00000000-0000-4000-8000-000000000000",
        })
      ).statusCode,
    ).toBe(404);
    expect((await call("POST", "/payments/invoices", null, { plan_id: "pro" })).statusCode).toBe(401);
    expect(
      (await call("POST", "/payments/invoices", aliceKey, { plan_id: "pro", extra: 1 })).statusCode,
    ).toBe(400);
    // An admin may invoice any key.
    const forAlice = await call("POST", "/payments/invoices", t.adminKey, {
      plan_id: "enterprise",
      key_id: aliceKeyId,
    });
    expect(forAlice.json().invoice).toMatchObject({ user_id: "alice", plan_id: "enterprise" });
  });

  it("lists a user's own invoices; admins list and filter everyone's", async () => {
    await call("POST", "/payments/invoices", bobKey, { plan_id: "pro" });
    const alice = (await call("GET", "/payments/invoices", aliceKey)).json().invoices;
    expect(alice.length).toBe(3);
    expect(alice.every((i: { user_id: string }) => i.user_id === "alice")).toBe(true);
    expect((await call("GET", "/payments/invoices?user_id=bob", aliceKey)).statusCode).toBe(403);
    const all = (await call("GET", "/payments/invoices", t.adminKey)).json().invoices;
    expect(new Set(all.map((i: { user_id: string }) => i.user_id))).toEqual(new Set(["alice", "bob"]));
    const bob = (await call("GET", "/payments/invoices?user_id=bob", t.adminKey)).json().invoices;
    expect(bob).toHaveLength(1);
    const enterprise = (await call("GET", "/payments/invoices?status=open&limit=1", t.adminKey)).json()
      .invoices;
    expect(enterprise).toHaveLength(1);
    const future = (
      await call("GET", `/payments/invoices?from=${new Date(Date.now() + 60_000).toISOString()}`, t.adminKey)
    ).json();
    expect(future.invoices).toHaveLength(0);
    expect((await call("GET", "/payments/invoices?status=nope", t.adminKey)).statusCode).toBe(400);
    expect((await call("GET", "/payments/invoices?limit=0", t.adminKey)).statusCode).toBe(400);
    expect((await call("GET", "/payments/invoices?from=yesterday", t.adminKey)).statusCode).toBe(400);
  });

  it("records a manual payment (admin) that credits the key, and cancels invoices", async () => {
    const [open] = (await call("GET", "/payments/invoices?user_id=bob", t.adminKey)).json().invoices;
    expect((await call("POST", "/payments/manual", bobKey, { invoice_id: open.invoice_id })).statusCode).toBe(
      403,
    );
    const manual = await call("POST", "/payments/manual", t.adminKey, {
      invoice_id: open.invoice_id,
      amount_alph: "150",
      note: "paid by bank transfer",
    });
    expect(manual.statusCode).toBe(200);
    expect(manual.json().payment).toMatchObject({
      source: "manual",
      status: "credited",
      amount_alph: "150",
      user_id: "bob",
      note: "paid by bank transfer",
    });
    expect(manual.json().key.plan_id).toBe("pro");
    // Paid: neither paid again nor cancelled.
    expect(
      (await call("POST", "/payments/manual", t.adminKey, { invoice_id: open.invoice_id })).statusCode,
    ).toBe(409);
    expect(
      (await call("POST", `/payments/invoice/${open.invoice_id}/cancel`, t.adminKey, {})).statusCode,
    ).toBe(409);
    const bobPayments = (await call("GET", "/payments", bobKey)).json().payments;
    expect(bobPayments).toHaveLength(1);
    expect((await call("GET", "/payments", aliceKey)).json().payments).toHaveLength(0);

    const [aliceOpen] = (await call("GET", "/payments/invoices?user_id=alice&status=open", t.adminKey)).json()
      .invoices;
    expect(
      (await call("POST", `/payments/invoice/${aliceOpen.invoice_id}/cancel`, aliceKey, {})).statusCode,
    ).toBe(403);
    const cancelled = await call("POST", `/payments/invoice/${aliceOpen.invoice_id}/cancel`, t.adminKey, {});
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json().invoice.status).toBe("cancelled");
    expect(
      (await call("POST", "/payments/invoice/00000000-0000-4000-8000-000000000000/cancel", t.adminKey, {}))
        .statusCode,
    ).toBe(404);
    expect((await call("POST", "/payments/invoice/not-a-uuid/cancel", t.adminKey, {})).statusCode).toBe(400);
    expect((await call("POST", "/payments/manual", t.adminKey, { invoice_id: "x" })).statusCode).toBe(400);
  });

  it("keeps a chain transfer pending until the watermark passes its block, then settles it once", async () => {
    const repo = t.deps.payments!;
    const invoice = (await call("POST", "/payments/invoices", aliceKey, { plan_id: "pro" })).json().invoice;
    const blockTs = Date.parse("2026-01-01T00:00:00Z");
    const transfer = {
      event_id: `${blockTs}-03-0000000100-00000-0000`,
      amount_atto: invoice.amount_atto,
      to_address: PAYMENT_ADDRESS,
      from_address: "1sender",
      tx_id: "ab".repeat(32),
      block_hash: "cd".repeat(32),
      chain_index: 3,
      block_ts: blockTs,
      seq: 10,
    };
    await repo.recordTransfers([transfer]);
    expect(await repo.settlePending(blockTs - 1)).toHaveLength(0);
    expect((await repo.listPayments({ user_id: undefined, limit: 10, status: "pending" })).length).toBe(1);
    const settled = await repo.settlePending(blockTs);
    expect(settled).toHaveLength(1);
    expect(settled[0]!.payment.status).toBe("credited");
    expect(settled[0]!.key!.plan_id).toBe("pro");
    const until = settled[0]!.key!.valid_until;
    // The same transfer again, from an older or a newer message: nothing changes.
    await repo.recordTransfers([transfer, { ...transfer, seq: 11 }]);
    expect(await repo.settlePending(Number.MAX_SAFE_INTEGER)).toHaveLength(0);
    expect((await t.deps.keys!.getKey(aliceKeyId))!.valid_until).toBe(until);
    // A retraction older than the message the payment came from is ignored; a newer one reverses it.
    expect(await repo.retractBlock(transfer.block_hash, 11)).toHaveLength(0);
    const reversed = await repo.retractBlock(transfer.block_hash, 12);
    expect(reversed.map((r) => r.payment.status)).toEqual(["reversed"]);
    expect((await t.deps.keys!.getKey(aliceKeyId))!.plan_id).toBe("free");
    // The block back on the main chain (a newer message): pending again, then credited again.
    await repo.recordTransfers([{ ...transfer, seq: 13 }]);
    const again = await repo.settlePending(blockTs);
    expect(again.map((r) => r.payment.status)).toEqual(["credited"]);
    expect((await t.deps.keys!.getKey(aliceKeyId))!.valid_until).toBe(until);
  });

  it("answers 404 payments_disabled without PAYMENT_ADDRESS", async () => {
    const off = await createTestApp({ stores: { pg, ch } });
    try {
      const res = await off.app.inject({
        method: "POST",
        url: "/payments/invoices",
        headers: off.auth(off.userKey),
        payload: { plan_id: "pro" },
      });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("payments_disabled");
    } finally {
      await off.close();
    }
  });
});
