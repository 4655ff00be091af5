// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/**
 * Decorated explorer proxies against the simulated explorer: passthrough fidelity, every `ext` rule,
 * pending → decorated once events exist, parameter checks before any upstream call, and one events
 * query plus one labels query per response.
 */
import { Contract } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DevnetBlock, DevnetChain } from "../../devnet/chain.ts";
import { createDevnetChain } from "../../devnet/chain.ts";
import { type DevnetServer, startDevnetServer } from "../../devnet/server.ts";
import type { ApiEvent, EventsService } from "../../lib/events/service.ts";
import { writeEventsBatch } from "../../lib/events/writer.ts";
import { createStaticDappBook } from "../../pipeline/normalize/index.ts";
import { toEventsMessage } from "../../pipeline/processors/normalize.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

type Json = Record<string, unknown>;
type Tx = Json & { hash: string; coinbase: boolean; inputs: Json[]; outputs: Json[] };

const NORMALIZE = { dapps: createStaticDappBook([]), maxPayloadBytes: 4096 };

let seq = 0;
/** Normalizes blocks with the pipeline's pure pieces and writes their events like the events sink. */
async function writeEvents(t: TestApp, chain: DevnetChain, blocks: DevnetBlock[]): Promise<void> {
  const messages = blocks.map((b) => {
    const raw = chain.rawBlock(b.block.hash)!;
    seq += 1;
    return toEventsMessage(
      {
        kind: "block",
        chain_index: b.chainIndex,
        hash: b.block.hash,
        height: b.block.height,
        timestamp: b.block.timestamp,
        seq,
        block_json: JSON.stringify(raw.block),
        events_json: JSON.stringify(raw.events),
      },
      NORMALIZE,
    );
  });
  await writeEventsBatch({ ch: t.deps.ch!, metrics: t.deps.metrics }, messages);
}

/** Wraps the events repository to count the store queries a response makes. */
function countCalls(t: TestApp) {
  const inner = t.deps.events!;
  const calls = { byTransactions: 0, labels: 0 };
  const counted: EventsService = {
    ...inner,
    hydration: inner.hydration,
    byTransactions: (ids) => {
      calls.byTransactions += 1;
      return inner.byTransactions(ids);
    },
    labels: (addresses) => {
      calls.labels += 1;
      return inner.labels(addresses);
    },
  };
  t.deps.events = counted;
  return {
    calls,
    reset() {
      calls.byTransactions = 0;
      calls.labels = 0;
    },
    restore() {
      t.deps.events = inner;
    },
  };
}

describe("decorated explorer routes", () => {
  let chain: DevnetChain;
  let server: DevnetServer;
  let t: TestApp;
  let reserved: DevnetBlock;
  let plainBlock: DevnetBlock;
  let labelled: string;

  const direct = async (path: string) => {
    const r = await fetch(`${server.explorerUrl}${path}`);
    return { status: r.status, body: await r.text() };
  };
  const get = (url: string) => t.app.inject({ url, headers: t.auth(t.userKey) });
  const mainOf = async (txId: string): Promise<ApiEvent | undefined> =>
    (await t.deps.events!.byTransaction(txId)).find((e) => e.is_main);

  beforeAll(async () => {
    chain = createDevnetChain({ seed: 11 });
    chain.advance(240);
    server = await startDevnetServer(chain, { port: 0 });
    t = await createTestApp({ explorerUrl: server.explorerUrl, env: { PUBLIC_RPM: "1000000" } });
    const all: DevnetBlock[] = [];
    for (let c = 0; c < 16; c++) all.push(...chain.mainChain(c));
    // Blocks that issue no token (a planned one or a dapp's) and where the labelled minter does not transact.
    const minter = chain.tokens()[0]!.minter;
    const plain = (b: DevnetBlock): boolean =>
      !b.events.some((e) => e.eventIndex === Contract.ContractCreatedEventIndex) &&
      !b.block.transactions.some(
        (tx) =>
          tx.unsigned.fixedOutputs.some((o) => o.address === minter) ||
          tx.generatedOutputs.some((o) => o.address === minter) ||
          tx.unsigned.inputs.some((i) => chain.getOutput(i.outputRef.key)?.address === minter),
      );
    // A block with user transactions whose events are written only by the pending test.
    const busy = all.filter((b) => b.block.height > 2 && b.block.transactions.length >= 3);
    reserved = busy.find(plain)!;
    plainBlock = busy.find((b) => b !== reserved && plain(b))!;
    expect(reserved).toBeDefined();
    await writeEvents(
      t,
      chain,
      all.filter((b) => b !== reserved),
    );
    const token = chain.tokens()[0]!;
    labelled = token.minter;
    await t.deps.pg!.query(
      "t_labels",
      `INSERT INTO address_labels (address, source, label, mapped_label, icon) VALUES
         ($1, 'test', 'Minter', 'minter', NULL), ($2, 'test', 'Token contract', 'token', 'https://x.example/i.png')`,
      [token.minter, token.address],
    );
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it("passes the explorer transaction through byte for byte and adds ext", async () => {
    const token = chain.tokens()[0]!;
    const upstream = await direct(`/transactions/${token.mintTxId}`);
    expect(upstream.status).toBe(200);
    const r = await get(`/transaction/${token.mintTxId.toUpperCase()}`);
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toContain("application/json");
    // Every explorer byte first, in the explorer's order, then `ext`.
    expect(r.body.startsWith(`${upstream.body.slice(0, -1)},"ext":`)).toBe(true);
    const { ext, ...rest } = r.json() as Json & { ext: Json };
    expect(rest).toEqual(JSON.parse(upstream.body));
    expect(rest.type).toBe("Accepted");

    const events = (await get(`/transaction/${token.mintTxId}/events`)).json().events as ApiEvent[];
    expect(events.length).toBeGreaterThan(0);
    expect(ext.events).toEqual(events);
    expect(ext.meta).toEqual({ payload_chunk_hydration_enabled: true });
    const labels = ext.address_labels as Record<string, Json>;
    expect(labels[token.minter]).toEqual({ label: "Minter", mapped_label: "minter", source: "test" });
    // The token contract is labelled through the main event (genesis mint) only.
    expect(labels[token.address]).toMatchObject({ label: "Token contract", icon: "https://x.example/i.png" });
  });

  it("omits address_labels on a transaction when none of its addresses has a label", async () => {
    const tx = plainBlock.block.transactions.find(
      (x) => !JSON.stringify(x).includes(labelled) && !JSON.stringify(x).includes(chain.tokens()[0]!.address),
    )!;
    const r = await get(`/transaction/${tx.unsigned.txId}`);
    expect(r.statusCode).toBe(200);
    const ext = r.json().ext as Json;
    expect(ext).toHaveProperty("events");
    expect(ext).not.toHaveProperty("address_labels");
  });

  it("decorates a block with its genesis mints and coinbases", async () => {
    const token = chain.tokens()[0]!;
    const upstream = await direct(`/blocks/${token.mintBlockHash}`);
    const r = await get(`/block/${token.mintBlockHash}`);
    expect(r.statusCode).toBe(200);
    expect(r.body.startsWith(`${upstream.body.slice(0, -1)},"ext":`)).toBe(true);
    const { ext, ...rest } = r.json() as Json & { ext: { genesis_mints: ApiEvent[]; coinbases: ApiEvent[] } };
    expect(rest).toEqual(JSON.parse(upstream.body));
    const mints = ext.genesis_mints;
    expect(mints.map((e) => e.tx_id)).toContain(token.mintTxId);
    for (const e of mints)
      expect([e.category, e.sub_kind, e.is_main]).toEqual(["token", "genesis_mint", true]);
    const coinbaseTx = chain.getBlock(token.mintBlockHash)!.block.transactions.at(-1)!;
    expect(ext.coinbases.map((e) => e.tx_id)).toEqual([coinbaseTx.unsigned.txId]);
    expect(ext.coinbases[0]).toMatchObject({ is_main: true, category: "mining" });
  });

  it("sets genesis_mints null on a block without one, and both null when no main event applies", async () => {
    const plain = (await get(`/block/${plainBlock.block.hash}`)).json().ext;
    expect(plain.genesis_mints).toBeNull();
    expect(plain.coinbases).toHaveLength(1);
    const pending = await get(`/block/${reserved.block.hash}`);
    expect(pending.statusCode).toBe(200);
    expect(pending.json().ext).toEqual({ genesis_mints: null, coinbases: null });
  });

  it("marks list items pending until the pipeline wrote their events, then carries the main event", async () => {
    const url = `/block/${reserved.block.hash}/transactions?limit=100`;
    const before = await get(url);
    expect(before.statusCode).toBe(200);
    const items = before.json() as Tx[];
    expect(items).toHaveLength(reserved.block.transactions.length);
    for (const item of items) expect(item.ext).toEqual({ main_event_pending: true });

    await writeEvents(t, chain, [reserved]);
    const after = (await get(url)).json() as (Tx & { ext: Json })[];
    for (const item of after) {
      const main = (await mainOf(item.hash))!;
      expect(item.ext).toMatchObject({
        main_event_pending: false,
        dapp_id: main.dapp_id,
        category: main.category,
        sub_kind: main.sub_kind,
        type: main.type,
      });
    }
    expect(after.at(-1)!.coinbase).toBe(true);
    expect(after.at(-1)!.ext.category).toBe("mining");
    // Now decorated: the block's coinbase is there.
    expect((await get(`/block/${reserved.block.hash}`)).json().ext.coinbases).toHaveLength(1);
  });

  it("passes block transaction pages through with the explorer's page and limit", async () => {
    const hash = plainBlock.block.hash;
    const upstream = JSON.parse((await direct(`/blocks/${hash}/transactions?page=2&limit=1`)).body) as Json[];
    const r = await get(`/block/${hash}/transactions?page=2&limit=1`);
    expect(r.statusCode).toBe(200);
    const items = r.json() as Json[];
    expect(items.map(({ ext: _e, ...rest }) => rest)).toEqual(upstream);
    expect(JSON.stringify(items.map(({ ext: _e, ...rest }) => rest))).toBe(JSON.stringify(upstream));
    // Defaults: page 1, limit 20.
    const all = JSON.parse((await direct(`/blocks/${hash}/transactions`)).body) as Json[];
    expect(((await get(`/block/${hash}/transactions`)).json() as Json[]).length).toBe(all.length);
  });

  it("decorates address, address-token and token lists with labels for the page's addresses", async () => {
    const token = chain.tokens()[0]!;
    const cases = [
      [
        `/addresses/${token.minter}/transactions?limit=30`,
        `/addresses/${token.minter}/transactions?limit=30`,
      ],
      [
        `/addresses/${token.minter}/tokens/${token.id}/transactions`,
        `/addresses/${token.minter}/tokens/${token.id}/transactions`,
      ],
      [`/token/${token.id}/transactions?page=1&limit=5`, `/tokens/${token.id}/transactions?page=1&limit=5`],
    ] as const;
    for (const [ours, theirs] of cases) {
      const upstream = JSON.parse((await direct(theirs)).body) as Tx[];
      expect(upstream.length, theirs).toBeGreaterThan(0);
      const r = await get(ours);
      expect(r.statusCode, ours).toBe(200);
      const items = r.json() as (Tx & { ext: Json })[];
      expect(JSON.stringify(items.map(({ ext: _e, ...rest }) => rest))).toBe(JSON.stringify(upstream));
      for (const item of items) {
        const main = await mainOf(item.hash);
        expect(item.ext.main_event_pending, ours).toBe(!main);
        if (main) expect(item.ext).toMatchObject({ dapp_id: main.dapp_id, category: main.category });
        // The minter is on every one of its own transactions.
        if (ours.startsWith("/addresses/"))
          expect((item.ext.address_labels as Json)[token.minter]).toMatchObject({ label: "Minter" });
      }
    }
    // The mint itself is in the token's list with its genesis mint as the main event.
    const tokenTxs = (await get(`/token/${token.id}/transactions?limit=100`)).json() as (Tx & {
      ext: Json;
    })[];
    const mint = tokenTxs.find((x) => x.hash === token.mintTxId)!;
    expect(mint.ext).toMatchObject({
      main_event_pending: false,
      category: "token",
      sub_kind: "genesis_mint",
    });
  });

  it("makes one events query and one labels query per response", async () => {
    const counter = countCalls(t);
    try {
      const token = chain.tokens()[0]!;
      const lists = [
        `/block/${plainBlock.block.hash}/transactions`,
        `/addresses/${token.minter}/transactions?limit=100`,
        `/addresses/${token.minter}/tokens/${token.id}/transactions?limit=100`,
        `/token/${token.id}/transactions?limit=100`,
      ];
      for (const url of lists) {
        counter.reset();
        const r = await get(url);
        expect(r.statusCode, url).toBe(200);
        expect((r.json() as Json[]).length, url).toBeGreaterThan(1);
        expect(counter.calls, url).toEqual({ byTransactions: 1, labels: 1 });
      }
      counter.reset();
      expect((await get(`/transaction/${token.mintTxId}`)).statusCode).toBe(200);
      expect(counter.calls).toEqual({ byTransactions: 1, labels: 1 });
      counter.reset();
      expect((await get(`/block/${token.mintBlockHash}`)).statusCode).toBe(200);
      expect(counter.calls).toEqual({ byTransactions: 1, labels: 0 });
    } finally {
      counter.restore();
    }
  });

  it("answers 400 for bad parameters without calling the explorer", async () => {
    const token = chain.tokens()[0]!;
    const user = token.minter;
    const bad = [
      "/transaction/xyz",
      `/transaction/${"a".repeat(63)}`,
      `/transaction/${"g".repeat(64)}`,
      "/block/1234",
      `/block/${"a".repeat(65)}`,
      `/block/${"zz".repeat(32)}/transactions`,
      `/block/${plainBlock.block.hash}/transactions?limit=0`,
      `/block/${plainBlock.block.hash}/transactions?limit=101`,
      `/block/${plainBlock.block.hash}/transactions?page=0`,
      `/block/${plainBlock.block.hash}/transactions?page=x`,
      "/addresses/0OIl0OIl0OIl0OIl0OIl0OIl/transactions",
      "/addresses/short/transactions",
      `/addresses/${user}:4/transactions`,
      `/addresses/${"1".repeat(99)}/transactions`,
      `/addresses/${user}/transactions?limit=500`,
      `/addresses/${user}/tokens/abc/transactions`,
      `/addresses/0OIl/tokens/${token.id}/transactions`,
      "/token/not-a-token/transactions",
      `/token/${token.id}/transactions?page=-1`,
    ];
    server.resetRequestCounts();
    for (const url of bad) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(400);
      expect(r.headers["content-type"]).toContain("application/problem+json");
      expect(r.json().code, url).toBe("validation_failed");
    }
    // Past the address pattern's length: 400; past the router's maxParamLength (256): 414.
    expect((await get(`/addresses/${"1".repeat(101)}/transactions`)).statusCode).toBe(400);
    expect((await get(`/addresses/${"1".repeat(257)}/transactions`)).statusCode).toBe(414);
    expect(server.requestCount("/explorer")).toBe(0);
    // A groupless address suffix is accepted.
    expect((await get(`/addresses/${user}:1/transactions`)).statusCode).toBe(200);
  });

  it("answers 401 without a key, before any upstream call", async () => {
    const token = chain.tokens()[0]!;
    server.resetRequestCounts();
    for (const url of [
      `/transaction/${token.mintTxId}`,
      `/block/${token.mintBlockHash}`,
      `/block/${token.mintBlockHash}/transactions`,
      `/addresses/${token.minter}/transactions`,
      `/addresses/${token.minter}/tokens/${token.id}/transactions`,
      `/token/${token.id}/transactions`,
    ]) {
      const r = await t.app.inject({ url });
      expect(r.statusCode, url).toBe(401);
      expect(r.json().code).toBe("missing_api_key");
    }
    expect(server.requestCount("/explorer")).toBe(0);
  });

  it("passes the explorer's 404 through with its detail", async () => {
    const missing = "ef".repeat(32);
    for (const [ours, theirs] of [
      [`/transaction/${missing}`, `/transactions/${missing}`],
      [`/block/${missing}`, `/blocks/${missing}`],
      [`/block/${missing}/transactions`, `/blocks/${missing}/transactions`],
    ] as const) {
      const upstream = JSON.parse((await direct(theirs)).body) as { detail: string; resource: string };
      const r = await get(ours);
      expect(r.statusCode, ours).toBe(404);
      expect(r.headers["content-type"]).toContain("application/problem+json");
      expect(r.json()).toMatchObject({
        status: 404,
        code: "not_found",
        detail: upstream.detail,
        details: { resource: upstream.resource },
      });
    }
  });

  it("returns empty lists as []", async () => {
    const nobody = chain.addresses().find((a) => a.group === 0)!.address;
    const unknownToken = "cd".repeat(32);
    const r = await get(`/addresses/${nobody}/tokens/${unknownToken}/transactions`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual([]);
  });
});

describe("decorated explorer routes with DECORATION_KEY=alphscan (the AlphScan frontend's name)", () => {
  let chain: DevnetChain;
  let server: DevnetServer;
  let t: TestApp;

  const get = (url: string) => t.app.inject({ url, headers: t.auth(t.userKey) });

  beforeAll(async () => {
    chain = createDevnetChain({ seed: 11 });
    chain.advance(120);
    server = await startDevnetServer(chain, { port: 0 });
    t = await createTestApp({ explorerUrl: server.explorerUrl, env: { DECORATION_KEY: "alphscan" } });
    const all: DevnetBlock[] = [];
    for (let c = 0; c < 16; c++) all.push(...chain.mainChain(c));
    await writeEvents(t, chain, all);
    const token = chain.tokens()[0]!;
    await t.deps.pg!.query(
      "t_labels",
      "INSERT INTO address_labels (address, source, label, mapped_label) VALUES ($1, 'test', 'Minter', 'minter')",
      [token.minter],
    );
  });
  afterAll(async () => {
    await t?.close();
    await server?.close();
  });

  it("writes the transaction's decoration under alphscan, with the fields the client reads", async () => {
    const token = chain.tokens()[0]!;
    const tx = (await get(`/transaction/${token.mintTxId}`)).json() as Json;
    expect(tx).not.toHaveProperty("ext");
    const deco = tx.alphscan as { events: ApiEvent[]; meta: Json; address_labels: Record<string, Json> };
    expect(deco.events.length).toBeGreaterThan(0);
    expect(deco.meta).toEqual({ payload_chunk_hydration_enabled: true });
    expect(deco.address_labels[token.minter]).toMatchObject({ label: "Minter" });
  });

  it("writes the block's genesis_mints and coinbases under alphscan", async () => {
    const token = chain.tokens()[0]!;
    const block = (await get(`/block/${token.mintBlockHash}`)).json() as Json;
    expect(block).not.toHaveProperty("ext");
    const deco = block.alphscan as { genesis_mints: ApiEvent[]; coinbases: ApiEvent[] };
    expect(deco.genesis_mints.map((e) => e.tx_id)).toContain(token.mintTxId);
    expect(deco.coinbases).toHaveLength(1);
  });

  it("writes every list item's decoration under alphscan (block, address, address-token and token lists)", async () => {
    const token = chain.tokens()[0]!;
    for (const url of [
      `/block/${token.mintBlockHash}/transactions`,
      `/addresses/${token.minter}/transactions?page=1&limit=10`,
      `/addresses/${token.minter}/tokens/${token.id}/transactions`,
      `/token/${token.id}/transactions`,
    ]) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(200);
      const items = r.json() as Json[];
      expect(items.length, url).toBeGreaterThan(0);
      for (const item of items) {
        expect(item, url).not.toHaveProperty("ext");
        const deco = item.alphscan as Json;
        expect(typeof deco.main_event_pending, url).toBe("boolean");
        if (deco.main_event_pending) continue;
        for (const field of ["dapp_id", "category", "sub_kind", "type"])
          expect(typeof deco[field], url).toBe("string");
      }
      expect(
        items.some((item) => (item.alphscan as Json).main_event_pending === false),
        url,
      ).toBe(true);
    }
    const byMinter = (await get(`/addresses/${token.minter}/transactions`)).json() as Json[];
    const labels = byMinter.map(
      (item) => (item.alphscan as { address_labels?: Record<string, Json> }).address_labels,
    );
    expect(labels.some((l) => l?.[token.minter]?.label === "Minter")).toBe(true);
  });

  it("names alphscan in the OpenAPI document's response schemas, and ext nowhere", async () => {
    const doc = (await t.app.inject({ url: "/openapi.json" })).json() as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, { content: Record<string, { schema: Json }> }> }>
      >;
    };
    const schemaOf = (path: string) =>
      doc.paths[path]!.get!.responses["200"]!.content["application/json"]!.schema;
    type Obj = { properties: Record<string, unknown>; description: string };
    for (const path of ["/transaction/{transaction_id}", "/block/{block_hash}"]) {
      const schema = schemaOf(path) as Obj;
      expect(Object.keys(schema.properties), path).toContain("alphscan");
      expect(Object.keys(schema.properties), path).not.toContain("ext");
      expect(schema.description, path).toContain("`alphscan`");
    }
    for (const path of [
      "/block/{block_hash}/transactions",
      "/addresses/{address}/transactions",
      "/addresses/{address}/tokens/{tokenid}/transactions",
      "/token/{tokenid}/transactions",
    ]) {
      const items = (schemaOf(path) as { items: Obj }).items;
      expect(Object.keys(items.properties), path).toContain("alphscan");
      expect(Object.keys(items.properties), path).not.toContain("ext");
    }
    expect(JSON.stringify(doc)).not.toMatch(/"ext"|`ext`/);
  });
});
