/** The portal's pure parts: the allow-list rule and the sealing of a session's admin key. */
import { describe, expect, it } from "vitest";
import { actorOf, isAllowed } from "../../lib/portal/service.ts";
import { hashToken, seal, unseal } from "../../lib/portal/sessions.ts";

const config = {
  PORTAL_ADMIN_EMAILS: " Admin@Example.com , ops@example.com",
  PORTAL_ADMIN_SUBJECTS: "sub-42",
};

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
        { PORTAL_ADMIN_EMAILS: "", PORTAL_ADMIN_SUBJECTS: "" },
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
