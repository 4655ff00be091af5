// Test passes: embedded and server (the job worker on pg-boss and the pipeline over Kafka: every event delivered at least once).
/**
 * Outbound webhooks (issue 24, point 2), over a real pipeline on the simulated network (in-process bus, or Kafka on
 * CI's second pass) and the job worker of `start`: local receivers (node:http on 127.0.0.1, allowed by
 * WEBHOOK_ALLOWED_CIDRS as an operator would) that fail, hang past the timeout and recover. Every matching event
 * arrives, in id order, at least once (deduplicated by `webhook-id`: exactly the poll of `/events/all`), the stored
 * cursor is never ahead of a 2xx, signatures verify with the Standard Webhooks algorithm written out below; private
 * addresses are refused at creation and at delivery; a run of failures disables a webhook, its owner re-enables it;
 * the delivery log; owners see only their own webhooks.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type JobWorker, startJobWorker } from "../../pipeline/jobs/worker.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { startTestPipeline, type TestPipeline, waitFor } from "../helpers/pipeline.ts";

/**
 * Standard Webhooks verification, as the specification and its reference libraries do it: the secret's base64 part
 * after `whsec_` is the HMAC-SHA256 key; the signed content is `<webhook-id>.<webhook-timestamp>.<raw body>`; the
 * header holds space-separated `v1,<base64>` signatures, one of which must match (compared in constant time); the
 * timestamp must be within 5 minutes of now. Returns the parsed body, or throws.
 */
function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string): unknown {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string")
    throw new Error("missing required headers");
  const ts = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(Math.floor(Date.now() / 1000) - ts) > 300)
    throw new Error("message timestamp too old or too new");
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  for (const versioned of signatures.split(" ")) {
    const [version, signature] = versioned.split(",");
    if (version !== "v1" || !signature) continue;
    const given = Buffer.from(signature, "base64");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return JSON.parse(body);
  }
  throw new Error("no matching signature found");
}

interface Hit {
  headers: IncomingHttpHeaders;
  raw: string;
  body: { webhook_id: string; events: { id: string }[] };
  messageId: string;
  /** What the receiver answered: a status, or nothing (it hung until the sender gave up). */
  answer: number | "hang";
}

interface Receiver {
  url: string;
  hits: Hit[];
  /** Batches answered 2xx, by webhook-id, in the order first acknowledged. */
  acked: Map<string, string[]>;
  close(): Promise<void>;
}

/** A receiver whose `answer(n)` (n from 0) decides each request; `onHit` runs before the answer. */
async function startReceiver(
  answer: (n: number, hit: Omit<Hit, "answer">) => number | "hang",
  onHit?: (hit: Omit<Hit, "answer">) => Promise<void>,
): Promise<Receiver> {
  const hits: Hit[] = [];
  const acked = new Map<string, string[]>();
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      raw += chunk;
    });
    req.on("end", async () => {
      const hit = {
        headers: req.headers,
        raw,
        body: JSON.parse(raw) as Hit["body"],
        messageId: String(req.headers["webhook-id"]),
      };
      await onHit?.(hit);
      const a = answer(hits.length, hit);
      hits.push({ ...hit, answer: a });
      if (a === "hang") return; // never answered: the sender times out and closes
      if (a >= 200 && a < 300 && !acked.has(hit.messageId))
        acked.set(
          hit.messageId,
          hit.body.events.map((e) => e.id),
        );
      res.writeHead(a, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    hits,
    acked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const BATCH = 40;
const RETRY_LIMIT = 3;
const STEP_BATCHES = 2;

describe("outbound webhooks", () => {
  let p: TestPipeline;
  let worker: JobWorker;
  let strict: TestApp;
  const receivers: Receiver[] = [];
  let categories: string[] = [];
  let ceilingReads = 0;
  let wakeSteps = 0;

  beforeAll(async () => {
    p = await startTestPipeline({
      blocks: 120,
      env: {
        // The receivers listen on loopback: allowed here as an operator would (the default refuses it).
        WEBHOOK_ALLOWED_CIDRS: "127.0.0.0/8",
        WEBHOOK_BATCH: String(BATCH),
        // Catching up, one queue message sends up to this many full batches before handing over to the next.
        WEBHOOK_STEP_BATCHES: String(STEP_BATCHES),
        // Generous against a loaded machine: the receiver answers at once, except the one request it leaves hanging.
        WEBHOOK_TIMEOUT_MS: "8000",
        WEBHOOK_POLL_S: "1",
        WEBHOOK_RETRY_LIMIT: String(RETRY_LIMIT),
        WEBHOOK_RETRY_DELAY_S: "1",
        // Far above one delivery on a loaded machine: pg-boss gives up on a handler running longer.
        WEBHOOK_EXPIRE_S: "300",
        WEBHOOK_MAX_PER_OWNER: "5",
        JOBS_POLL_S: "1",
        JOBS_EXPIRE_S: "600",
      },
    });
    await p.catchUp();
    // The worker's reads of the chains' progress (the webhook wake's ceiling reads) and the wake's steps are counted.
    const { ch, pg } = p.deps;
    worker = await startJobWorker({
      ...p.deps,
      ch: {
        ...ch,
        query: (label, sql, params) => {
          if (label === "chain_progress_read") ceilingReads++;
          return ch.query(label, sql, params);
        },
      },
      pg: {
        ...pg,
        query: (label, sql, params) => {
          if (label === "webhook_wake") wakeSteps++;
          return pg.query(label, sql, params);
        },
      },
    });
    // The same stores without the allowance: the default policy.
    strict = await createTestApp({ stores: { pg: p.pg, ch: p.ch } });
    const all = (await p.api.app.inject({ url: "/events/all?limit=200" })).json().events as {
      category: string;
    }[];
    const counts = new Map<string, number>();
    for (const e of all) counts.set(e.category, (counts.get(e.category) ?? 0) + 1);
    categories = [...counts].sort((a, b) => b[1] - a[1]).map(([c]) => c);
  }, 300_000);
  afterAll(async () => {
    await worker?.stop();
    for (const r of receivers) await r.close();
    await strict?.close();
    await p?.close();
  });

  const api = () => p.api;
  const post = (key: string, url: string, payload?: unknown) =>
    api().app.inject({ method: "POST", url, headers: api().auth(key), payload: payload ?? {} });
  const get = (key: string, url: string) => api().app.inject({ url, headers: api().auth(key) });
  const cursorOf = async (id: string) =>
    (
      await p.pg.pg.query<{ after_id: string }>("t", "SELECT after_id FROM webhooks WHERE webhook_id = $1", [
        id,
      ])
    )[0]?.after_id;

  /** Every event id of a filter, oldest first, as a poller of /events/all reads them. */
  async function pollAll(query: string): Promise<{ id: string }[]> {
    const out: { id: string }[] = [];
    let after = "0";
    for (;;) {
      const res = await api().app.inject({ url: `/events/all?poll=1&limit=200&after_id=${after}${query}` });
      const events = res.json().events as { id: string }[];
      if (events.length === 0) return out;
      out.push(...events);
      after = events.at(-1)!.id;
    }
  }

  it("reads no watermark for the wake while no webhook waits (WEBHOOK_WAKE_MS)", async () => {
    // Five wake periods with no webhook: the wake rests instead of reading the ceiling every 200 ms.
    const before = ceilingReads;
    await new Promise((r) => setTimeout(r, 1_000));
    expect(ceilingReads).toBe(before);
  });

  it("delivers every matching event in order, at least once, through a 500 and a timeout, signed, the cursor never ahead of a 2xx", async () => {
    const category = categories[0]!;
    let secret = "";
    let webhookId = "";
    let lastAcked = "0";
    const problems: string[] = [];
    const receiver: Receiver = await startReceiver(
      (n) => (n === 0 ? 500 : n === 1 ? "hang" : 200),
      async (hit) => {
        // On every request: the signature, and the stored cursor against what was acknowledged so far.
        try {
          verifyStandardWebhook(secret, hit.headers, hit.raw);
        } catch (error) {
          problems.push(`request ${hit.messageId}: ${(error as Error).message}`);
        }
        // The last event id a 2xx acknowledged so far (the receiver records a 2xx before answering it).
        for (const ids of receiver.acked.values()) if (ids.at(-1)! > lastAcked) lastAcked = ids.at(-1)!;
        const cursor = await cursorOf(webhookId);
        if (cursor === undefined || cursor > lastAcked)
          problems.push(`cursor ${cursor} ahead of the last 2xx (${lastAcked})`);
        if (hit.body.webhook_id !== webhookId) problems.push(`body webhook_id ${hit.body.webhook_id}`);
        if (!(hit.body.events[0]!.id > (cursor ?? "")))
          problems.push(`batch does not start after the cursor`);
      },
    );
    receivers.push(receiver);

    const created = await post(api().userKey, "/webhooks", {
      url: receiver.url,
      filters: { category: [category] },
      after_id: "0",
    });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    secret = body.secret;
    webhookId = body.webhook.webhook_id;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64").length).toBe(32);
    expect(body.webhook).toMatchObject({ state: "active", after_id: "0", filters: { category: [category] } });
    expect(body.webhook.secret).toBeUndefined();

    // New blocks while the first batches are retried and delivered.
    await waitFor("the first requests", async () => receiver.hits.length >= 1, 60_000);
    p.chain.advance(30);
    await p.catchUp();

    const expected = await pollAll(`&category=${encodeURIComponent(category)}`);
    expect(expected.length).toBeGreaterThan(2 * BATCH);
    const last = expected.at(-1)!.id;
    await waitFor("the webhook to catch up", async () => (await cursorOf(webhookId)) === last, 180_000);

    // Deduplicated by webhook-id, the 2xx-acknowledged batches are exactly the poll, in order.
    const delivered = [...receiver.acked.values()].flat();
    expect(delivered).toEqual(expected.map((e) => e.id));
    expect(problems).toEqual([]);
    // A signature made with another secret does not verify (the check above can fail).
    expect(() =>
      verifyStandardWebhook(`whsec_${"A".repeat(43)}=`, receiver.hits[0]!.headers, receiver.hits[0]!.raw),
    ).toThrow(/signature/);
    // The first batch: 500, no answer, then 200; the same message id and the same events each time.
    const [first, second, third] = receiver.hits;
    expect([first!.answer, second!.answer, third!.answer]).toEqual([500, "hang", 200]);
    expect(new Set([first!.messageId, second!.messageId, third!.messageId]).size).toBe(1);
    expect(second!.body.events).toEqual(first!.body.events);
    expect(third!.body.events.map((e) => e.id)).toEqual(first!.body.events.map((e) => e.id));
    expect(first!.body.events.length).toBe(BATCH);
    // Each event as /events/all serves it.
    const page = (
      await api().app.inject({
        url: `/events/all?poll=1&limit=${BATCH}&after_id=0&category=${encodeURIComponent(category)}`,
      })
    ).json().events;
    expect(third!.body.events).toEqual(page);
    // One message id per batch.
    expect(receiver.acked.size).toBe(new Set(receiver.hits.map((h) => h.messageId)).size);
    // Catching up, one queue message sent several batches back to back (each acknowledged on its own 2xx), never
    // more than STEP_BATCHES: the 2xx deliveries logged while each of the webhook's messages ran (one clock: both
    // times are PostgreSQL's).
    const perMessage = await p.pg.pg.query<{ n: string }>(
      "t",
      `SELECT count(d.delivery_id) AS n FROM pgboss.job j
         JOIN webhook_deliveries d ON d.webhook_id = $1::uuid AND d.ok
          AND d.created_at >= j.started_on AND d.created_at <= j.completed_on
        WHERE j.name = 'webhook' AND j.data->>'webhook_id' = $1::text AND j.state = 'completed'
        GROUP BY j.id`,
      [webhookId],
    );
    const batchesPerMessage = perMessage.map((r) => Number(r.n));
    expect(Math.max(...batchesPerMessage)).toBe(STEP_BATCHES);

    // The delivery log: every attempt, newest first, with status, error and latency.
    const log = (await get(api().userKey, `/webhooks/${webhookId}/deliveries?limit=500`)).json()
      .deliveries as {
      delivery_id: number;
      message_id: string;
      attempt: number;
      ok: boolean;
      status: number | null;
      error: string | null;
      latency_ms: number;
      event_count: number;
      first_event_id: string;
      last_event_id: string;
    }[];
    expect(log.length).toBe(receiver.hits.length);
    const ids = log.map((d) => d.delivery_id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    const oldest = log.slice(-3).reverse();
    expect(oldest.map((d) => [d.attempt, d.ok, d.status])).toEqual([
      [1, false, 500],
      [2, false, null],
      [3, true, 200],
    ]);
    expect(oldest[0]!.error).toBe("HTTP 500");
    expect(oldest[1]!.error).toMatch(/^timeout/);
    expect(oldest[2]!.message_id).toBe(first!.messageId);
    expect(oldest[2]).toMatchObject({
      event_count: BATCH,
      first_event_id: expected[0]!.id,
      last_event_id: expected[BATCH - 1]!.id,
    });
    for (const d of log) {
      expect(Number.isInteger(d.latency_ms)).toBe(true);
      expect(d.latency_ms).toBeGreaterThanOrEqual(0);
    }
    // Paging the log with `before`.
    const older = (
      await get(api().userKey, `/webhooks/${webhookId}/deliveries?limit=2&before=${ids[1]}`)
    ).json().deliveries as { delivery_id: number }[];
    expect(older.map((d) => d.delivery_id)).toEqual(ids.slice(2, 4));

    const shown = (await get(api().userKey, `/webhooks/${webhookId}`)).json();
    expect(shown.webhook).toMatchObject({
      state: "active",
      failures: 0,
      pending_last_id: null,
      after_id: last,
    });
    expect(shown.webhook.last_success_at).not.toBeNull();
    expect(JSON.stringify(shown)).not.toContain(secret.slice(6));

    // Caught up, its next message waits WEBHOOK_POLL_S while the wake reads the ceiling: new events are a step,
    // on which it makes the waiting message due at once.
    // (A delivery that reads the new events before the wake does sees them itself, so a few rounds of blocks.)
    const steps = wakeSteps;
    for (let i = 0; i < 10 && wakeSteps === steps; i++) {
      p.chain.advance(2);
      await p.catchUp();
      for (let t = 0; t < 20 && wakeSteps === steps; t++) await new Promise((r) => setTimeout(r, 100));
    }
    expect(wakeSteps).toBeGreaterThan(steps);

    // Deleting removes the webhook and its log.
    expect((await post(api().userKey, `/webhooks/${webhookId}/delete`)).statusCode).toBe(200);
    expect((await get(api().userKey, `/webhooks/${webhookId}`)).statusCode).toBe(404);
    expect(
      (await p.pg.pg.query("t", "SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1", [webhookId]))
        .length,
    ).toBe(0);
  }, 400_000);

  it("refuses private, loopback and link-local addresses unless an operator allows them", async () => {
    const refused = [
      "http://10.1.2.3/",
      "http://localhost:8080/hook",
      "http://127.0.0.1/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://169.254.169.254/latest/meta-data",
      "http://[fe80::1]/",
      "http://[fd00::1]/",
      "http://0.0.0.0/",
      "http://100.64.0.1/",
      "http://192.168.1.1/",
      "http://172.16.0.1/",
      "http://224.0.0.1/",
    ];
    for (const url of refused) {
      const r = await strict.app.inject({
        method: "POST",
        url: "/webhooks",
        headers: strict.auth(strict.userKey),
        payload: { url },
      });
      expect(r.statusCode, url).toBe(400);
      expect(r.json().code, url).toBe("webhook_url_refused");
      expect(r.json().detail, url).toMatch(/^url /);
      expect(r.json().details.field).toBe("url");
    }
    for (const url of ["ftp://example.com/", "not a url", "file:///etc/passwd"]) {
      const r = await strict.app.inject({
        method: "POST",
        url: "/webhooks",
        headers: strict.auth(strict.userKey),
        payload: { url },
      });
      expect(r.statusCode, url).toBe(400);
      expect(r.json().detail, url).toContain("url");
    }
    // With 127.0.0.0/8 allowed, loopback passes; other private ranges are still refused.
    const ten = await post(api().userKey, "/webhooks", { url: "http://10.1.2.3/" });
    expect(ten.statusCode).toBe(400);
    expect(ten.json().detail).toContain("private");

    // At delivery the address is checked again (a DNS answer may have changed since): a refused attempt is a failure.
    const receiver = await startReceiver(() => 200);
    receivers.push(receiver);
    const created = await post(api().userKey, "/webhooks", { url: receiver.url, after_id: "0" });
    expect(created.statusCode).toBe(201);
    const id = created.json().webhook.webhook_id as string;
    await p.pg.pg.query("t", "UPDATE webhooks SET url = 'http://10.1.2.3:9/hook' WHERE webhook_id = $1", [
      id,
    ]);
    await waitFor(
      "a refused delivery in the log",
      async () => (await get(api().userKey, `/webhooks/${id}/deliveries`)).json().deliveries.length > 0,
      60_000,
    );
    const [attempt] = (await get(api().userKey, `/webhooks/${id}/deliveries`)).json().deliveries;
    expect(attempt).toMatchObject({ ok: false, status: null });
    expect(attempt.error).toMatch(/^refused: .*10\.1\.2\.3.*private/);
    expect(await cursorOf(id)).toBe("0");
    expect(receiver.hits.length).toBe(0);
    expect((await post(api().userKey, `/webhooks/${id}/delete`)).statusCode).toBe(200);
  }, 120_000);

  it("disables a webhook after its retries fail, and its owner re-enables it", async () => {
    const category = categories[1] ?? categories[0]!;
    let healthy = false;
    const receiver = await startReceiver(() => (healthy ? 204 : 503));
    receivers.push(receiver);
    const created = await post(api().userKey, "/webhooks", {
      url: receiver.url,
      filters: { category: [category, " "], sub_kind: [] },
      after_id: "0",
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().webhook.filters).toEqual({ category: [category] });
    const id = created.json().webhook.webhook_id as string;
    const show = async () => (await get(api().userKey, `/webhooks/${id}`)).json().webhook;
    await waitFor("the webhook to be disabled", async () => (await show()).state === "disabled", 120_000);
    const disabled = await show();
    expect(disabled.disabled_reason).toContain(`after ${RETRY_LIMIT + 1} attempts`);
    expect(disabled.disabled_reason).toContain("HTTP 503");
    expect(disabled.failures).toBe(RETRY_LIMIT + 1);
    expect(disabled.after_id).toBe("0");
    // Operators see it in /metrics: the disabled webhook, and the failed attempts counted by the job worker.
    const scraped = (await api().app.inject({ url: "/metrics" })).body;
    expect(scraped).toMatch(/^alephium_webhooks\{state="disabled"\} [1-9]/m);
    const workerMetrics = await p.deps.metrics.registry.getSingleMetricAsString(
      "alephium_webhook_deliveries_total",
    );
    expect(workerMetrics).toMatch(/alephium_webhook_deliveries_total\{outcome="failed"\} [1-9]/);
    expect(receiver.hits.length).toBe(RETRY_LIMIT + 1);
    expect(new Set(receiver.hits.map((h) => h.messageId)).size).toBe(1);
    const log = (await get(api().userKey, `/webhooks/${id}/deliveries`)).json().deliveries as {
      attempt: number;
      status: number;
    }[];
    expect(log.map((d) => [d.attempt, d.status])).toEqual(
      Array.from({ length: RETRY_LIMIT + 1 }, (_, i) => [RETRY_LIMIT + 1 - i, 503]),
    );

    // Nothing is sent while disabled.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.hits.length).toBe(RETRY_LIMIT + 1);

    healthy = true;
    const enabled = await post(api().userKey, `/webhooks/${id}/enable`);
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json().webhook).toMatchObject({ state: "active", failures: 0, disabled_reason: null });
    const expected = (await pollAll(`&category=${encodeURIComponent(category)}`)).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(0);
    await waitFor("the webhook to catch up", async () => (await cursorOf(id)) === expected.at(-1), 120_000);
    expect([...receiver.acked.values()].flat()).toEqual(expected);
    // The batch that failed is the first one sent after re-enabling, under the same message id.
    expect(receiver.hits[RETRY_LIMIT + 1]!.messageId).toBe(receiver.hits[0]!.messageId);

    // The owner pauses it; enabling an active webhook changes nothing.
    const again = await post(api().userKey, `/webhooks/${id}/enable`);
    expect(again.json().webhook.state).toBe("active");
    const paused = await post(api().userKey, `/webhooks/${id}/disable`);
    expect(paused.json().webhook).toMatchObject({
      state: "disabled",
      disabled_reason: "disabled by its owner",
    });
    expect((await post(api().userKey, `/webhooks/${id}/delete`)).statusCode).toBe(200);
  }, 300_000);

  it("shows an owner only its own webhooks (404 for another's), an admin all; 400, 401, 403 and 409", async () => {
    const receiver = await startReceiver(() => 200);
    receivers.push(receiver);
    const keys = api().deps.keys!;
    const other = (await keys.createKey({ userId: "other-user", planId: "pro", level: "user" })).key;
    const sameOwner = (await keys.createKey({ userId: "plain-user", planId: "free", level: "user" })).key;
    const created = await post(api().userKey, "/webhooks", { url: receiver.url });
    expect(created.statusCode).toBe(201);
    const hook = created.json().webhook;
    // Without after_id: from the watermark on.
    expect(hook.after_id > "0").toBe(true);
    const id = hook.webhook_id as string;

    for (const [method, url] of [
      ["GET", `/webhooks/${id}`],
      ["GET", `/webhooks/${id}/deliveries`],
      ["POST", `/webhooks/${id}/enable`],
      ["POST", `/webhooks/${id}/disable`],
      ["POST", `/webhooks/${id}/delete`],
    ] as const) {
      const r = await api().app.inject({
        method,
        url,
        headers: api().auth(other),
        ...(method === "POST" ? { payload: {} } : {}),
      });
      expect(r.statusCode, `${method} ${url}`).toBe(404);
      expect(r.json().code).toBe("not_found");
    }
    expect((await get(other, "/webhooks")).json().webhooks).toEqual([]);
    expect((await get(sameOwner, `/webhooks/${id}`)).statusCode).toBe(200);
    expect((await get(api().adminKey, `/webhooks/${id}`)).statusCode).toBe(200);
    const all = (await get(api().adminKey, "/webhooks?limit=200")).json().webhooks as {
      webhook_id: string;
    }[];
    expect(all.map((w) => w.webhook_id)).toContain(id);
    // Paged one at a time with `next`, the admin's list gives the same webhooks in the same order, then null.
    const pager = (await keys.createKey({ userId: "pager-user", planId: "pro", level: "user" })).key;
    for (let i = 0; i < 2; i++)
      expect((await post(pager, "/webhooks", { url: receiver.url })).statusCode).toBe(201);
    const everyHook = (await get(api().adminKey, "/webhooks?limit=200")).json().webhooks as {
      webhook_id: string;
    }[];
    const paged: string[] = [];
    for (let cursor = ""; ; ) {
      const page = (
        await get(api().adminKey, `/webhooks?limit=1${cursor ? `&cursor=${cursor}` : ""}`)
      ).json();
      paged.push(...(page.webhooks as { webhook_id: string }[]).map((w) => w.webhook_id));
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(everyHook.length).toBeGreaterThanOrEqual(3);
    expect(paged).toEqual(everyHook.map((w) => w.webhook_id));
    const own = (await get(api().userKey, "/webhooks?limit=1")).json();
    expect(own.webhooks.length).toBe(1);

    // 401 without a key, 403 with a revoked one.
    expect(
      (await api().app.inject({ method: "POST", url: "/webhooks", payload: { url: receiver.url } }))
        .statusCode,
    ).toBe(401);
    const revoked = await keys.createKey({ userId: "revoked-user", planId: "pro", level: "user" });
    await keys.revoke(revoked.keyId);
    expect((await get(revoked.key, "/webhooks")).statusCode).toBe(403);

    // 400s name the field.
    const bad: [unknown, string][] = [
      [{ url: receiver.url, extra: 1 }, "extra"],
      [{ url: receiver.url, after_id: "abc" }, "after_id"],
      [{ url: receiver.url, filters: { category: [""] } }, "category"],
      [{ url: receiver.url, filters: { sub_kind: { a: 1 } } }, "sub_kind"],
      [{ url: receiver.url, filters: { colour: "red" } }, "colour"],
      [{}, "url"],
    ];
    for (const [payload, field] of bad) {
      const r = await post(api().userKey, "/webhooks", payload);
      expect(r.statusCode, field).toBe(400);
      expect(JSON.stringify(r.json()), field).toContain(field);
    }
    expect((await get(api().userKey, "/webhooks/not-a-uuid")).statusCode).toBe(400);
    expect((await get(api().userKey, "/webhooks?cursor=bm9wZQ")).statusCode).toBe(400);

    // 409 past WEBHOOK_MAX_PER_OWNER (5 in this file).
    const limited = (await keys.createKey({ userId: "limited-user", planId: "pro", level: "user" })).key;
    for (let i = 0; i < 5; i++)
      expect((await post(limited, "/webhooks", { url: receiver.url })).statusCode).toBe(201);
    const sixth = await post(limited, "/webhooks", { url: receiver.url });
    expect(sixth.statusCode).toBe(409);
    expect(sixth.json().code).toBe("too_many_webhooks");
  }, 120_000);
});
