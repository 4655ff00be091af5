/** The portal's pure parts: the allow-list rule and the sealing of a session's admin key. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/config.ts";
import { actorOf, isAllowed } from "../../lib/portal/service.ts";
import { hashToken, seal, unseal } from "../../lib/portal/sessions.ts";
import { ago, cellText, dateText, decodeErrorsOf, heading } from "../../portal/src/ui.ts";

const config = loadConfig({
  PORTAL_ADMIN_EMAILS: " Admin@Example.com , ops@example.com",
  PORTAL_ADMIN_SUBJECTS: "sub-42",
});

describe("portal allow-list", () => {
  it("allows a listed verified e-mail (any case) or a listed subject, and nothing else", () => {
    expect(isAllowed(config, { subject: "x", email: "admin@example.COM", emailVerified: true })).toBe(true);
    expect(isAllowed(config, { subject: "x", email: "ops@example.com", emailVerified: true })).toBe(true);
    expect(isAllowed(config, { subject: "sub-42", email: null, emailVerified: false })).toBe(true);
    // A listed address the provider has not verified is not enough.
    expect(isAllowed(config, { subject: "x", email: "admin@example.com", emailVerified: false })).toBe(false);
    expect(isAllowed(config, { subject: "x", email: "else@example.com", emailVerified: true })).toBe(false);
    expect(
      isAllowed(
        { PORTAL_ADMIN_EMAILS: [], PORTAL_ADMIN_SUBJECTS: [] },
        { subject: "", email: "", emailVerified: true },
      ),
    ).toBe(false);
  });

  it("names the actor by verified e-mail, else by subject", () => {
    expect(actorOf({ subject: "s", email: "a@b.c", emailVerified: true })).toBe("a@b.c");
    expect(actorOf({ subject: "s", email: "a@b.c", emailVerified: false })).toBe("s");
  });
});

describe("portal key sealing", () => {
  it("opens with the session token only, and detects tampering", () => {
    const sealed = seal("token-a", "alk_secret");
    expect(sealed).not.toContain("alk_secret");
    expect(unseal("token-a", sealed)).toBe("alk_secret");
    expect(unseal("token-b", sealed)).toBeNull();
    const [iv, tag, body] = sealed.split(".");
    const flipped = `${body!.slice(0, 2)}${body![2] === "A" ? "B" : "A"}${body!.slice(3)}`;
    expect(unseal("token-a", `${iv}.${tag}.${flipped}`)).toBeNull();
    expect(hashToken("token-a")).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("portal cells", () => {
  const now = Date.UTC(2026, 10, 28, 12, 0, 0);
  it("shows times as dates with how long ago, durations, numbers with separators, objects as pairs", () => {
    expect(dateText(now)).toBe("2026-11-28 12:00:00 UTC");
    expect(ago(now - 3_000, now)).toBe("3 s ago");
    expect(ago(now - 5 * 60_000, now)).toBe("5 min ago");
    expect(ago(now + 10 * 60_000, now)).toBe("in 10 min");
    expect(cellText(now, "updated_at")).toMatch(/^2026-11-28 12:00:00 UTC \(.+ ago\)$/);
    expect(cellText("2026-11-28T12:00:00.000Z", "created_at")).toMatch(/^2026-11-28 12:00:00 UTC/);
    expect(cellText(43_313_632_348, "lag_ms")).toBe("501.3 d");
    expect(cellText(1_234_567, "events")).toBe("1,234,567");
    expect(cellText(1_234_567, "key_id")).toBe("1234567");
    expect(cellText({ chain_index: "all" }, "dimensions")).toBe("chain_index: all");
    expect(cellText(null)).toBe("—");
  });

  it("turns field names into headings", () => {
    expect(heading("updated_at")).toBe("Updated at");
    expect(heading("lastSeenAt")).toBe("Last seen at");
    expect(heading("watermark_lag_ms")).toBe("Watermark lag");
    expect(heading("key_id")).toBe("Key ID");
  });

  it("reads decode errors by decoder from the metrics text", () => {
    const text = [
      "# TYPE alephium_normalize_decode_errors_total counter",
      'alephium_normalize_decode_errors_total{decoder="furnace",event_index="0"} 2',
      'alephium_normalize_decode_errors_total{decoder="furnace",event_index="1"} 1',
      'alephium_normalize_decode_errors_total{decoder="elexium",event_index="3"} 4',
      'alephium_http_requests_total{method="GET",route="/",status="200"} 9',
    ].join("\n");
    expect(Object.fromEntries(decodeErrorsOf(text))).toEqual({ furnace: 3, elexium: 4 });
  });
});
