// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryRepo, type RegistryRepo } from "../../lib/tokens/repo.ts";
import { contractAddressOf } from "../../lib/tokens/repo-shared.ts";
import { createNftMetadataWorker } from "../../pipeline/jobs/nft-metadata.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { quietLog } from "../helpers/stores.ts";

const POOL_ID = `${"ab".repeat(31)}01`;
const COLLECTION_ID = `${"cd".repeat(31)}02`;

describe("dapps routes", () => {
  let t: TestApp;
  const post = (url: string, payload: object, key = t.adminKey) =>
    t.app.inject({ method: "POST", url, headers: t.auth(key), payload });
  const all = async (query = "") =>
    (await t.app.inject({ url: `/dapps/all${query}` })).json().dapps as { id: string; deleted: boolean }[];

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it("lists the seeded dapps with their categories", async () => {
    const res = await t.app.inject({ url: "/dapps/all" });
    expect(res.statusCode).toBe(200);
    const dapps = res.json().dapps;
    expect(dapps.map((d: { id: string }) => d.id)).toEqual([
      "alphbanx",
      "ayin",
      "chainreaction",
      "deadrare",
      "dia-oracle",
      "elexium",
      "furnace",
      "linx",
      "myonion",
      "wormhole",
    ]);
    expect(dapps[1]).toMatchObject({
      id: "ayin",
      name: "Ayin",
      website: "https://www.ayin.app",
      categories: ["dex", "defi"],
      deleted: false,
    });
  });

  it("adds, updates, deletes and re-activates a dapp", async () => {
    const added = await post("/dapps/add", { id: "newdex", name: "New DEX", website: "https://n.example" });
    expect(added.statusCode).toBe(200);
    expect(added.json().dapp).toMatchObject({
      id: "newdex",
      name: "New DEX",
      website: "https://n.example",
      description: null,
      categories: [],
      deleted: false,
    });
    const updated = await post("/dapps/newdex/update", { description: "A DEX", name: null });
    expect(updated.json().dapp).toMatchObject({ name: "New DEX", description: "A DEX" });
    expect((await post("/dapps/newdex/update", {})).statusCode).toBe(400);
    expect((await post("/dapps/newdex/update", { name: null })).statusCode).toBe(400);
    expect((await post("/dapps/nope/update", { name: "x" })).statusCode).toBe(404);

    const deleted = await post("/dapps/newdex/del", {});
    expect(deleted.json().dapp.deleted).toBe(true);
    expect((await all()).map((d) => d.id)).not.toContain("newdex");
    expect((await all("?include_deleted=true")).find((d) => d.id === "newdex")?.deleted).toBe(true);
    expect((await post("/dapps/nope/del", {})).statusCode).toBe(404);

    const back = await post("/dapps/add", { id: "newdex", name: "New DEX 2" });
    expect(back.json().dapp).toMatchObject({ deleted: false, name: "New DEX 2", description: "A DEX" });
  });

  it("links up to 3 categories, 400 beyond or unknown, [] clears", async () => {
    const three = await post("/dapps/newdex/categories", { category_ids: ["dex", "defi", "meme"] });
    expect(three.statusCode).toBe(200);
    expect(three.json().dapp.categories).toEqual(["dex", "defi", "meme"]);
    const four = await post("/dapps/newdex/categories", { category_ids: ["dex", "defi", "meme", "nft"] });
    expect(four.statusCode).toBe(400);
    expect(four.json().detail).toBe("At most 3 categories are allowed, got 4");
    expect((await post("/dapps/newdex/categories", { category_ids: ["zzz"] })).statusCode).toBe(400);
    expect((await post("/dapps/nope/categories", { category_ids: ["dex"] })).statusCode).toBe(404);
    const cats = (await t.app.inject({ url: "/category/all" })).json().categories;
    expect(cats.find((c: { id: string }) => c.id === "meme").count_dapp).toBe(2);
    expect((await post("/dapps/newdex/categories", { category_ids: [] })).json().dapp.categories).toEqual([]);
  });

  it("needs an admin key for writes", async () => {
    for (const url of ["/dapps/add", "/dapps/ayin/update", "/dapps/ayin/del", "/dapps/ayin/categories"]) {
      expect((await t.app.inject({ method: "POST", url, payload: {} })).statusCode).toBe(401);
      expect((await post(url, {}, t.userKey)).statusCode).toBe(403);
    }
  });
});

describe("chain, contracts and NFT routes", () => {
  let t: TestApp;
  let repo: RegistryRepo;

  beforeAll(async () => {
    t = await createTestApp();
    repo = createRegistryRepo(t.deps.pg!);
  });
  afterAll(async () => t?.close());

  it("GET /chain/all lists Alephium first, then the bridge's EVM chains", async () => {
    const res = await t.app.inject({ url: "/chain/all" });
    expect(res.json().chains.map((c: { short_name: string }) => c.short_name)).toEqual([
      "alph",
      "eth",
      "bsc",
    ]);
  });

  it("GET /chain/status reports the sink's durable position per chain", async () => {
    expect((await t.app.inject({ url: "/chain/status" })).json()).toEqual({ watermark: 0, chains: [] });
    await t.deps.ch!.insert("progress_test", "chain_progress", [
      { chain_index: 6, height: 42, block_hash: "ab".repeat(32), block_ts: 1_700_000_000_000, version: 1 },
    ]);
    const body = (await t.app.inject({ url: "/chain/status" })).json();
    expect(body.watermark).toBe(0);
    expect(body.chains).toHaveLength(1);
    expect(body.chains[0]).toMatchObject({
      chain_index: 6,
      from_group: 1,
      to_group: 2,
      height: 42,
      block_hash: "ab".repeat(32),
      block_ts: 1_700_000_000_000,
    });
    expect(body.chains[0].lag_ms).toBeGreaterThan(0);
  });

  it("GET /contracts/{address} returns the entry with its dapp, by address or id; 404 otherwise", async () => {
    await repo.upsertContracts([{ contractId: POOL_ID, dappId: "ayin", kind: "pool", label: "Pair X/Y" }]);
    const address = contractAddressOf(POOL_ID);
    for (const key of [address, POOL_ID]) {
      const res = await t.app.inject({ url: `/contracts/${key}` });
      expect(res.statusCode).toBe(200);
      expect(res.json().contract).toMatchObject({
        address,
        contract_id: POOL_ID,
        group: 1,
        dapp_id: "ayin",
        kind: "pool",
        label: "Pair X/Y",
        registered: false,
      });
      expect(res.json().dapp).toMatchObject({ id: "ayin", name: "Ayin" });
    }
    expect((await t.app.inject({ url: `/contracts/${"ee".repeat(32)}` })).statusCode).toBe(404);
    expect((await t.app.inject({ url: "/contracts/!!" })).statusCode).toBe(400);
  });

  it("serves NFT collections and their tokens", async () => {
    const collection = await repo.upsertNftCollection({
      collectionId: COLLECTION_ID,
      name: "Punks",
      uri: "ipfs://c",
    });
    const tokens = [2, 10, 1].map((i) => ({
      tokenId: `${String(i).padStart(2, "0")}${"ef".repeat(31)}`,
      collectionAddress: collection.address,
      nftIndex: String(i),
      uri: `ipfs://t/${i}`,
    }));
    expect(await repo.upsertNftTokens(tokens)).toBe(3);
    const list = (await t.app.inject({ url: "/nft/collections?search=punk" })).json();
    expect(list).toMatchObject({ total: 1, page: 1, pageSize: 50 });
    expect(list.collections[0]).toMatchObject({ address: collection.address, name: "Punks", token_count: 3 });
    expect((await t.app.inject({ url: "/nft/collections?search=nothing" })).json().total).toBe(0);
    const one = await t.app.inject({ url: `/nft/collections/${collection.address}` });
    expect(one.json().collection.collection_id).toBe(COLLECTION_ID);
    const page = (
      await t.app.inject({ url: `/nft/collections/${collection.address}/tokens?pageSize=2` })
    ).json();
    expect(page.total).toBe(3);
    expect(page.tokens.map((x: { nft_index: string }) => x.nft_index)).toEqual(["1", "2"]);
    const page2 = (
      await t.app.inject({ url: `/nft/collections/${collection.address}/tokens?pageSize=2&page=2` })
    ).json();
    expect(page2.tokens.map((x: { nft_index: string }) => x.nft_index)).toEqual(["10"]);
    const missing = contractAddressOf("99".repeat(32));
    expect((await t.app.inject({ url: `/nft/collections/${missing}` })).statusCode).toBe(404);
    expect((await t.app.inject({ url: `/nft/collections/${missing}/tokens` })).statusCode).toBe(404);
  });

  it("fills the NFT details from fetched metadata, and says what became of each URI", async () => {
    const json = (doc: unknown) => `data:application/json,${encodeURIComponent(JSON.stringify(doc))}`;
    const collectionUri = json({
      name: "ignored: the registry names it",
      description: "Cats",
      image: "ipfs://bafyc/logo.png",
    });
    const collection = await repo.upsertNftCollection({
      collectionId: `${"c7".repeat(31)}02`,
      name: "Cats",
      uri: collectionUri,
    });
    const uris = [
      json({
        name: "Cat #0",
        description: "First",
        image: "ipfs://bafyt/0.png",
        attributes: [{ trait_type: "Fur", value: "Grey" }],
      }),
      json({
        name: "Cat #1",
        image: "javascript:alert(1)",
        attributes: [{ trait_type: "Fur", value: "Black" }],
      }),
      "data:text/html,<b>not json</b>",
      "http://10.0.0.7/cat.json",
      "gopher://cats.example/3",
    ];
    const ids = uris.map((_, i) => `${String(i).padStart(2, "0")}${"c8".repeat(31)}`);
    await repo.upsertNftTokens(
      ids.map((tokenId, i) => ({
        tokenId,
        collectionAddress: collection.address,
        nftIndex: String(i),
        uri: uris[i],
      })),
    );
    // One more NFT whose contract gave no URI, with the chain's own traits.
    const bare = `05${"c8".repeat(31)}`;
    await repo.upsertNftTokens([
      {
        tokenId: bare,
        collectionAddress: collection.address,
        nftIndex: "5",
        traits: [{ trait_key: "Fur", value_text: "Grey" }],
      },
    ]);
    const details = async (id: string) => (await t.app.inject({ url: `/nft/${id}/details` })).json();

    expect((await details(ids[0]!)).nft).toMatchObject({
      token_uri_state: "pending",
      display_name: "Cats #0",
    });
    // The gateway is a loopback address here, refused: the earlier test's ipfs:// URIs make no request either.
    const config = { ...t.deps.config, NFT_METADATA_IPFS_GATEWAY: "http://127.0.0.1:9/ipfs/" };
    const worker = createNftMetadataWorker({ pg: t.deps.pg!, config, log: quietLog });
    expect(await worker.drain()).toBe(6 + 4);

    const first = await details(ids[0]!);
    expect(first.nft).toMatchObject({
      token_uri_state: "ok",
      display_name: "Cat #0",
      display_description: "First",
      display_image: "https://ipfs.io/ipfs/bafyt/0.png",
    });
    expect(first.traits).toEqual([{ trait_key: "Fur", value_text: "Grey", display_order: 0 }]);
    expect((await details(ids[1]!)).nft).toMatchObject({ display_name: "Cat #1", display_image: null });
    for (const [i, state] of [
      [2, "failed"],
      [3, "refused"],
      [4, "refused"],
    ] as const) {
      const { nft, traits } = await details(ids[i]!);
      expect(nft, uris[i]).toMatchObject({
        token_uri_state: state,
        display_name: `Cats #${i}`,
        display_image: null,
      });
      expect(traits).toEqual([]);
    }
    expect((await details(bare)).nft).toMatchObject({ token_uri: null, token_uri_state: "none" });

    const c = (await t.app.inject({ url: `/nft/collection/${collection.address}/details` })).json();
    expect(c.collection).toMatchObject({
      collection_uri: collectionUri,
      collection_uri_state: "ok",
      display_name: "Cats",
      display_description: "Cats",
      display_image: "https://ipfs.io/ipfs/bafyc/logo.png",
    });
    // The chain's traits where it gives some, the token URIs' attributes elsewhere.
    expect(c.trait_definitions).toEqual([
      {
        trait_key: "Fur",
        count: 3,
        values: [
          { value_text: "Black", count: 1 },
          { value_text: "Grey", count: 2 },
        ],
      },
    ]);
  });
});
