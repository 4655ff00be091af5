// Test passes: embedded (the portal's pages in a browser; the pipeline under it runs over Kafka in other files).
/**
 * The admin portal end to end in a real browser: Debian's chromium driven by playwright-core, against
 * the API on real stores fed by the pipeline from a simulated network, and the local identity provider
 * (oidc-provider). Signs in, creates and revokes a key, adds a pair and watches its candles draw at two
 * scales, runs a reindex job to completion, leaves a page still loading for another (the first neither marks
 * the second ready nor mixes into it), draws a series instance, is refused as a non-allow-listed
 * account, refuses a forged CSRF token and a tampered cookie, and signs out (the portal's key revoked).
 * Screenshots of the keys page, a candles chart and a series chart go to test-output/portal/.
 * Skipped, with a printed notice, where /usr/bin/chromium is missing (.ci/run installs it).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ADMIN_EMAIL, DEMO_PASSWORD } from "../../devnet/identity-provider.ts";
import { startJobWorker } from "../../pipeline/jobs/worker.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";
import { type PortalTest, startPortalTest } from "../helpers/portal.ts";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = join(process.cwd(), "test-output", "portal");
/**
 * Screenshots of every page at 1,280 px. Those of docs/portal.md are retaken there only when asked
 * (`PORTAL_DOC_SHOTS=1 npx vitest run test/integration/portal-browser.test.ts`): a test run leaves the working tree
 * as it found it, and puts them beside the others in test-output/portal/docs.
 */
const DOC_SHOTS =
  process.env.PORTAL_DOC_SHOTS === "1"
    ? join(process.cwd(), "docs", "portal")
    : join(process.cwd(), "test-output", "portal", "docs");
const WIDTH = 1280;

/** How many pixels the page is wider than the window (0: no horizontal scroll bar). */
const overflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) {
  console.warn(
    `portal-browser.test.ts skipped: ${CHROMIUM} is missing (apt-get install chromium; .ci/run does).`,
  );
}

const JOB_ENV = {
  JOBS_PAGE_BLOCKS: "100",
  JOBS_CHUNK_BLOCKS: "400",
  JOBS_EXPIRE_S: "60",
  JOBS_RETRY_DELAY_S: "1",
  JOBS_MAINTENANCE_S: "1",
  JOBS_POLL_S: "1",
};

/** Pixels of a chart's canvases that are not the white background: the chart drew something. */
async function drawnPixels(page: Page, testId: string): Promise<number> {
  return page.evaluate((id) => {
    let count = 0;
    for (const canvas of document.querySelectorAll<HTMLCanvasElement>(`[data-testid="${id}"] canvas`)) {
      const ctx = canvas.getContext("2d");
      if (!ctx || canvas.width === 0 || canvas.height === 0) continue;
      const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, a] = [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
        if (a > 0 && !(r > 245 && g > 245 && b > 245)) count++;
      }
    }
    return count;
  }, testId);
}

describe.skipIf(!hasChromium)("admin portal in chromium", () => {
  let p: TestPipeline;
  let t: PortalTest;
  let worker: Awaited<ReturnType<typeof startJobWorker>>;
  let browser: Awaited<ReturnType<typeof chromium.launch>>;
  let context: BrowserContext;
  let page: Page;
  const cspErrors: string[] = [];
  /** Console errors and uncaught exceptions of the main page while it is collected (the tours below). */
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 800, env: JOB_ENV });
    await p.catchUp();
    t = await startPortalTest({
      stores: { pg: p.pg, ch: p.ch },
      env: { ...JOB_ENV, EXPLORER_URL: p.server.explorerUrl, NODE_URL: p.server.nodeUrl },
    });
    worker = await startJobWorker(p.deps);
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(DOC_SHOTS, { recursive: true });
    // launch() gives the browser a fresh temporary profile (user-data-dir) of its own, removed at close.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    page = await context.newPage();
    page.on("dialog", (dialog) => void dialog.accept());
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
      if (message.type() === "error") consoleErrors.push(`${message.text()} ${message.location().url}`);
    });
    page.on("pageerror", (error) => consoleErrors.push(`uncaught: ${error.message}`));
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await t?.close();
    await p?.close();
  }, 120_000);

  const portal = () => `${t.base}/${t.deps.config.STAGE}/portal/`;
  const goto = async (route: string) => {
    await page.goto(`${portal()}#/${route}`);
    await page.waitForSelector(`main[data-ready="${route}"]`, { timeout: 60_000 });
  };

  it("shows the signed-out page at 1,280 px without a console error or a horizontal scroll", async () => {
    await page.setViewportSize({ width: WIDTH, height: 900 });
    consoleErrors.length = 0;
    await page.goto(portal());
    await page.waitForSelector('[data-testid="sign-in"]', { timeout: 60_000 });
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
    expect(consoleErrors).toEqual([]);
    expect(await overflow(page)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(DOC_SHOTS, "signed-out.png") });
  }, 120_000);

  it("signs in at the local identity provider as the allowed admin", async () => {
    await page.goto(portal());
    await page.click('[data-testid="sign-in"]');
    await page.waitForSelector('input[name="login"]');
    await page.fill('input[name="login"]', DEMO_ADMIN_EMAIL);
    await page.fill('input[name="password"]', DEMO_PASSWORD);
    await page.click('button[type="submit"]');
    await page.waitForSelector('[data-testid="who"]', { timeout: 60_000 });
    expect(await page.textContent('[data-testid="who"]')).toContain(DEMO_ADMIN_EMAIL);
    expect(page.url().startsWith(portal())).toBe(true);
    // The session's key stays on the server: no cookie or storage of the page holds it.
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === "portal_session")?.httpOnly).toBe(true);
    expect(JSON.stringify(cookies)).not.toContain("alk_");
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))).not.toContain(
      "alk_",
    );
  }, 120_000);

  it("a page left while it loads neither marks the next one ready nor mixes into it", async () => {
    // The status page's call is held until the keys page is shown, as on a loaded machine where
    // /status answers after the user moved on. Before views were kept apart, the status page then
    // set data-ready="status" over the keys page and appended its card to it.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route("**/portal/api/status", async (route) => {
      await held;
      await route.continue();
    });
    try {
      await page.goto(`${portal()}#/status`);
      await page.goto(`${portal()}#/keys`);
      await page.waitForSelector('main[data-ready="keys"]', { timeout: 60_000 });
      const answered = page.waitForResponse((r) => r.url().endsWith("/portal/api/status"));
      release();
      await answered;
      // Let the page run what follows the answer (parse, render, the old view's end) before looking.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 500)));
      expect(await page.getAttribute("main", "data-ready")).toBe("keys");
      expect(await page.getAttribute("main", "data-page")).toBe("keys");
      expect(await page.locator("main").textContent()).not.toContain("Status: chains");
      expect(await page.locator('main [data-testid="create-key"]').count()).toBe(1);
    } finally {
      release();
      await page.unroute("**/portal/api/status");
    }
  }, 120_000);

  it("creates a user key, lists it, revokes it, and the API then refuses it", async () => {
    await goto("keys");
    const create = page.locator('[data-testid="create-key"]');
    await create.locator('input[name="user_id"]').fill("browser-user");
    await create.locator('select[name="plan_id"]').selectOption("free");
    await create.locator('button[type="submit"]').click();
    const raw = (await page.locator('[data-testid="raw-key"]').textContent({ timeout: 30_000 })) ?? "";
    expect(raw).toMatch(/^alk_/);
    const row = page.locator('[data-testid="keys-table"] tr', { hasText: "browser-user" });
    await row.waitFor({ timeout: 30_000 });
    const auth = { "x-api-key": raw, authorization: `Bearer ${raw}` };
    expect((await fetch(`${t.base}/system/keys`, { headers: auth })).status).toBe(200);
    await page.screenshot({ path: join(SHOTS, "keys.png"), fullPage: true });

    await row.getByRole("button", { name: "Revoke" }).click();
    await page
      .locator('[data-testid="keys-table"] tr', { hasText: "browser-user" })
      .getByRole("button", { name: "Revoke" })
      .waitFor({ state: "detached", timeout: 30_000 });
    const refused = await fetch(`${t.base}/system/keys`, { headers: auth });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { code: string }).code).toBe("key_revoked");
  }, 120_000);

  it("adds a pair and draws its candles, then switches the scale", async () => {
    const admin = t.auth(t.adminKey);
    const before = (await t.app.inject({ url: "/price/source/devnet-dex/pair/all" })).json().pairs as {
      id: number;
      pair_symbol: string;
      token_id: string;
    }[];
    const first = before[0]!;
    // The pool is removed first, so that the portal adds it as a new pair.
    const del = await t.app.inject({
      method: "POST",
      url: `/price/source/devnet-dex/pair/${first.id}/del`,
      headers: admin,
    });
    expect(del.statusCode).toBe(200);

    await goto("prices");
    await page.locator('[data-testid="source"]').selectOption("devnet-dex");
    const add = page.locator('[data-testid="add-pair"]');
    await add.locator('input[name="pair_symbol"]').fill(first.pair_symbol);
    await add.locator('input[name="token_id"]').fill(first.token_id);
    await add.locator('button[type="submit"]').click();
    const added = await page.locator(".notice.ok", { hasText: "added" }).textContent({ timeout: 30_000 });
    const pairId = Number(/Pair (\d+) added/.exec(added ?? "")?.[1]);
    expect(pairId).toBeGreaterThan(0);
    // The candles processor builds the new pair's candles (its backfill) as the next blocks come in.
    p.chain.advance(300);
    await p.catchUp();
    await waitFor(
      "the added pair's backfill",
      async () => {
        const [row] = await p.pg.pg.query<{ at: string | null }>(
          "t",
          "SELECT backfilled_at AS at FROM price_pairs WHERE id = $1",
          [pairId],
        );
        return row?.at != null;
      },
      120_000,
    );

    const row = page.locator('[data-testid="pairs-table"] tr', { hasText: first.pair_symbol });
    await row.getByRole("button", { name: "Chart" }).click();
    const chart = page.locator('[data-testid="candles-chart"]');
    await expect
      .poll(async () => Number(await chart.getAttribute("data-candles")), { timeout: 60_000 })
      .toBeGreaterThan(0);
    await expect.poll(() => drawnPixels(page, "candles-chart"), { timeout: 30_000 }).toBeGreaterThan(500);
    const firstScale = await chart.getAttribute("data-scale");

    await page.locator('[data-testid="scale"]').selectOption("1m");
    await expect.poll(async () => chart.getAttribute("data-scale"), { timeout: 30_000 }).toBe("1m");
    expect(firstScale).not.toBe("1m");
    await expect
      .poll(async () => Number(await chart.getAttribute("data-candles")), { timeout: 60_000 })
      .toBeGreaterThan(1);
    await expect.poll(() => drawnPixels(page, "candles-chart"), { timeout: 30_000 }).toBeGreaterThan(500);
    await chart.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, "candles.png"), fullPage: true });
    await page.locator('[data-testid="zoom-in"]').click();
  }, 300_000);

  it("starts a reindex job and shows its progress until completed", async () => {
    const [range] = await p.ch.ch.query<{ from: string; to: string }>(
      "t",
      "SELECT toUnixTimestamp64Milli(min(timestamp)) AS from, toUnixTimestamp64Milli(max(timestamp)) AS to FROM raw_blocks FINAL WHERE main_chain",
    );
    await goto("jobs");
    const create = page.locator('[data-testid="create-job"]');
    await create.locator('input[name="from"]').fill(String(range!.from));
    await create.locator('input[name="to"]').fill(String(range!.to));
    await create.locator('button[type="submit"]').click();
    const jobRow = page.locator('[data-testid="jobs-table"] tbody tr').first();
    await jobRow.waitFor({ timeout: 30_000 });
    // The page re-reads itself while the job runs: no reload here.
    await expect
      .poll(async () => (await jobRow.textContent()) ?? "", { timeout: 240_000 })
      .toContain("completed");
    expect(await jobRow.textContent()).toContain("100");
  }, 300_000);

  it("draws a series instance's chart", async () => {
    await goto("series");
    await page.locator('[data-testid="instances-table"] tbody tr').first().waitFor({ timeout: 30_000 });
    await page
      .locator('[data-testid="instances-table"] tbody tr')
      .first()
      .getByRole("button", { name: "Chart" })
      .click();
    const chart = page.locator('[data-testid="series-chart"]');
    await expect
      .poll(async () => Number(await chart.getAttribute("data-points")), { timeout: 60_000 })
      .toBeGreaterThan(1);
    await expect.poll(() => drawnPixels(page, "series-chart"), { timeout: 30_000 }).toBeGreaterThan(200);
    await chart.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SHOTS, "series.png"), fullPage: true });
  }, 120_000);

  it("opens every page without an error, and /status shows the chains and the watermark", async () => {
    const pages = await page
      .locator("nav a")
      .evaluateAll((links) => links.map((a) => (a as HTMLAnchorElement).dataset.page ?? ""));
    expect(pages).toEqual(expect.arrayContaining(["status", "keys", "plans", "bans", "jobs", "prices"]));
    expect(pages.length).toBe(13);
    // At 1,280 px: no error notice, no console error, no horizontal scroll; a screenshot of each for the docs.
    await page.setViewportSize({ width: WIDTH, height: 900 });
    consoleErrors.length = 0;
    const failed: string[] = [];
    for (const id of pages) {
      await goto(id);
      // Let charts and late reads settle before looking.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
      const errors = await page.locator("main .notice.error").allTextContents();
      if (errors.length > 0) failed.push(`${id}: ${errors.join(" | ")}`);
      const wider = await overflow(page);
      if (wider > 0) failed.push(`${id}: ${wider} px wider than the ${WIDTH} px window`);
      await page.screenshot({ path: join(DOC_SHOTS, `${id}.png`), fullPage: true });
    }
    expect(failed).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await goto("status");
    const status = (await page.locator("main").textContent()) ?? "";
    expect(status).toContain("watermark");
    expect(status).toContain("Chain index");
    // The overview on top: phase, watermark lag, processors, price sources, code-hash warnings.
    const top = (await page.locator('[data-testid="status-overview"]').textContent()) ?? "";
    for (const part of [
      "Indexing",
      "Watermark lag",
      "Processors' lag",
      "Price sources",
      "Decode errors",
      "Code-hash warnings",
    ])
      expect(top).toContain(part);
    expect(top).not.toMatch(/\d{13}/);
    await page.screenshot({ path: join(SHOTS, "status.png"), fullPage: true });
  }, 180_000);

  it("shows the audit log of what was done", async () => {
    await goto("audit");
    const text = (await page.locator('[data-testid="audit-table"]').textContent()) ?? "";
    expect(text).toContain("sign_in");
    expect(text).toContain("POST /system/keys");
    expect(text).toContain("POST /system/jobs");
    expect(text).toContain(DEMO_ADMIN_EMAIL);
  }, 60_000);

  it("refuses a forged CSRF token and a tampered session cookie", async () => {
    const forged = await page.evaluate(async () => {
      const r = await fetch("api/system/keys", {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": "forged" },
        body: JSON.stringify({ userId: "forged-csrf", planId: "free" }),
      });
      return { status: r.status, body: (await r.json()) as { code: string } };
    });
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe("csrf_invalid_token");
    expect(await t.deps.keys!.listKeys("forged-csrf")).toHaveLength(0);

    const tampered = await browser.newContext();
    const session = (await context.cookies()).find((c) => c.name === "portal_session")!;
    const value = decodeURIComponent(session.value);
    const flipped = `${value.slice(0, 4)}${value[4] === "A" ? "B" : "A"}${value.slice(5)}`;
    await tampered.addCookies([{ ...session, value: encodeURIComponent(flipped) }]);
    const other = await tampered.newPage();
    await other.goto(portal());
    await other.waitForSelector('[data-testid="sign-in"]', { timeout: 30_000 });
    await tampered.close();
  }, 60_000);

  it("refuses the account that is not allow-listed", async () => {
    const visitor = await browser.newContext();
    const other = await visitor.newPage();
    await other.goto(`${portal()}login`);
    await other.fill('input[name="login"]', "visitor@demo.local");
    await other.fill('input[name="password"]', DEMO_PASSWORD);
    await other.click('button[type="submit"]');
    await other.waitForSelector("#refused", { timeout: 60_000 });
    expect(await other.textContent("#refused")).toContain("visitor@demo.local");
    expect((await visitor.cookies()).find((c) => c.name === "portal_session")).toBeUndefined();
    expect(await t.deps.keys!.listKeys("portal:visitor@demo.local")).toHaveLength(0);
    await visitor.close();
  }, 60_000);

  it("signs out, after which the portal's admin key is revoked", async () => {
    const held = (await t.deps.keys!.listKeys(`portal:${DEMO_ADMIN_EMAIL}`)).filter((k) => !k.revoked_at);
    expect(held).toHaveLength(1);
    await page.click('[data-testid="sign-out"]');
    await page.waitForSelector('[data-testid="sign-in"]', { timeout: 30_000 });
    const after = await t.deps.keys!.getKey(held[0]!.key_id);
    expect(after?.revoked_at).not.toBeNull();
    expect((await page.goto(`${portal()}session`))?.status()).toBe(401);
    expect(cspErrors).toEqual([]);
  }, 60_000);
});
