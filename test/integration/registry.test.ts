// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
import { mainnet } from "@alephium/token-list";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KNOWN_DAPP_CONTRACTS } from "../../lib/tokens/known-contracts.ts";
import { createRegistryRepo, type RegistryRepo } from "../../lib/tokens/repo.ts";
import { contractAddressOf } from "../../lib/tokens/repo-shared.ts";
import { seedRegistry } from "../../lib/tokens/seed.ts";
import { openTestPg, type TestPg } from "../helpers/stores.ts";

const AYIN = "1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800";
const USDT_ETH = "556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00";
const OGALF = "c0c0af7a481e3e50c50e418bf8ff6923dc4d878ac3744474e8c708a8adccfb00";
const ALPH = "0".repeat(64);

describe("registry seeding from @alephium/token-list", () => {
  let store: TestPg;
  let repo: RegistryRepo;

  beforeAll(async () => {
    store = await openTestPg();
    repo = createRegistryRepo(store.pg);
  });
  afterAll(async () => store?.close());

  it("seeds every listed token, the bridged rows, categories and dapps", async () => {
    const report = await seedRegistry({ pg: store.pg });
    expect(report).toEqual({
      tokens: mainnet.tokens.length,
      bridged: 8,
      categories: 8,
      dapps: 10,
      tokenCategories: 20,
      contracts: KNOWN_DAPP_CONTRACTS.length,
    });
    expect((await repo.getContract("vyrkJHG49TXss6pGAz2dVxq5o7mBXNNXAV18nAeqVT1R"))?.dapp_id).toBe("ayin");
    expect(await repo.countTokens()).toBe(225);
    expect(await repo.getToken(AYIN)).toMatchObject({
      id: AYIN,
      contractAddress: "vT49PY8ksoUL6NcXiZ1t2wAmC7tTPRfFfER8n3UCLvXy",
      name: "AYIN",
      symbol: "AYIN",
      decimals: 18,
      registered: true,
      source: "token-list",
      chainId: 8738,
      dapp: "ayin",
      categories: ["defi"],
      moderation: "show",
      marketDisplay: true,
      logoURI: "https://raw.githubusercontent.com/alephium/token-list/master/logos/AYIN.png",
    });
    expect(await repo.getToken(ALPH)).toMatchObject({ symbol: "ALPH", decimals: 18, registered: true });
    expect(await repo.getToken(OGALF)).toMatchObject({ symbol: "OGALF", symbolOnChain: "ALF" });
    const usdt = await repo.getTokenDetails(USDT_ETH);
    expect(usdt.token).toMatchObject({
      symbol: "USDTeth",
      symbolOnChain: "USDT",
      decimals: 6,
      originChain: "ETH",
      dapp: "wormhole",
      contractAddress: "zSRgc7goAYUgYsEBYdAzogyyeKv3ne3uvWb3VDtxnaEK",
    });
    expect(usdt.token.categories.sort()).toEqual(["bridged", "stablecoin"]);
    expect(usdt.bridged).toEqual([
      {
        id: expect.stringMatching(/^\d+$/),
        native_token_id: USDT_ETH,
        chain_id: 1,
        contract_address: "0xdac17f958d2ee523a2206206994597c13d831ec7",
        mapping_kind: "wormhole_remote_pool",
        origin_wormhole_chain_id: 2,
        origin_token_id_hex: "0x000000000000000000000000dac17f958d2ee523a2206206994597c13d831ec7",
        alephium_contract_id_hex: `0x${USDT_ETH}`,
        external_asset_id: null,
        origin_evm_contract_address: "0xdac17f958d2ee523a2206206994597c13d831ec7",
        wormhole_pool_decimals: 6,
        origin_wormhole_chain_name: "ethereum",
        origin_token_explorer_url: "https://etherscan.io/token/0xdac17f958d2ee523a2206206994597c13d831ec7",
      },
    ]);
  });

  it("re-seeding writes nothing", async () => {
    const before = await repo.getToken(AYIN);
    expect(await seedRegistry({ pg: store.pg })).toEqual({
      tokens: 0,
      bridged: 0,
      categories: 0,
      dapps: 0,
      tokenCategories: 0,
      contracts: 0,
    });
    expect((await repo.getToken(AYIN))?.updatedAt).toBe(before?.updatedAt);
  });

  it("re-seeding never overwrites what an admin changed, but restores what nobody edited", async () => {
    await repo.updateToken(AYIN, {
      name: "Admin AYIN",
      symbol: "AYN",
      decimals: 9,
      registered: false,
      category_ids: [],
      dapp: "elexium",
      logo_uri: "https://admin.example/logo.png",
    });
    await repo.updateToken(OGALF, { deleted: true, symbol_onchain: "ADMINALF" });
    await repo.deleteCategory("meme");
    await store.pg.query(
      "tamper",
      "UPDATE tokens SET description = 'tampered', origin_chain = 'X' WHERE id = $1",
      [AYIN],
    );
    const report = await seedRegistry({ pg: store.pg });
    expect(report.tokens).toBe(1);
    expect(report.tokenCategories).toBe(0);
    expect(await repo.getToken(AYIN)).toMatchObject({
      name: "Admin AYIN",
      symbol: "AYN",
      decimals: 9,
      registered: false,
      categories: [],
      dapp: "elexium",
      logoURI: "https://admin.example/logo.png",
      description: expect.not.stringContaining("tampered"),
      originChain: null,
    });
    expect(await repo.getToken(OGALF)).toBeNull();
    expect(await repo.getToken(OGALF, { includeDeleted: true })).toMatchObject({ symbolOnChain: "ADMINALF" });
    expect((await repo.getCategory("meme"))?.deleted).toBe(true);
  });
});

describe("discovery upserts", () => {
  let store: TestPg;
  let repo: RegistryRepo;
  const NEW = `${"12".repeat(31)}02`;

  beforeAll(async () => {
    store = await openTestPg();
    repo = createRegistryRepo(store.pg);
    await seedRegistry({ pg: store.pg });
  });
  afterAll(async () => store?.close());

  it("inserts an unknown token as unregistered, from the chain", async () => {
    const outcome = await repo.upsertDiscoveredToken({
      id: NEW.toUpperCase(),
      minter: "1Minter",
      mintTx: "aa".repeat(32),
      mintTime: 1_700_000_000_000,
      decimals: 8,
      name: "New",
      symbol: "NEW",
      totalSupply: "1000000",
    });
    expect(outcome).toBe("inserted");
    expect(await repo.getToken(NEW)).toMatchObject({
      id: NEW,
      contractAddress: contractAddressOf(NEW),
      registered: false,
      source: "chain",
      chainId: 8738,
      minter: "1Minter",
      mintTx: "aa".repeat(32),
      mintTime: 1_700_000_000_000,
      decimals: 8,
      name: "New",
      symbol: "NEW",
      symbolOnChain: "NEW",
      maxSupply: "1000000",
    });
    const again = { id: NEW, minter: "1Other", mintTx: "bb".repeat(32), mintTime: 1 };
    expect(await repo.upsertDiscoveredToken(again)).toBe("unchanged");
    expect((await repo.getToken(NEW))?.minter).toBe("1Minter");
  });

  it("fills only the missing on-chain facts of a listed token", async () => {
    const before = await repo.getToken(AYIN);
    const outcome = await repo.upsertDiscoveredToken({
      id: AYIN,
      minter: "1AyinDeployer",
      mintTx: "cc".repeat(32),
      mintTime: 1_680_000_000_000,
      decimals: 2,
      name: "On-chain AYIN",
      symbol: "AYINX",
    });
    expect(outcome).toBe("updated");
    const after = await repo.getToken(AYIN);
    expect(after).toMatchObject({
      minter: "1AyinDeployer",
      mintTx: "cc".repeat(32),
      mintTime: 1_680_000_000_000,
      symbolOnChain: "AYINX",
      name: before?.name,
      symbol: "AYIN",
      decimals: 18,
      registered: true,
      source: "token-list",
    });
    expect(await repo.upsertDiscoveredToken({ id: AYIN, minter: "x", mintTx: "y", mintTime: 2 })).toBe(
      "unchanged",
    );
  });

  it("never touches an admin-edited on-chain symbol", async () => {
    await repo.updateToken(USDT_ETH, { symbol_onchain: "ADMIN" });
    await repo.upsertDiscoveredToken({
      id: USDT_ETH,
      minter: "m",
      mintTx: "t",
      mintTime: 5,
      symbol: "CHAIN",
    });
    expect(await repo.getToken(USDT_ETH)).toMatchObject({ symbolOnChain: "ADMIN", minter: "m", mintTime: 5 });
  });

  it("upserts a batch with duplicates and rejects malformed ids", async () => {
    const id = `${"34".repeat(31)}00`;
    const outcomes = await repo.upsertDiscoveredTokens([
      { id, minter: "a", mintTx: "b", mintTime: 1 },
      { id, minter: "z", mintTx: "z", mintTime: 9 },
      { id: AYIN, minter: null, mintTx: null, mintTime: null },
    ]);
    expect(Object.fromEntries(outcomes)).toEqual({ [id]: "inserted", [AYIN]: "unchanged" });
    expect((await repo.getToken(id))?.minter).toBe("a");
    await expect(
      repo.upsertDiscoveredToken({ id: "xyz", minter: null, mintTx: null, mintTime: null }),
    ).rejects.toThrow("not 64 hex");
  });

  it("upsertContracts is idempotent, keeps creation facts and lists dapp attributions", async () => {
    const a = `${"56".repeat(31)}03`;
    const b = `${"78".repeat(31)}00`;
    expect(
      await repo.upsertContracts([
        {
          contractId: a,
          dappId: "ayin",
          kind: "pool",
          createdTx: "t1",
          createdAt: 100,
          stdInterfaceId: null,
        },
        { contractId: b, kind: "token" },
      ]),
    ).toBe(2);
    expect(
      await repo.upsertContracts([
        { contractId: a, dappId: "ayin", kind: "pool", createdTx: "t1", createdAt: 100 },
      ]),
    ).toBe(0);
    expect(
      await repo.upsertContracts([{ contractId: a, createdTx: "t2", createdAt: 200, label: "Pair" }]),
    ).toBe(1);
    expect(await repo.getContract(contractAddressOf(a))).toMatchObject({
      contract_id: a,
      group: 3,
      dapp_id: "ayin",
      kind: "pool",
      created_tx: "t1",
      created_at: 100,
      label: "Pair",
    });
    expect(await repo.upsertContracts([{ contractId: b, dappId: "elexium" }])).toBe(1);
    expect((await repo.getContract(contractAddressOf(b)))?.kind).toBe("token");
    const mine = new Set([contractAddressOf(a), contractAddressOf(b)]);
    expect((await repo.listContractDapps()).filter((r) => mine.has(r.address))).toEqual(
      [
        { address: contractAddressOf(a), dapp_id: "ayin" },
        { address: contractAddressOf(b), dapp_id: "elexium" },
      ].sort((x, y) => (x.address < y.address ? -1 : 1)),
    );
    expect(await repo.upsertContracts([])).toBe(0);
  });

  it("upsertNftCollection and upsertNftTokens fill in without losing known values", async () => {
    const id = `${"9a".repeat(31)}01`;
    const first = await repo.upsertNftCollection({ collectionId: id, uri: "ipfs://c", createdTx: "t1" });
    expect(first).toMatchObject({
      address: contractAddressOf(id),
      uri: "ipfs://c",
      name: null,
      token_count: 0,
    });
    const second = await repo.upsertNftCollection({ collectionId: id, name: "Cats", createdTx: "t2" });
    expect(second).toMatchObject({ uri: "ipfs://c", name: "Cats", created_tx: "t1" });
    const token = {
      tokenId: `${"9b".repeat(31)}01`,
      collectionAddress: first.address,
      nftIndex: "0",
      minter: "m1",
    };
    expect(await repo.upsertNftTokens([token, token])).toBe(1);
    await repo.upsertNftTokens([{ ...token, minter: "m2", name: "Cat #0" }]);
    const page = await repo.listNftTokens(first.address, { page: 1, pageSize: 10 });
    expect(page.tokens).toEqual([expect.objectContaining({ minter: "m1", name: "Cat #0", nft_index: "0" })]);
    // Each URI stored waits in the NFT metadata cache for the job worker's first fetch, once per URI.
    await repo.upsertNftTokens([{ ...token, uri: "ipfs://t/0.json" }]);
    await repo.upsertNftTokens([{ ...token, tokenId: `${"9b".repeat(31)}02`, uri: "ipfs://t/0.json" }]);
    const cached = await repo.nftMetadata(["ipfs://c", "ipfs://t/0.json", "ipfs://unknown", null]);
    expect([...cached.keys()].sort()).toEqual(["ipfs://c", "ipfs://t/0.json"]);
    for (const row of cached.values())
      expect(row).toMatchObject({
        state: "pending",
        attempts: 0,
        name: null,
        next_try_at: expect.any(Number),
      });
  });
});
