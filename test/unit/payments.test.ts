import { describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import type { EventsMessage, WireEvent } from "../../lib/events/wire.ts";
import type { ApiKey, ApiPlan } from "../../lib/keys/repo.ts";
import {
  alphToAtto,
  amountTag,
  attoToAlph,
  judgeTransfer,
  MAX_TAGS,
  ONE_ALPH,
  TAG_STEP,
  uniqueAmount,
} from "../../lib/payments/amount.ts";
import type { PaymentOutcome } from "../../lib/payments/repo.ts";
import { adminFlagMessage, chatOfUser, esc, keysMessage, payerMessage } from "../../lib/telegram/messages.ts";
import { paymentTransfers } from "../../pipeline/processors/payments.ts";

describe("invoice amounts", () => {
  it("converts ALPH and attoALPH both ways", () => {
    expect(alphToAtto("150")).toBe(150n * ONE_ALPH);
    expect(alphToAtto("0.5")).toBe(ONE_ALPH / 2n);
    expect(alphToAtto("1.000000000000000001")).toBe(ONE_ALPH + 1n);
    expect(() => alphToAtto("1.0000000000000000001")).toThrow(RangeError);
    expect(() => alphToAtto("-1")).toThrow(RangeError);
    expect(attoToAlph(150n * ONE_ALPH + 3n * TAG_STEP)).toBe("150.0003");
    expect(attoToAlph("1")).toBe("0.000000000000000001");
    expect(attoToAlph(7n * ONE_ALPH)).toBe("7");
  });

  it("gives each open invoice a tag no other holds, and none when all are taken", () => {
    const price = 150n * ONE_ALPH;
    const taken = new Set<bigint>();
    const seen = new Set<bigint>();
    for (let i = 0; i < 50; i++) {
      const a = uniqueAmount(price, taken)!;
      expect(a > price).toBe(true);
      expect(a - price < ONE_ALPH).toBe(true);
      expect(seen.has(a)).toBe(false);
      seen.add(a);
      taken.add(amountTag(a));
    }
    // A freed tag is reused first.
    const freed = price + 7n * TAG_STEP;
    taken.delete(amountTag(freed));
    expect(uniqueAmount(price, taken)).toBe(freed);
    // A fractional price keeps the tags distinct modulo one ALPH.
    const half = uniqueAmount(ONE_ALPH / 2n, new Set([amountTag(ONE_ALPH / 2n + TAG_STEP)]));
    expect(half).toBe(ONE_ALPH / 2n + 2n * TAG_STEP);
    const all = new Set(Array.from({ length: MAX_TAGS }, (_, i) => BigInt(i + 1) * TAG_STEP));
    expect(uniqueAmount(price, all)).toBeNull();
  });

  it("judges a transfer with the invoice's tag by its amount", () => {
    const invoice = 150n * ONE_ALPH + TAG_STEP;
    expect(judgeTransfer(invoice, invoice)).toBe("credited");
    expect(judgeTransfer(invoice, invoice + ONE_ALPH)).toBe("overpaid");
    expect(judgeTransfer(invoice, invoice - 1n)).toBe("underpaid");
  });
});

const event = (over: Partial<WireEvent>): WireEvent =>
  ({
    id: "1-00-1-0-0",
    tx_id: "t".repeat(64),
    tx_index: 0,
    event_index: 0,
    dapp_id: "alephium",
    category: "transfer",
    sub_kind: "send",
    type: "alph",
    is_main: true,
    from: "1from",
    to: "1pay",
    with: "",
    token_address: "",
    token_id: ALPH_TOKEN_ID,
    amount: "5",
    contract_address: "",
    contract_event_index: null,
    payload_ref: null,
    payload_json: "{}",
    ...over,
  }) as WireEvent;

describe("paymentTransfers", () => {
  it("keeps ALPH sends and payouts to the payment address only", () => {
    const messages: EventsMessage[] = [
      {
        kind: "block",
        chain_index: 3,
        block_hash: "h1",
        block_height: 9,
        block_timestamp: 1000,
        seq: 4,
        offloaded: [],
        events: [
          event({ id: "a" }),
          event({ id: "b", sub_kind: "payout" }),
          event({ id: "c", to: "1other" }),
          event({ id: "d", type: "token", token_id: "ab".repeat(32) }),
          event({ id: "e", sub_kind: "self" as WireEvent["sub_kind"] }),
          event({
            id: "f",
            category: "cex" as WireEvent["category"],
            sub_kind: "deposit" as WireEvent["sub_kind"],
          }),
        ],
      },
      { kind: "retraction", chain_index: 3, block_hash: "h0", block_height: 8, block_timestamp: 900, seq: 5 },
    ];
    const out = paymentTransfers(messages, "1pay");
    expect(out.map((t) => t.event_id)).toEqual(["a", "b"]);
    expect(out[0]).toMatchObject({
      block_hash: "h1",
      chain_index: 3,
      block_ts: 1000,
      seq: 4,
      amount_atto: "5",
    });
  });
});

describe("bot messages", () => {
  const plan: ApiPlan = {
    plan_id: "pro",
    name: "Pro",
    rpm: 600,
    rpd: 250000,
    price: "49",
    price_alph: "150",
    validity_days: 30,
    created_at: "",
    updated_at: "",
  };
  const key = (over: Partial<ApiKey>): ApiKey => ({
    key_id: "k",
    key_prefix: "alk_abcdefgh",
    user_id: "tg:1",
    plan_id: "pro",
    level: "user",
    allowed_origins: [],
    valid_until: "2030-01-01T00:00:00.000Z",
    last_payment_at: null,
    revoked_at: null,
    created_at: "",
    updated_at: "",
    ...over,
  });

  it("escapes HTML and reads Telegram owners", () => {
    expect(esc("<b>&")).toBe("&lt;b&gt;&amp;");
    expect(chatOfUser("tg:12345")).toBe(12345);
    expect(chatOfUser("alice")).toBeNull();
    expect(chatOfUser(null)).toBeNull();
  });

  it("lists keys masked, with validity and a renewal hint when expired", () => {
    const now = Date.parse("2029-06-01T00:00:00Z");
    const text = keysMessage(
      [
        key({}),
        key({ key_prefix: "alk_old", valid_until: "2029-01-01T00:00:00.000Z" }),
        key({ revoked_at: "x" }),
      ],
      [plan],
      now,
    );
    const [valid, expired, revoked] = text.split("\n");
    expect(valid).toContain("<code>alk_abcdefgh…</code> pro (600/min, 250000/day): valid until 2030-01-01");
    expect(expired).toContain("<b>expired</b>");
    expect(expired).toContain("/pay pro");
    expect(revoked).toContain("revoked");
    expect(valid).not.toContain("used in");
    const withUse = keysMessage([key({})], [plan], now, new Map([["k", 42]]));
    expect(withUse).toContain("used in the last 24 h 42/250000");
    expect(keysMessage([key({})], [plan], now, new Map())).toContain("used in the last 24 h 0/250000");
  });

  it("tells the payer and flags odd payments to admins", () => {
    const outcome = (status: PaymentOutcome["payment"]["status"]): PaymentOutcome =>
      ({
        payment: { status, amount_alph: "150.0001", tx_id: "tx", user_id: "tg:1", plan_id: "pro" },
        invoice: { invoice_id: "i", amount_alph: "150.0001", chat_id: 1 },
        key: { key_id: "k", plan_id: "pro", valid_until: "2030-01-01T00:00:00.000Z" },
      }) as PaymentOutcome;
    expect(payerMessage(outcome("credited"))).toContain("plan <b>pro</b>");
    expect(adminFlagMessage(outcome("credited"))).toBeNull();
    for (const s of ["overpaid", "underpaid", "late", "reversed"] as const) {
      expect(payerMessage(outcome(s))).toContain("admin");
      expect(adminFlagMessage(outcome(s))).toContain(`<b>${s}</b>`);
    }
    expect(payerMessage(outcome("unmatched"))).toBeNull();
    expect(adminFlagMessage(outcome("unmatched"))).toContain("unmatched");
  });
});
