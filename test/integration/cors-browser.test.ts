// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/**
 * CORS in a real browser (api/plugins/cors.ts): a page served from another origin calls the API from Debian's
 * chromium (playwright-core): a user route with a key restricted to the page's origin (works), with a key
 * restricted to another origin (the browser blocks it), a public route (works), and /events/stream through
 * EventSource with the key in the query (works; with the other key, refused).
 * Skipped, with a printed notice, where /usr/bin/chromium is missing (.ci/run installs it).
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";

const CHROMIUM = "/usr/bin/chromium";
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(
    `cors-browser.test.ts skipped: ${CHROMIUM} is missing (apt-get install chromium; .ci/run does).`,
  );
}

/** What a page's fetch came to: the status and body, or the browser's refusal (a TypeError). */
type FetchOutcome = { status: number; body: unknown } | { blocked: string };

describe.skipIf(!hasChromium)("CORS from a page on another origin, in chromium", () => {
  let t: TestApp;
  let pageServer: Server;
  let browser: Browser;
  let page: Page;
  let api = "";
  let pageOrigin = "";
  let pageKey = "";
  let otherKey = "";

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ host: "127.0.0.1", port: 0 });
    api = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    // The page's origin: another port, so another origin than the API's.
    pageServer = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end("<!doctype html><title>cors page</title><p>another origin</p>");
    });
    await new Promise<void>((resolve) => pageServer.listen(0, "127.0.0.1", resolve));
    pageOrigin = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}`;
    const repo = t.deps.keys!;
    pageKey = (await repo.createKey({ userId: "u-page", planId: "enterprise", level: "user" })).key;
    await repo.addOrigin((await repo.listKeys("u-page"))[0]!.key_id, pageOrigin);
    otherKey = (await repo.createKey({ userId: "u-elsewhere", planId: "enterprise", level: "user" })).key;
    await repo.addOrigin((await repo.listKeys("u-elsewhere"))[0]!.key_id, "https://elsewhere.example");
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    });
    page = await (await browser.newContext()).newPage();
    await page.goto(`${pageOrigin}/`);
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pageServer?.close(resolve));
    await t?.close();
  }, 60_000);

  /** fetch() in the page, with the key's two headers when given (which makes the browser send a preflight). */
  const pageFetch = (url: string, key?: string): Promise<FetchOutcome> =>
    page.evaluate(
      async ({ url, key }) => {
        try {
          const headers: Record<string, string> = key
            ? { "x-api-key": key, authorization: `Bearer ${key}` }
            : {};
          const r = await fetch(url, { headers });
          return { status: r.status, body: await r.json() };
        } catch (error) {
          return { blocked: String(error) };
        }
      },
      { url, key },
    );

  /** An EventSource in the page: the `end` event's data once the stream caught up, or how it failed. */
  const pageStream = (url: string): Promise<{ end: unknown } | { failed: number }> =>
    page.evaluate(
      (url) =>
        new Promise<{ end: unknown } | { failed: number }>((resolve) => {
          const source = new EventSource(url);
          source.addEventListener("end", (message) => {
            source.close();
            resolve({ end: JSON.parse((message as MessageEvent<string>).data) });
          });
          source.onerror = () => {
            // A CORS refusal closes the source for good (readyState 2); a reconnect would keep it at 0.
            if (source.readyState === EventSource.CLOSED) resolve({ failed: source.readyState });
          };
        }),
      url,
    );

  it("the page is on another origin than the API", () => {
    expect(new URL(pageOrigin).origin).not.toBe(new URL(api).origin);
    expect(page.url().startsWith(pageOrigin)).toBe(true);
  });

  it("calls a user route with a key restricted to the page's origin", async () => {
    const outcome = await pageFetch(`${api}/system/keys`, pageKey);
    expect(outcome).toMatchObject({ status: 200 });
    const keys = (outcome as { body: { keys: { allowed_origins: string[] }[] } }).body.keys;
    expect(keys[0]?.allowed_origins).toEqual([pageOrigin]);
  });

  it("is blocked by the browser with a key restricted to another origin", async () => {
    const outcome = await pageFetch(`${api}/system/keys`, otherKey);
    expect(outcome).toHaveProperty("blocked");
    expect((outcome as { blocked: string }).blocked).toMatch(/TypeError/);
  });

  it("calls a public route", async () => {
    const outcome = await pageFetch(`${api}/system/plans`);
    expect(outcome).toMatchObject({ status: 200 });
    expect(JSON.stringify((outcome as { body: unknown }).body)).toContain("enterprise");
  });

  it("reads /events/stream through EventSource with the key in the query", async () => {
    const url = `${api}/events/stream?until_caught_up=1&after_id=0&api_key=${encodeURIComponent(pageKey)}`;
    const outcome = await pageStream(url);
    expect(outcome).toMatchObject({ end: { reason: "caught_up" } });
  });

  it("cannot open the stream with a key restricted to another origin", async () => {
    const url = `${api}/events/stream?until_caught_up=1&api_key=${encodeURIComponent(otherKey)}`;
    expect(await pageStream(url)).toEqual({ failed: 2 });
  });
});
