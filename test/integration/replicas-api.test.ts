// Test passes: embedded and server (two API apps on one database: the secrets' insert-or-read and the portal session rows on real PostgreSQL too).
/**
 * Stateless API replicas (issue 46): two API apps on one database, no secret configured, requests alternating
 * between them. A dapp list's nextKey, a portal session with its CSRF token (an admin action) and an event
 * stream's resume id made by one work on the other: the secrets come from the database (`shared_secrets`).
 */
import type { AddressInfo } from "node:net";
import { addressFromContractId } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedSecret } from "../../lib/secrets.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { blockMessage, type EventSpec, hex32, liftWatermark, writeMessages } from "../helpers/dapp-events.ts";
import { browse, CookieJar, type PortalTest, signIn, startPortalTest } from "../helpers/portal.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

const T0 = 1_750_000_000_000;
const FURNACE = addressFromContractId(hex32());

const burn = (i: number): EventSpec => {
  const burner = addressFromContractId(hex32());
  const token = hex32();
  return {
    dapp_id: "furnace",
    category: "token",
    sub_kind: "burn",
    type: "furnace_burn",
    from: burner,
    to: FURNACE,
    token_id: token,
    amount: String(1000 + i),
    contract_address: FURNACE,
    contract_event_index: 0,
    payload: {
      burner,
      token_id: token,
      amount: String(1000 + i),
      nft: false,
      nft_address: "",
      burn_timestamp: T0 + i * 1000,
      group: 0,
      token_burned_encoding: "text",
    },
  };
};

/** The ids of an SSE body, in order. */
const streamIds = (body: string) => [...body.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!);

describe("API replicas on one database, no secret configured", () => {
  let stores: { pg: TestPg; ch: TestCh };
  let a: PortalTest;
  let b: TestApp & { base: string };
  const env = { DAPP_CURSOR_SECRET: "", PORTAL_SESSION_SECRET: "" };

  beforeAll(async () => {
    stores = { pg: await openTestPg(), ch: await openTestCh() };
    a = await startPortalTest({ stores, env });
    // The second replica: the same configuration (the same identity provider), its own process state.
    const config = a.deps.config;
    const other = await createTestApp({
      stores,
      env: {
        PUBLIC_RPM: "1000000",
        PORTAL_OIDC_ISSUER: config.PORTAL_OIDC_ISSUER,
        PORTAL_OIDC_CLIENT_ID: config.PORTAL_OIDC_CLIENT_ID,
        PORTAL_OIDC_CLIENT_SECRET: config.PORTAL_OIDC_CLIENT_SECRET,
        PORTAL_ADMIN_EMAILS: config.PORTAL_ADMIN_EMAILS.join(","),
        ...env,
      },
    });
    await other.app.listen({ host: "127.0.0.1", port: 0 });
    b = { ...other, base: `http://127.0.0.1:${(other.app.server.address() as AddressInfo).port}` };
    for (let h = 1; h <= 6; h++) {
      await writeMessages(stores.ch.ch, [
        blockMessage(0, h, T0 + h * 8000, [[burn(h * 2)], [burn(h * 2 + 1)]]),
      ]);
    }
    await liftWatermark(stores.ch.ch, T0 + 60_000);
  }, 180_000);
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await stores?.pg.close();
    await stores?.ch.close();
  });

  it("keeps one shared secret per name in the database, not the configuration", async () => {
    const rows = await stores.pg.pg.query<{ name: string }>(
      "t",
      "SELECT name FROM shared_secrets ORDER BY name",
    );
    expect(rows.map((r) => r.name)).toEqual(["dapp_cursor", "portal_session"]);
    expect(a.deps.secrets.get("dapp_cursor")).toBe(b.deps.secrets.get("dapp_cursor"));
    expect(a.deps.secrets.get("portal_session")).toBe(b.deps.secrets.get("portal_session"));
  });

  it("pages a dapp list with nextKey alternating between the replicas", async () => {
    const replicas = [a, b];
    const ids: string[] = [];
    let next: string | null = null;
    for (let i = 0; i < 20; i++) {
      const t = replicas[i % 2]!;
      const r = await t.app.inject({
        url: `/dapps/furnace/burns?limit=3${next ? `&nextKey=${encodeURIComponent(next)}` : ""}`,
        headers: t.auth(t.userKey),
      });
      expect(r.statusCode, r.body).toBe(200);
      const body = r.json() as { burns: { id: string }[]; nextKey: string | null };
      ids.push(...body.burns.map((x) => x.id));
      next = body.nextKey;
      if (!next) break;
    }
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
  });

  it("resumes an event stream on the other replica after the last id received", async () => {
    const all = await a.app.inject({
      url: "/events/stream?until_caught_up=1&after_id=0&dapp_id=furnace",
      headers: a.auth(a.userKey),
    });
    const ids = streamIds(all.body);
    expect(ids).toHaveLength(12);
    const resumed = await b.app.inject({
      url: "/events/stream?until_caught_up=1&dapp_id=furnace",
      headers: { ...b.auth(b.userKey), "last-event-id": ids[4]! },
    });
    expect(resumed.statusCode).toBe(200);
    expect(streamIds(resumed.body)).toEqual(ids.slice(5));
  });

  it("opens a portal session on one replica and uses it, with its CSRF token, on the other", async () => {
    const jar = new CookieJar();
    const end = await signIn(a, jar);
    expect(end.response.status).toBe(200);
    // The browser holds the cookies of the site; the load balancer sends its next request to replica B.
    for (const name of ["portal_session", "portal_csrf"]) {
      const value = jar.get(a.base, name);
      if (value) jar.set(b.base, name, value);
    }
    expect(jar.get(b.base, "portal_session")).toBeTruthy();
    const stage = a.deps.config.STAGE;
    const viewB = await browse(jar, `${b.base}/${stage}/portal/session`);
    expect(viewB.response.status).toBe(200);
    const csrfB = ((await viewB.response.json()) as { csrf_token: string }).csrf_token;
    jar.set(a.base, "portal_csrf", jar.get(b.base, "portal_csrf") ?? "");
    // A token made by B, used on A, and on B: an admin action each time.
    for (const [base, userId] of [
      [a.base, "replica-a-made"],
      [b.base, "replica-b-made"],
    ] as const) {
      const created = await browse(jar, `${base}/${stage}/portal/api/system/keys`, {
        method: "POST",
        body: JSON.stringify({ userId, planId: "free" }),
        headers: { "content-type": "application/json", "x-csrf-token": csrfB },
      });
      expect(created.response.status, `${base} ${await created.response.clone().text()}`).toBe(200);
    }
    expect(await a.deps.keys!.listKeys("replica-a-made")).toHaveLength(1);
    expect(await b.deps.keys!.listKeys("replica-b-made")).toHaveLength(1);
    // A forged token is still refused on either.
    const forged = await browse(jar, `${b.base}/${stage}/portal/api/system/keys`, {
      method: "POST",
      body: JSON.stringify({ userId: "forged", planId: "free" }),
      headers: { "content-type": "application/json", "x-csrf-token": `${csrfB.slice(0, -2)}xx` },
    });
    expect(forged.response.status).toBe(403);
  });

  it("creates a missing secret once when several processes ask at the same time", async () => {
    await stores.pg.pg.query("t", "DELETE FROM shared_secrets WHERE name = 'dapp_cursor'");
    const values = await Promise.all(
      Array.from({ length: 6 }, () => storedSecret(stores.pg.pg, "dapp_cursor")),
    );
    expect(new Set(values).size).toBe(1);
    expect(values[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
