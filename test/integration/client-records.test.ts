// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/**
 * The AlphScan explorer's simpler records (issue 44, ../shared ALPHSCAN-CLIENT.md calls 5, 8 and 10) on the demo's
 * data: `GET /addresses/{address}/labels` with every field of a label row, `GET /dapps/{dappid}` (`name`,
 * `short_name`, `icon`) and `GET /chain/all?pageSize=-1` (`items[]` with `id`, `avatar_url`, `icon`,
 * `wormhole_id`), each with its 404 and 400 answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { DEVNET_LABEL_SOURCE, labelDevnetContracts } from "../../devnet/labels.ts";
import { DEVNET_DAPP, registerDevnetDapps } from "../../devnet/register.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

type Reply = Awaited<ReturnType<TestApp["app"]["inject"]>>;
type Json = Record<string, unknown>;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A label row with every field the client reads, each of its type. */
function expectLabelRow(row: Json) {
  expect(row).toEqual({
    address: expect.any(String),
    label: expect.any(String),
    source: expect.any(String),
    mapped_label: expect.any(String),
    icon: row.icon === null ? null : expect.any(String),
    icon_hash: row.icon_hash === null ? null : expect.any(String),
    priority: expect.any(Number),
    display_order: row.priority,
    created_at: expect.stringMatching(ISO),
    updated_at: expect.stringMatching(ISO),
    metadata: {
      type: expect.toBeOneOf([null, expect.any(String)]),
      name: expect.toBeOneOf([null, expect.any(String)]),
      state: expect.toBeOneOf([null, expect.any(String)]),
      dapp: expect.toBeOneOf([null, expect.any(String)]),
      dapp_id: expect.toBeOneOf([null, expect.any(String)]),
      dapp_name: expect.toBeOneOf([null, expect.any(String)]),
      dapp_icon: expect.toBeOneOf([null, expect.any(String)]),
    },
  });
  expect(Number.isInteger(row.display_order)).toBe(true);
}

function expectProblem(r: Reply, status: number, code: string, field?: string) {
  expect(r.statusCode, r.body).toBe(status);
  expect(r.headers["content-type"]).toContain("application/problem+json");
  const body = r.json();
  expect(body).toMatchObject({ status, code });
  if (field) expect(body.detail).toContain(field);
  return body as Json;
}

describe("the explorer client's labels, dapp and chain records", () => {
  let t: TestApp;
  let chain: DevnetChain;
  const admin = () => t.auth(t.adminKey);
  const get = (url: string) => t.app.inject({ url });

  beforeAll(async () => {
    t = await createTestApp();
    // What `start --devnet` registers before the first block.
    chain = createDevnetChain({ seed: 31 });
    await registerDevnetDapps(t.deps.pg!, chain);
    await labelDevnetContracts(t.deps.pg!, chain);
  });
  afterAll(async () => t?.close());

  describe("GET /addresses/{address}/labels", () => {
    it("answers the demo's label of its DEX factory with every field, the dapp read from /dapps", async () => {
      const factory = chain.plan().factory!.address;
      const res = await get(`/addresses/${factory}/labels`);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.address).toBe(factory);
      expect(body.labels).toHaveLength(1);
      const [row] = body.labels as Json[];
      expectLabelRow(row!);
      expect(row).toMatchObject({
        address: factory,
        label: "Devnet DEX: factory",
        source: DEVNET_LABEL_SOURCE,
        icon: null,
        icon_hash: null,
        metadata: {
          type: "contract",
          name: "DEX factory",
          state: "active",
          dapp: DEVNET_DAPP,
          dapp_id: DEVNET_DAPP,
          dapp_name: "Devnet DEX",
          dapp_icon: null,
        },
      });
      // The demo labels every planned pool, the oracle and its feeder too.
      for (const pool of chain.plan().pools) {
        const labels = (await get(`/addresses/${pool.address}/labels`)).json().labels as Json[];
        expect(labels.map((l) => l.label)).toEqual([expect.stringMatching(/^Devnet DEX: \S+\/\S+$/)]);
      }
      const feeder = (await get(`/addresses/${chain.plan().oracle.feeder}/labels`)).json().labels as Json[];
      expect(feeder[0]).toMatchObject({ metadata: { type: "address", dapp: null, dapp_name: null } });
    });

    it("lists stored labels in display order, then the registered token's symbol", async () => {
      const [token] = await t.deps.pg!.query<{ contract_address: string; symbol: string; name: string }>(
        "t",
        `SELECT contract_address, symbol, COALESCE(name, symbol) AS name FROM tokens
         WHERE registered AND NOT deleted AND symbol IS NOT NULL ORDER BY contract_address LIMIT 1`,
      );
      expect(token, "the official token list seeds registered tokens").toBeDefined();
      const added = await t.app.inject({
        method: "POST",
        url: "/addresses/labels/add",
        headers: admin(),
        payload: {
          address: token!.contract_address,
          label: "Listed token",
          source: "explorer",
          priority: 5,
          icon: "https://example.org/icon.png",
          icon_hash: "f00d",
          metadata: { type: "token", name: "A token", state: "verified", dapp_id: DEVNET_DAPP },
        },
      });
      expect(added.statusCode, added.body).toBe(200);
      expectLabelRow(added.json().label);

      const labels = (await get(`/addresses/${token!.contract_address}/labels`)).json().labels as Json[];
      expect(labels.map((l) => [l.source, l.display_order])).toEqual([
        ["explorer", 5],
        ["token_registry", 1000],
      ]);
      for (const l of labels) expectLabelRow(l);
      expect(labels[0]).toMatchObject({
        icon: "https://example.org/icon.png",
        icon_hash: "f00d",
        metadata: {
          type: "token",
          name: "A token",
          state: "verified",
          dapp: DEVNET_DAPP,
          dapp_name: "Devnet DEX",
        },
      });
      expect(labels[1]).toMatchObject({
        label: token!.symbol,
        mapped_label: token!.name,
        metadata: { type: "token", name: token!.name },
      });
      // The list route serves the same rows.
      const listed = (await get(`/addresses/labels?address=${token!.contract_address}`)).json()
        .labels as Json[];
      expect(listed).toEqual([labels[0]]);
    });

    it("answers an empty list for an address without labels", async () => {
      const res = await get("/addresses/1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH/labels");
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ address: "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH", labels: [] });
    });

    it.each([
      ["/addresses/%00/labels", "address"],
      ["/addresses/1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrq%00/labels", "address"],
      ["/addresses/0OIl0OIl0OIl0OIl0OIl0OIl/labels", "address"],
    ])("GET %s → 400 naming %s", async (url, field) => {
      expectProblem(await get(url), 400, "validation_failed", field);
    });

    it("refuses metadata fields it does not store", async () => {
      const res = await t.app.inject({
        method: "POST",
        url: "/addresses/labels/add",
        headers: admin(),
        payload: {
          address: "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH",
          label: "x",
          metadata: { dapp_name: "read from the dapp" },
        },
      });
      expectProblem(res, 400, "validation_failed", "dapp_name");
    });
  });

  describe("GET /dapps/{dappid}", () => {
    it("answers the demo's DEX with name, short_name and icon beside the list's fields", async () => {
      const res = await get(`/dapps/${DEVNET_DAPP}`);
      expect(res.statusCode, res.body).toBe(200);
      const { dapp } = res.json();
      expect(dapp).toMatchObject({
        id: DEVNET_DAPP,
        name: "Devnet DEX",
        short_name: "Devnet DEX",
        icon: null,
      });
      expect(dapp.icon).toBe(dapp.logo);
      const listed = (await get("/dapps/all")).json().dapps as Json[];
      expect(listed.find((d) => d.id === DEVNET_DAPP)).toEqual(dapp);
    });

    it("serves a short name and an icon an admin sets", async () => {
      const res = await t.app.inject({
        method: "POST",
        url: `/dapps/${DEVNET_DAPP}/update`,
        headers: admin(),
        payload: { short_name: "DEX", logo: "https://example.org/dex.png" },
      });
      expect(res.statusCode, res.body).toBe(200);
      const { dapp } = (await get(`/dapps/${DEVNET_DAPP}`)).json();
      expect(dapp).toMatchObject({
        name: "Devnet DEX",
        short_name: "DEX",
        icon: "https://example.org/dex.png",
      });
      expect(typeof dapp.short_name).toBe("string");
    });

    it("answers 404 with the one Problem shape for an unknown or deleted id", async () => {
      const unknown = expectProblem(await get("/dapps/no-such-dapp"), 404, "not_found");
      expect(unknown.detail).toContain("not found");
      expect(unknown.detail).toContain("no-such-dapp");

      await t.app.inject({
        method: "POST",
        url: "/dapps/add",
        headers: admin(),
        payload: { id: "gone", name: "Gone" },
      });
      const del = await t.app.inject({ method: "POST", url: "/dapps/gone/del", headers: admin() });
      expect(del.statusCode, del.body).toBe(200);
      expect((await get("/dapps/gone")).statusCode).toBe(404);
    });

    it.each([
      ["/dapps/a%00b", "dappid"],
      ["/dapps/NOT_LOWER", "dappid"],
      [`/dapps/${"a".repeat(65)}`, "dappid"],
    ])("GET %s → 400 naming %s", async (url, field) => {
      expectProblem(await get(url), 400, "validation_failed", field);
    });
  });

  describe("GET /chain/all", () => {
    it("answers every chain with the client's fields beside ours for ?pageSize=-1", async () => {
      const res = await get("/chain/all?pageSize=-1");
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ total: 3, page: 1, pageSize: -1 });
      expect(body.chains).toEqual(body.items);
      const items = body.items as Json[];
      expect(items.map((c) => [c.id, c.short_name, c.wormhole_id])).toEqual([
        [8738, "alph", 13],
        [1, "eth", 2],
        [56, "bsc", 4],
      ]);
      for (const c of items) {
        expect(c).toEqual({
          id: expect.any(Number),
          name: expect.any(String),
          short_name: expect.any(String),
          icon: expect.stringMatching(/^https:\/\//),
          avatar_url: c.icon,
          wormhole_id: expect.any(Number),
        });
        expect(Number.isInteger(c.id) && Number.isInteger(c.wormhole_id)).toBe(true);
      }
      // Without pageSize: every chain too (as before pageSize existed).
      expect((await get("/chain/all")).json().items).toEqual(items);
    });

    it("pages with page and pageSize", async () => {
      const body = (await get("/chain/all?page=2&pageSize=1")).json();
      expect(body).toMatchObject({ total: 3, page: 2, pageSize: 1 });
      expect(body.items.map((c: Json) => c.short_name)).toEqual(["eth"]);
      expect((await get("/chain/all?page=9&pageSize=2")).json().items).toEqual([]);
    });

    it("keeps /token/filter-options' chains to id, name and short_name", async () => {
      const chains = (await get("/token/filter-options")).json().chains as Json[];
      expect(Object.keys(chains[0]!).sort()).toEqual(["id", "name", "short_name"]);
    });

    it.each([
      ["/chain/all?pageSize=0", "pageSize"],
      ["/chain/all?pageSize=1000", "pageSize"],
      ["/chain/all?pageSize=-2", "pageSize"],
      ["/chain/all?pageSize=1e309", "pageSize"],
      ["/chain/all?page=99999999999999999999", "page"],
      ["/chain/all?page=0", "page"],
      ["/chain/all?page=%00", "page"],
    ])("GET %s → 400 naming %s", async (url, field) => {
      const r = await get(url);
      expect(r.statusCode, r.body).toBe(400);
      expect(r.headers["content-type"]).toContain("application/problem+json");
      expect(r.json().detail).toContain(field);
    });
  });
});
