// Test passes: embedded and server (two workers claim at once: on PostgreSQL they are two connections, so FOR UPDATE SKIP LOCKED is what keeps them off each other's rows).
/**
 * NFT metadata fetching (issue 44): the fetcher (lib/nfts/metadata.ts) against local HTTP servers on 127.0.0.1
 * (allowed through NFT_METADATA_ALLOWED_CIDRS, as an operator would allow a private gateway): a JSON document read,
 * a body over the byte limit, a server that hangs past the timeout, an HTML answer, a redirect chain, a redirect to a
 * refused address and a private address refused without the allow-list; data: URIs (base64 and percent-encoded)
 * and ipfs:// mapped onto the gateway. Then the cache (postgres 0029, lib/nfts/metadata-repo.ts) and the job
 * worker's rounds (pipeline/jobs/nft-metadata.ts) through real PGlite: pending rows claimed once, outcomes stored,
 * failures retried with exponential backoff, a refusal after the longest wait, an ok row never fetched again.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/config.ts";
import { createMetrics } from "../../lib/metrics.ts";
import {
  createNftMetadataFetcher,
  decodeDataUri,
  displayImage,
  type FetcherOptions,
  ipfsToGateway,
} from "../../lib/nfts/metadata.ts";
import {
  createNftMetadataRepo,
  enqueueNftMetadata,
  retryDelayMs,
  uriKey,
} from "../../lib/nfts/metadata-repo.ts";
import { createNftMetadataWorker } from "../../pipeline/jobs/nft-metadata.ts";
import { openTestPg, quietLog, type TestPg } from "../helpers/stores.ts";

const DOC = {
  name: "Devnet Rarity #3",
  description: "A test NFT",
  image: "ipfs://bafyimage/3.png",
  attributes: [
    { trait_type: "Background", value: "Blue" },
    { trait_type: "Level", value: 7 },
    { value: "no key: skipped" },
  ],
};

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: Server; base: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("the NFT metadata fetcher", () => {
  let server: Server;
  let base: string;
  const hanging = new Set<ServerResponse>();
  const options = (over: Partial<FetcherOptions> = {}): FetcherOptions => ({
    gateway: `${base}/ipfs/`,
    timeoutMs: 2_000,
    maxBytes: 4_096,
    maxRedirects: 2,
    allowedCidrs: ["127.0.0.0/8"],
    ...over,
  });

  beforeAll(async () => {
    ({ server, base } = await listen((req, res) => {
      const url = req.url ?? "/";
      const json = (body: string, type = "application/json") => {
        res.writeHead(200, { "content-type": type });
        res.end(body);
      };
      if (url === "/ok.json") return json(JSON.stringify(DOC));
      if (url === "/plain")
        return json(JSON.stringify({ name: "as text/plain" }), "text/plain; charset=utf-8");
      if (url.startsWith("/ipfs/")) return json(JSON.stringify({ name: `gateway ${url}` }));
      if (url === "/large") {
        // No content-length: the limit is hit while streaming.
        res.writeHead(200, { "content-type": "application/json" });
        res.write(`{"name":"${"x".repeat(3_000)}`);
        res.end(`${"y".repeat(3_000)}"}`);
        return;
      }
      if (url === "/large-declared") {
        const body = JSON.stringify({ name: "z".repeat(10_000) });
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        return res.end(body);
      }
      if (url === "/html") return json("<html>not json</html>", "text/html");
      if (url === "/bad-json") return json("{name: oops", "application/json");
      if (url === "/array") return json("[1,2]");
      if (url === "/hang") {
        hanging.add(res);
        return;
      }
      if (url === "/404") {
        res.writeHead(404);
        return res.end();
      }
      const hop = /^\/redirect\/(\d+)$/.exec(url);
      if (hop) {
        const n = Number(hop[1]);
        res.writeHead(302, { location: n === 0 ? "/ok.json" : `/redirect/${n - 1}` });
        return res.end();
      }
      if (url === "/to-private") {
        res.writeHead(301, { location: "http://10.1.2.3/meta.json" });
        return res.end();
      }
      if (url === "/to-file") {
        res.writeHead(302, { location: "file:///etc/passwd" });
        return res.end();
      }
      res.writeHead(500);
      res.end();
    }));
  });
  afterAll(async () => {
    for (const res of hanging) res.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it("reads a JSON document: name, description, image and attributes (trait_type, value)", async () => {
    const f = createNftMetadataFetcher(options());
    expect(await f.fetch(`${base}/ok.json`)).toEqual({
      state: "ok",
      metadata: {
        name: DOC.name,
        description: DOC.description,
        image: DOC.image,
        attributes: [
          { trait_key: "Background", value_text: "Blue" },
          { trait_key: "Level", value_text: "7" },
        ],
      },
    });
    expect(await f.fetch(`${base}/plain`)).toMatchObject({
      state: "ok",
      metadata: { name: "as text/plain" },
    });
  });

  it("fails a body over the byte limit, streamed or declared, and one past the timeout", async () => {
    const f = createNftMetadataFetcher(options());
    expect(await f.fetch(`${base}/large`)).toEqual({ state: "failed", error: "too large: over 4096 bytes" });
    expect(await f.fetch(`${base}/large-declared`)).toMatchObject({
      state: "failed",
      error: expect.stringMatching(/^too large: \d+ bytes, over 4096/),
    });
    const quick = createNftMetadataFetcher(options({ timeoutMs: 200 }));
    expect(await quick.fetch(`${base}/hang`)).toEqual({
      state: "failed",
      error: "timeout: no complete answer within 200 ms",
    });
  });

  it("fails what is not a JSON object, and an error status", async () => {
    const f = createNftMetadataFetcher(options());
    expect(await f.fetch(`${base}/html`)).toEqual({
      state: "failed",
      error: "not JSON (content-type text/html)",
    });
    expect(await f.fetch(`${base}/bad-json`)).toEqual({ state: "failed", error: "not JSON" });
    expect(await f.fetch(`${base}/array`)).toEqual({
      state: "failed",
      error: "the document is not a JSON object",
    });
    expect(await f.fetch(`${base}/404`)).toEqual({ state: "failed", error: "HTTP 404" });
  });

  it("follows redirects up to the limit, checking every target", async () => {
    const f = createNftMetadataFetcher(options());
    expect(await f.fetch(`${base}/redirect/1`)).toMatchObject({ state: "ok", metadata: { name: DOC.name } });
    expect(await f.fetch(`${base}/redirect/2`)).toEqual({ state: "failed", error: "more than 2 redirects" });
    const toPrivate = await f.fetch(`${base}/to-private`);
    expect(toPrivate).toEqual({
      state: "refused",
      error: expect.stringContaining("resolves to 10.1.2.3, a private address"),
    });
    expect(toPrivate.state === "refused" && toPrivate.error).toContain("NFT_METADATA_ALLOWED_CIDRS");
    expect(await f.fetch(`${base}/to-file`)).toEqual({
      state: "refused",
      error: "redirect must be an http:// or https:// URL, not file:",
    });
  });

  it("refuses loopback, private and link-local addresses unless allowed, and schemes it does not fetch", async () => {
    const strict = createNftMetadataFetcher(options({ allowedCidrs: [] }));
    for (const [url, kind] of [
      [`${base}/ok.json`, "loopback"],
      ["http://192.168.1.10/x.json", "private"],
      ["http://169.254.169.254/latest/meta-data", "link-local"],
      ["http://[::1]/x.json", "loopback"],
    ] as const) {
      const out = await strict.fetch(url);
      expect(out, url).toMatchObject({ state: "refused" });
      expect(out.state !== "ok" && out.error, url).toContain(`a ${kind} address`);
    }
    expect(await strict.fetch("ftp://example.com/x.json")).toEqual({
      state: "refused",
      error: "ftp: URIs are not fetched",
    });
    expect(await strict.fetch("not a uri")).toEqual({ state: "refused", error: "not an absolute URI" });
    // The gateway is checked like any other host: ipfs:// through a loopback gateway is refused too.
    expect(await strict.fetch("ipfs://bafy/1.json")).toMatchObject({ state: "refused" });
  });

  it("maps ipfs:// onto the gateway, for fetches and for images", async () => {
    expect(ipfsToGateway("ipfs://bafyabc/1.json", "https://ipfs.io/ipfs/")).toBe(
      "https://ipfs.io/ipfs/bafyabc/1.json",
    );
    expect(ipfsToGateway("ipfs://ipfs/bafyabc", "https://gw.example/ipfs/")).toBe(
      "https://gw.example/ipfs/bafyabc",
    );
    expect(ipfsToGateway("https://x.example/a", "https://ipfs.io/ipfs/")).toBeNull();
    const f = createNftMetadataFetcher(options());
    expect(await f.fetch("ipfs://bafymeta/7.json")).toEqual({
      state: "ok",
      metadata: { name: "gateway /ipfs/bafymeta/7.json", description: null, image: null, attributes: [] },
    });
    const gw = "https://ipfs.io/ipfs/";
    expect(displayImage("ipfs://bafyimage/3.png", gw)).toBe("https://ipfs.io/ipfs/bafyimage/3.png");
    expect(displayImage("https://cdn.example/3.png", gw)).toBe("https://cdn.example/3.png");
    expect(displayImage("data:image/svg+xml;base64,PHN2Zy8+", gw)).toBe("data:image/svg+xml;base64,PHN2Zy8+");
    expect(displayImage("javascript:alert(1)", gw)).toBeNull();
    expect(displayImage("/relative.png", gw)).toBeNull();
  });

  it("decodes data: URIs, base64 and percent-encoded, JSON only and within the byte limit", async () => {
    const f = createNftMetadataFetcher(options({ allowedCidrs: [] }));
    const text = JSON.stringify(DOC);
    const b64 = `data:application/json;base64,${Buffer.from(text).toString("base64")}`;
    expect(await f.fetch(b64)).toMatchObject({ state: "ok", metadata: { name: DOC.name, image: DOC.image } });
    const pct = `data:application/json,${encodeURIComponent(text)}`;
    expect(await f.fetch(pct)).toMatchObject({ state: "ok", metadata: { description: DOC.description } });
    expect(await f.fetch(`data:,${encodeURIComponent('{"name":"no media type"}')}`)).toMatchObject({
      state: "ok",
      metadata: { name: "no media type" },
    });
    expect(await f.fetch("data:text/html,<b>x</b>")).toEqual({
      state: "failed",
      error: "not JSON (media type text/html)",
    });
    expect(await f.fetch("data:application/json,%E0%A4%A")).toEqual({
      state: "failed",
      error: "malformed data: URI (bad percent-encoding)",
    });
    expect(decodeDataUri(`data:application/json,${"x".repeat(5_000)}`, 4_096)).toEqual({
      state: "failed",
      error: "too large: over 4096 bytes",
    });
  });
});

describe("the NFT metadata cache and the worker's rounds", () => {
  let pg: TestPg;
  let server: Server;
  let base: string;
  let flaky = true;
  const hits = new Map<string, number>();

  beforeAll(async () => {
    pg = await openTestPg();
    ({ server, base } = await listen((req, res) => {
      const url = req.url ?? "/";
      hits.set(url, (hits.get(url) ?? 0) + 1);
      if (url === "/flaky.json" && flaky) {
        res.writeHead(503);
        return res.end();
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name: `doc ${url}`, attributes: [{ trait_type: "k", value: "v" }] }));
    }));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await pg?.close();
  });

  it("doubles the wait after each failure, up to the longest", () => {
    const b = { baseMs: 60_000, maxMs: 300_000 };
    expect([1, 2, 3, 4, 5, 30].map((n) => retryDelayMs(n, b))).toEqual([
      60_000, 120_000, 240_000, 300_000, 300_000, 300_000,
    ]);
  });

  it("claims due URIs once, stores each outcome, retries failures with backoff and keeps ok rows", async () => {
    const config = loadConfig({
      NFT_METADATA_ALLOWED_CIDRS: "127.0.0.0/8",
      NFT_METADATA_RETRY_BASE_S: "60",
      NFT_METADATA_RETRY_MAX_S: "3600",
      NFT_METADATA_CONCURRENCY: "2",
    });
    const metrics = createMetrics();
    const worker = createNftMetadataWorker({ pg: pg.pg, config, log: quietLog, metrics });
    const repo = createNftMetadataRepo(pg.pg);
    const okUri = `${base}/ok.json`;
    const flakyUri = `${base}/flaky.json`;
    const refusedUri = "http://10.9.9.9/meta.json";
    const dataUri = `data:application/json,${encodeURIComponent('{"name":"inline"}')}`;
    await enqueueNftMetadata(pg.pg, [okUri, flakyUri, refusedUri, dataUri, okUri, null, ""]);
    // Enqueuing again keeps the rows as they are.
    await enqueueNftMetadata(pg.pg, [okUri]);
    const t0 = Date.now();
    expect(await repo.dueCount(t0)).toBe(4);

    // Two workers' claims at once take different rows (two each, the concurrency).
    const [a, b] = await Promise.all([repo.claimDue(2, t0, 60_000), repo.claimDue(2, t0, 60_000)]);
    expect(new Set([...a, ...b].map((c) => c.uri)).size).toBe(4);
    expect(await repo.dueCount(t0)).toBe(0);
    // Their lease ends: due again (a worker that died mid-fetch).
    expect(await repo.dueCount(t0 + 61_000)).toBe(4);

    expect(await worker.runOnce(t0 + 61_000)).toBe(2);
    expect(await worker.runOnce(t0 + 61_000)).toBe(2);
    expect(await worker.runOnce(t0 + 61_000)).toBe(0);
    const rows = await repo.get([okUri, flakyUri, refusedUri, dataUri]);
    expect(rows.get(okUri)).toMatchObject({
      state: "ok",
      name: `doc /ok.json`,
      attributes: [{ trait_key: "k", value_text: "v" }],
      attempts: 1,
      next_try_at: null,
      error: null,
    });
    expect(rows.get(dataUri)).toMatchObject({ state: "ok", name: "inline" });
    const failed = rows.get(flakyUri)!;
    expect(failed).toMatchObject({ state: "failed", error: "HTTP 503", attempts: 1 });
    expect(failed.next_try_at! - failed.fetched_at!).toBe(60_000);
    const refused = rows.get(refusedUri)!;
    expect(refused).toMatchObject({ state: "refused", attempts: 1 });
    expect(refused.next_try_at! - refused.fetched_at!).toBe(3_600_000);
    expect(hits.get("/flaky.json")).toBe(1);

    // The second failure waits twice as long; then the server recovers and the row is ok.
    expect(await worker.runOnce(failed.next_try_at!)).toBe(1);
    const again = (await repo.get([flakyUri])).get(flakyUri)!;
    expect(again).toMatchObject({ state: "failed", attempts: 2 });
    expect(again.next_try_at! - again.fetched_at!).toBe(120_000);
    flaky = false;
    expect(await worker.runOnce(again.next_try_at!)).toBe(1);
    expect((await repo.get([flakyUri])).get(flakyUri)).toMatchObject({
      state: "ok",
      attempts: 3,
      next_try_at: null,
      error: null,
    });

    // An ok row is never fetched again; only the refused one comes back, after the longest wait.
    expect(await worker.runOnce(t0 + 86_400_000)).toBe(1);
    expect(hits.get("/ok.json")).toBe(1);
    expect(hits.get("/flaky.json")).toBe(3);

    const counted = await metrics.registry.getSingleMetricAsString("alephium_nft_metadata_fetches_total");
    expect(counted).toContain('alephium_nft_metadata_fetches_total{outcome="ok"} 3');
    expect(counted).toContain('alephium_nft_metadata_fetches_total{outcome="failed"} 2');
    expect(counted).toContain('alephium_nft_metadata_fetches_total{outcome="refused"} 2');
  });

  it("keys a row by the SHA-256 of its URI, as the migration's backfill does", async () => {
    const uri = "data:application/json,%7B%22name%22%3A%22%C3%A9%22%7D";
    const [row] = await pg.pg.query<{ k: string }>(
      "t",
      "SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex') AS k",
      [uri],
    );
    expect(row!.k).toBe(uriKey(uri));
  });
});
