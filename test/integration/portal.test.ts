// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/**
 * The admin portal's server side over HTTP: sign-in at the local identity provider (oidc-provider),
 * the allow-list, the session's admin key (server-side, revoked at sign-out and at expiry), CSRF,
 * tampered cookies, the API proxy and the audit log. The browser test (portal-browser.test.ts) walks
 * the same through the pages in chromium.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ADMIN_EMAIL } from "../../devnet/identity-provider.ts";
import { browse, CookieJar, type PortalTest, signIn, startPortalTest } from "../helpers/portal.ts";

describe("admin portal sign-in and session", () => {
  let t: PortalTest;
  beforeAll(async () => {
    t = await startPortalTest();
  });
  afterAll(async () => t?.close());

  const portal = () => `${t.base}/${t.deps.config.STAGE}/portal`;
  const sessionKeys = async () =>
    (await t.deps.keys!.listKeys()).filter((k) => k.user_id.startsWith("portal:"));

  it("keeps its cookie and CSRF plugins to its own routes: an API reply sets no cookie and carries no cookie state", async () => {
    // In the root context, @fastify/cookie's hooks ran on every request of the API and gave every reply a Map.
    expect(t.app.hasRequestDecorator("cookies")).toBe(false);
    expect(t.app.hasReplyDecorator("setCookie")).toBe(false);
    const api = await fetch(`${t.base}/events/all?limit=1`, { headers: t.auth(t.userKey) });
    expect(api.status).toBe(200);
    expect(api.headers.get("set-cookie")).toBeNull();
    // The portal's own routes still read and set signed cookies: the cases below sign in, out, and refuse tampering.
  });

  it("signs in the allow-listed admin, holds an admin key server-side, and revokes it at sign-out", async () => {
    const jar = new CookieJar();
    const end = await signIn(t, jar);
    expect(end.url).toBe(`${portal()}/`);
    expect(end.response.status).toBe(200);
    expect(end.response.headers.get("content-security-policy")).toContain("script-src 'self'");
    const cookie = jar.get(t.base, "portal_session");
    expect(cookie).toBeTruthy();

    const session = await browse(jar, `${portal()}/session`);
    expect(session.response.status).toBe(200);
    const view = (await session.response.json()) as Record<string, string>;
    expect(view.email).toBe(DEMO_ADMIN_EMAIL);
    // No key in what the browser receives: neither the raw key nor its hash.
    expect(JSON.stringify(view)).not.toMatch(/alk_/);
    // The page's first question is answered 200 either way (no failed request in a signed-out browser).
    const state = await browse(jar, `${portal()}/session-state`);
    expect(state.response.status).toBe(200);
    const stateView = (await state.response.json()) as {
      signed_in: boolean;
      session?: Record<string, string>;
    };
    expect(stateView.signed_in).toBe(true);
    expect(stateView.session?.email).toBe(DEMO_ADMIN_EMAIL);
    expect(stateView.session?.csrf_token).toBeTruthy();
    const held = (await sessionKeys()).filter(
      (k) => k.user_id === `portal:${DEMO_ADMIN_EMAIL}` && !k.revoked_at,
    );
    expect(held).toHaveLength(1);
    expect(held[0]!.level).toBe("admin");
    expect(held[0]!.valid_until).not.toBeNull();

    // The proxy calls the API's routes with that key.
    const list = await browse(jar, `${portal()}/api/system/keys`);
    expect(list.response.status).toBe(200);

    const csrf = view.csrf_token!;
    const created = await browse(jar, `${portal()}/api/system/keys`, {
      method: "POST",
      body: JSON.stringify({ userId: "portal-made", planId: "free" }),
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
    });
    expect(created.response.status).toBe(200);
    expect(((await created.response.json()) as { key: string }).key).toMatch(/^alk_/);

    const out = await browse(jar, `${portal()}/logout`, {
      method: "POST",
      headers: { "x-csrf-token": csrf },
    });
    expect(out.response.status).toBe(200);
    const after = (await t.deps.keys!.listKeys(`portal:${DEMO_ADMIN_EMAIL}`)).find(
      (k) => k.key_id === held[0]!.key_id,
    );
    expect(after?.revoked_at).not.toBeNull();
    // The old cookie opens nothing any more.
    const stale = new CookieJar();
    stale.set(t.base, "portal_session", cookie!);
    expect((await browse(stale, `${portal()}/session`)).response.status).toBe(401);
    const signedOut = await browse(stale, `${portal()}/session-state`);
    expect(signedOut.response.status).toBe(200);
    expect(await signedOut.response.json()).toEqual({ signed_in: false });

    const audit = await t.deps.portal!.audit.list({ limit: 20 });
    const actions = audit.map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(["sign_in", "POST /system/keys", "sign_out"]));
    expect(audit.find((a) => a.action === "POST /system/keys")?.actor).toBe(DEMO_ADMIN_EMAIL);
  });

  it("refuses an account that is not allow-listed, with a page, and creates nothing", async () => {
    const before = (await sessionKeys()).length;
    const jar = new CookieJar();
    const end = await signIn(t, jar, "visitor@demo.local");
    expect(end.response.status).toBe(403);
    expect(await end.response.text()).toContain("visitor@demo.local");
    expect(jar.get(t.base, "portal_session")).toBeUndefined();
    expect((await sessionKeys()).length).toBe(before);
    const audit = await t.deps.portal!.audit.list({ limit: 5 });
    expect(audit.some((a) => a.action === "sign_in_refused" && a.actor === "visitor@demo.local")).toBe(true);
  });

  it("refuses a wrong password at the identity provider", async () => {
    const jar = new CookieJar();
    const end = await signIn(t, jar, DEMO_ADMIN_EMAIL, "wrong");
    expect(end.response.status).toBe(401);
    expect(jar.get(t.base, "portal_session")).toBeUndefined();
  });

  it("refuses a forged CSRF token and a tampered session cookie", async () => {
    const jar = new CookieJar();
    await signIn(t, jar);
    const view = (await (await browse(jar, `${portal()}/session`)).response.json()) as { csrf_token: string };
    const post = (token?: string) =>
      browse(jar, `${portal()}/api/system/keys`, {
        method: "POST",
        body: JSON.stringify({ userId: "csrf-victim", planId: "free" }),
        headers: { "content-type": "application/json", ...(token ? { "x-csrf-token": token } : {}) },
      });
    for (const token of [undefined, "forged-token", `${view.csrf_token.slice(0, -2)}xx`]) {
      const r = await post(token);
      expect(r.response.status).toBe(403);
      expect(r.response.headers.get("content-type")).toContain("application/problem+json");
    }
    expect(await t.deps.keys!.listKeys("csrf-victim")).toHaveLength(0);

    const cookie = decodeURIComponent(jar.get(t.base, "portal_session")!);
    const dot = cookie.lastIndexOf(".");
    const [value, signature] = [cookie.slice(0, dot), cookie.slice(dot + 1)];
    // One character changed well inside (a base64 string's last character may carry unused bits).
    const flip = (s: string) => `${s.slice(0, 4)}${s[4] === "A" ? "B" : "A"}${s.slice(5)}`;
    // Another token under the original signature, the original token under a changed one, no signature.
    for (const forged of [`${flip(value)}.${signature}`, `${value}.${flip(signature)}`, value].map(
      encodeURIComponent,
    )) {
      const other = new CookieJar();
      other.set(t.base, "portal_session", forged);
      const r = await browse(other, `${portal()}/session`);
      expect(r.response.status).toBe(401);
      expect(((await r.response.json()) as { code: string }).code).toBe("portal_session_required");
    }
  });

  it("refuses a callback with no sign-in in progress and hostile query values with 4xx", async () => {
    for (const q of ["", "state=forged&code=x", `state=${"a".repeat(10_000)}`, "state=a%00b&code=c"]) {
      const r = await fetch(`${portal()}/callback?${q}`, { redirect: "manual" });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
  });

  it("ends an expired session and revokes its key", async () => {
    const opened = await t.deps.portal!.openSession({
      subject: "sweep-test",
      email: DEMO_ADMIN_EMAIL,
      emailVerified: true,
    });
    const session = await t.deps.portal!.find(opened.token);
    expect(session).not.toBeNull();
    await t.deps.pg!.query(
      "test_expire",
      "UPDATE portal_sessions SET expires_at = now() - interval '1 second'",
    );
    expect(await t.deps.portal!.sweep()).toBeGreaterThanOrEqual(1);
    expect((await t.deps.keys!.getKey(session!.key_id))?.revoked_at).not.toBeNull();
    expect(await t.deps.portal!.find(opened.token)).toBeNull();
  });
});
