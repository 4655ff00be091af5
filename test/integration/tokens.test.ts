// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryRepo, type RegistryRepo } from "../../lib/tokens/repo.ts";
import { contractAddressOf } from "../../lib/tokens/repo-shared.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";

const AYIN = "1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800";
const AYIN_ADDRESS = "vT49PY8ksoUL6NcXiZ1t2wAmC7tTPRfFfER8n3UCLvXy";
const USDT_ETH = "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00";
const LISTED = 225; // tokens of @alephium/token-list 0.0.21 mainnet (ALPH included)
// Three chain-discovered tokens with controlled values; "zqxvwk" in their names marks them.
const T1 = "f1".repeat(32);
const T2 = "f2".repeat(32);
const T3 = "f3".repeat(32);

interface ListBody {
  networkId: number;
  tokens: { id: string; symbol: string | null; categories: string[] }[];
  total: number;
  page: number;
  pageSize: number;
}

describe("token routes", () => {
  let t: TestApp;
  let repo: RegistryRepo;
  const list = async (query: string) => {
    const res = await t.app.inject({ url: `/token/all${query}` });
    return { status: res.statusCode, body: res.json() as ListBody };
  };
  const ids = async (query: string) => (await list(query)).body.tokens.map((x) => x.id);
  const update = (tokenid: string, payload: object, key = t.adminKey) =>
    t.app.inject({ method: "POST", url: `/token/${tokenid}/update`, headers: t.auth(key), payload });
  const details = (tokenid: string) => t.app.inject({ url: `/token/${tokenid}/details` });

  beforeAll(async () => {
    t = await createTestApp();
    repo = createRegistryRepo(t.deps.pg!);
    await repo.upsertDiscoveredToken({
      id: T1,
      minter: "m1",
      mintTx: "a1",
      mintTime: 1000,
      symbol: "QQA",
      name: "Zqxvwk Alpha",
    });
    await repo.upsertDiscoveredToken({
      id: T2,
      minter: "m2",
      mintTx: "a2",
      mintTime: 3000,
      symbol: "qqb",
      name: "Zqxvwk Beta",
    });
    await repo.upsertDiscoveredToken({
      id: T3,
      minter: "m3",
      mintTx: "a3",
      mintTime: 2000,
      symbol: "QQC",
      name: "Zqxvwk Gamma",
    });
    const pg = t.deps.pg!;
    await pg.query("t1", "UPDATE tokens SET circulating_supply_usd = 50, moderation = 'hide' WHERE id = $1", [
      T1,
    ]);
    await pg.query(
      "t2",
      "UPDATE tokens SET circulating_supply_usd = 10, market_display = false, chain_id = 1 WHERE id = $1",
      [T2],
    );
    await pg.query("t3", "UPDATE tokens SET dapp = 'ayin' WHERE id = $1", [T3]);
  });
  afterAll(async () => t?.close());

  describe("GET /token/all", () => {
    it("serves page 1 of 20 by symbol by default, with the total", async () => {
      const { status, body } = await list("");
      expect(status).toBe(200);
      expect(body).toMatchObject({ networkId: 0, total: LISTED + 3, page: 1, pageSize: 20 });
      expect(body.tokens).toHaveLength(20);
      const symbols = body.tokens.map((x) => (x.symbol ?? "").toLowerCase());
      expect(symbols).toEqual([...symbols].sort());
    });

    it("pageSize -1 returns all, 999 is the maximum, 0 and 1000 are rejected", async () => {
      expect((await list("?pageSize=-1")).body.tokens).toHaveLength(LISTED + 3);
      expect((await list("?pageSize=-1")).body.pageSize).toBe(-1);
      expect((await list("?pageSize=999")).body.tokens).toHaveLength(LISTED + 3);
      expect((await list("?pageSize=1000")).status).toBe(400);
      expect((await list("?pageSize=0")).status).toBe(400);
      expect((await list("?pageSize=-2")).status).toBe(400);
      expect((await list("?page=0")).status).toBe(400);
    });

    it("pages partition the full list without overlap", async () => {
      const all = await ids("?pageSize=-1");
      const pages = [
        await ids("?page=1&pageSize=100"),
        await ids("?page=2&pageSize=100"),
        await ids("?page=3&pageSize=100"),
      ];
      expect(pages.map((p) => p.length)).toEqual([100, 100, LISTED + 3 - 200]);
      expect(pages.flat()).toEqual(all);
      const beyond = await list("?page=9&pageSize=100");
      expect(beyond.body.tokens).toEqual([]);
      expect(beyond.body.total).toBe(LISTED + 3);
    });

    it("searches id, contract address, symbol, on-chain symbol and name case-insensitively", async () => {
      expect((await ids("?search=zqxvwk")).sort()).toEqual([T1, T2, T3]);
      expect(await ids("?search=ZQXVWK%20b")).toEqual([T2]);
      expect(await ids(`?search=${T2.slice(10, 30).toUpperCase()}`)).toEqual([T2]);
      const address = contractAddressOf(T1);
      expect(await ids(`?search=${address.slice(5, 25).toLowerCase()}`)).toContain(T1);
      expect(await ids("?search=1a281053ba8601a6")).toEqual([AYIN]);
      // OGALF's on-chain symbol is ALF: a search by the on-chain symbol finds it.
      const ogalf = await list("?search=alf&pageSize=-1");
      expect(ogalf.body.tokens.map((x) => x.symbol)).toContain("OGALF");
      expect((await list("?search=%25")).body.total).toBe(0);
      expect((await list("?search=_")).body.total).toBe(0);
      expect((await list("?search=")).body.total).toBe(LISTED + 3);
    });

    it("accepts a 200-character search and rejects 201", async () => {
      const ok = await list(`?search=${"z".repeat(200)}`);
      expect(ok.status).toBe(200);
      expect(ok.body.total).toBe(0);
      expect((await list(`?search=${"z".repeat(201)}`)).status).toBe(400);
    });

    it("filters by each filter alone", async () => {
      expect(await ids("?registered=false")).toEqual([T1, T2, T3]);
      expect((await list("?registered=true")).body.total).toBe(LISTED);
      expect(await ids("?moderation=hide")).toEqual([T1]);
      expect((await list("?moderation=show")).body.total).toBe(LISTED + 2);
      expect(await ids("?market_display=false")).toEqual([T2]);
      expect(await ids("?chain=1")).toEqual([T2]);
      expect((await list("?chain=8738")).body.total).toBe(LISTED + 2);
      const ayin = (await list("?dapps=ayin")).body.tokens.map((x) => x.symbol);
      expect(ayin).toEqual(["AYIN", "QQC", "XAYIN"]);
      expect((await list("?dapps=ayin,elexium")).body.tokens.map((x) => x.symbol)).toEqual([
        "AYIN",
        "EX",
        "QQC",
        "XAYIN",
      ]);
      const bridged = await list("?category=bridged");
      expect(bridged.body.total).toBe(8);
      for (const token of bridged.body.tokens) expect(token.categories).toContain("bridged");
      expect((await list("?category=nope")).body.total).toBe(0);
    });

    it("combines filters", async () => {
      expect(await ids("?registered=false&dapps=ayin")).toEqual([T3]);
      expect(await ids("?search=zqxvwk&moderation=show")).toEqual([T2, T3]);
      expect(await ids("?search=zqxvwk&moderation=show&market_display=true")).toEqual([T3]);
      expect((await list("?category=stablecoin&search=usdt")).body.tokens.map((x) => x.symbol)).toEqual([
        "USDTbsc",
        "USDTeth",
      ]);
    });

    it("sorts by symbol, circulating_supply_usd and mint_time, both orders, nulls last", async () => {
      expect(await ids("?search=zqxvwk")).toEqual([T1, T2, T3]);
      expect(await ids("?search=zqxvwk&order=desc")).toEqual([T3, T2, T1]);
      expect(await ids("?search=zqxvwk&sort=circulating_supply_usd")).toEqual([T2, T1, T3]);
      expect(await ids("?search=zqxvwk&sort=circulating_supply_usd&order=desc")).toEqual([T1, T2, T3]);
      expect(await ids("?search=zqxvwk&sort=mint_time")).toEqual([T1, T3, T2]);
      expect(await ids("?search=zqxvwk&sort=mint_time&order=desc")).toEqual([T2, T3, T1]);
      expect((await list("?sort=name")).status).toBe(400);
      expect((await list("?order=up")).status).toBe(400);
      expect((await list("?moderation=maybe")).status).toBe(400);
    });
  });

  it("GET /token/filter-options lists chains, token dapps and active categories", async () => {
    const res = await t.app.inject({ url: "/token/filter-options" });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.chains).toEqual([
      { id: 8738, name: "Alephium", short_name: "alph" },
      { id: 1, name: "Ethereum", short_name: "eth" },
      { id: 56, name: "BNB Smart Chain", short_name: "bsc" },
    ]);
    expect(body.dapps).toEqual(["alphbanx", "ayin", "elexium", "myonion", "wormhole"]);
    expect(body.categories[0]).toEqual({ id: "stablecoin", sort_order: 10 });
    expect(body.categories.map((c: { id: string }) => c.id)).toContain("bridged");
  });

  describe("GET /token/{tokenid}/details", () => {
    it("finds a token by id (any case) or by contract address", async () => {
      for (const key of [AYIN, AYIN.toUpperCase(), AYIN_ADDRESS]) {
        const res = await details(key);
        expect(res.statusCode).toBe(200);
        expect(res.json().token).toMatchObject({
          id: AYIN,
          contractAddress: AYIN_ADDRESS,
          symbol: "AYIN",
          decimals: 18,
          registered: true,
          source: "token-list",
          chainId: 8738,
          dapp: "ayin",
        });
        expect(res.json().bridged).toEqual([]);
      }
    });

    it("returns the bridged rows of a Wormhole token", async () => {
      const body = (await details(USDT_ETH)).json();
      expect(body.token.originChain).toBe("ETH");
      expect(body.bridged).toHaveLength(1);
      expect(body.bridged[0]).toMatchObject({
        native_token_id: USDT_ETH,
        chain_id: 1,
        contract_address: "0xdac17f958d2ee523a2206206994597c13d831ec7",
        mapping_kind: "wormhole_remote_pool",
        origin_wormhole_chain_id: 2,
      });
      expect(body.bridged[0].id).toMatch(/^\d+$/);
    });

    it("merges rows found through the contract (group) address with native_token_id rows, without duplicates", async () => {
      const ins = (native: string, chain: number, address: string) =>
        t.deps.pg!.query(
          "bridged_test",
          `INSERT INTO bridged_tokens (native_token_id, chain_id, contract_address, mapping_kind)
           VALUES ($1, $2, $3, 'legacy_ticker_bridge')`,
          [native, chain, address],
        );
      const xayin = "5bf2f559ae714dab83ff36bed4d9e634dfda3ca9ed755d60f00be89e2a20bd00";
      const address = contractAddressOf(xayin);
      await ins(xayin, 8738, address); // matches both ways: listed once
      await ins("other-native", 8738, `${address}:0`); // only through the group address
      await ins(xayin, 1, "0x00000000000000000000000000000000000000aa"); // only through native_token_id
      await ins("unrelated", 1, "0x00000000000000000000000000000000000000bb");
      const byId = (await details(xayin))
        .json()
        .bridged.map((r: { contract_address: string }) => r.contract_address);
      expect(byId.sort()).toEqual(
        [address, `${address}:0`, "0x00000000000000000000000000000000000000aa"].sort(),
      );
      const byAddress = (await details(address)).json().bridged;
      expect(byAddress).toHaveLength(2);
    });

    it("answers 404 for unknown tokens and 400 for malformed ids", async () => {
      const res = await details("ab".repeat(32));
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ status: 404, code: "not_found" });
      expect((await details("not-an-id!")).statusCode).toBe(400);
    });
  });

  describe("POST /token/{tokenid}/update", () => {
    const TOKEN = "c0c0af7a481e3e50c50e418bf8ff6923dc4d878ac3744474e8c708a8adccfb00"; // OGALF

    it("needs an admin key", async () => {
      const none = await t.app.inject({
        method: "POST",
        url: `/token/${TOKEN}/update`,
        payload: { name: "x" },
      });
      expect(none.statusCode).toBe(401);
      expect((await update(TOKEN, { name: "x" }, t.userKey)).statusCode).toBe(403);
    });

    it("answers 400 when no non-null field is left, and for unknown fields", async () => {
      expect((await update(TOKEN, {})).statusCode).toBe(400);
      const nulls = await update(TOKEN, { name: null, metadata: null, category_ids: null, registered: null });
      expect(nulls.statusCode).toBe(400);
      expect(nulls.json().detail).toBe("No fields to update");
      expect((await update(TOKEN, { logo_uri: "", website: "" })).statusCode).toBe(400);
      expect((await update(TOKEN, { colour: "red" })).statusCode).toBe(400);
      expect((await update(TOKEN, { decimals: -1 })).statusCode).toBe(400);
    });

    it("answers 404 for an unknown token", async () => {
      expect((await update("ab".repeat(32), { name: "x" })).statusCode).toBe(404);
    });

    it("applies only the non-null fields and records them as admin-edited", async () => {
      const res = await update(TOKEN, {
        name: "Renamed",
        symbol: "RNM",
        symbol_onchain: "RNMC",
        decimals: 4,
        dapp: "deadrare",
        registered: false,
        description: undefined,
        metadata: null,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().ok).toBe(true);
      expect(res.json().token).toMatchObject({
        id: TOKEN,
        name: "Renamed",
        symbol: "RNM",
        symbolOnChain: "RNMC",
        decimals: 4,
        dapp: "deadrare",
        registered: false,
        description: "OG Alf, real first token deployed on the mainnet",
        metadata: {},
      });
      const rows = await t.deps.pg!.query<{ admin_edited_fields: string[] }>(
        "edited",
        "SELECT admin_edited_fields FROM tokens WHERE id = $1",
        [TOKEN],
      );
      expect(rows[0]?.admin_edited_fields).toEqual([
        "dapp",
        "decimals",
        "name",
        "registered",
        "symbol",
        "symbol_onchain",
      ]);
      expect((await update(TOKEN, { registered: true })).json().token.registered).toBe(true);
    });

    it("accepts the contract address as tokenid", async () => {
      const res = await update(contractAddressOf(TOKEN), { name: "By address" });
      expect(res.json().token.name).toBe("By address");
    });

    it("sets up to 3 categories, rejects a 4th and unknown ids, clears with []", async () => {
      const three = await update(TOKEN, { category_ids: ["meme", "gaming", "nft"] });
      expect(three.json().token.categories).toEqual(["meme", "gaming", "nft"]);
      const four = await update(TOKEN, { category_ids: ["meme", "gaming", "nft", "defi"] });
      expect(four.statusCode).toBe(400);
      expect(four.json().detail).toBe("At most 3 categories are allowed, got 4");
      const unknown = await update(TOKEN, { category_ids: ["meme", "no-such"] });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().detail).toBe("Unknown category no-such");
      expect((await details(TOKEN)).json().token.categories).toEqual(["meme", "gaming", "nft"]);
      expect((await update(TOKEN, { category_ids: ["defi", "defi"] })).json().token.categories).toEqual([
        "defi",
      ]);
      expect((await update(TOKEN, { category_ids: [] })).json().token.categories).toEqual([]);
    });

    it("replaces, merges and extends metadata as the spec says", async () => {
      const replaced = await update(TOKEN, { metadata: { a: 1, b: { c: 2 } } });
      expect(replaced.json().token.metadata).toEqual({ a: 1, b: { c: 2 } });
      const merged = await update(TOKEN, { metadata_merge: { b: 3, d: "x" } });
      expect(merged.json().token.metadata).toEqual({ a: 1, b: 3, d: "x" });
      const both = await update(TOKEN, { metadata: { only: true }, metadata_merge: { ignored: true } });
      expect(both.json().token.metadata).toEqual({ only: true });
      const logo = await update(TOKEN, { logo_uri: "https://x.example/l.png", website: "https://x.example" });
      expect(logo.json().token).toMatchObject({
        logoURI: "https://x.example/l.png",
        website: "https://x.example",
        metadata: { only: true, logoURI: "https://x.example/l.png", website: "https://x.example" },
      });
      const emptyLogo = await update(TOKEN, { logo_uri: "", metadata_merge: { e: 1 } });
      expect(emptyLogo.json().token.metadata.logoURI).toBe("https://x.example/l.png");
      const withMeta = await update(TOKEN, { metadata: { fresh: 1 }, website: "https://w.example" });
      expect(withMeta.json().token.metadata).toEqual({ fresh: 1, website: "https://w.example" });
      expect(withMeta.json().token.logoURI).toBe(
        "https://raw.githubusercontent.com/alephium/token-list/master/logos/OGALF.png",
      );
    });

    it("deleted=true hides the token; deleted=false undeletes it", async () => {
      expect((await update(T3, { deleted: true })).statusCode).toBe(200);
      expect(await ids("?search=zqxvwk")).toEqual([T1, T2]);
      expect((await details(T3)).statusCode).toBe(404);
      const back = await update(T3, { deleted: false });
      expect(back.statusCode).toBe(200);
      expect(await ids("?search=zqxvwk")).toEqual([T1, T2, T3]);
    });
  });

  describe("POST /token/{tokenid}/del", () => {
    const del = (tokenid: string, key = t.adminKey) =>
      t.app.inject({ method: "POST", url: `/token/${tokenid}/del`, headers: t.auth(key), payload: {} });

    it("needs an admin key and a known token", async () => {
      expect((await t.app.inject({ method: "POST", url: `/token/${T1}/del`, payload: {} })).statusCode).toBe(
        401,
      );
      expect((await del(T1, t.userKey)).statusCode).toBe(403);
      expect((await del("ab".repeat(32))).statusCode).toBe(404);
    });

    it("soft-deletes (idempotently) and update deleted=false restores", async () => {
      const res = await del(T1);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, id: T1, deleted: true });
      expect((await del(T1)).statusCode).toBe(200);
      expect(await ids("?search=zqxvwk")).toEqual([T2, T3]);
      expect((await list("")).body.total).toBe(LISTED + 2);
      expect((await details(T1)).statusCode).toBe(404);
      const row = await t.deps.pg!.query<{ deleted: boolean }>(
        "del",
        "SELECT deleted FROM tokens WHERE id = $1",
        [T1],
      );
      expect(row[0]?.deleted).toBe(true);
      await update(T1, { deleted: false });
      expect(await ids("?search=zqxvwk")).toEqual([T1, T2, T3]);
    });
  });
});
