// Test passes: embedded (one pipeline pass and the API's reads; the bus and PostgreSQL add nothing the other files do not check).
/**
 * The AlphScan explorer's 13 calls (../shared ALPHSCAN-CLIENT.md) against the demo's data: the pipeline ingests a
 * short simulated chain (seed 31, 200 blocks: tokens, DEX pools, a Token Furnace that has minted a BurnerNFT, games
 * with rooms), the demo's labels are written, and the API runs with `DECORATION_KEY=alphscan`. Every field the
 * client reads is checked present with its type; then the new routes' 400 (naming the field) and 404 ("not found").
 * The NFT calls are checked before and after the job worker's NFT metadata round: the BurnerNFT's token URI (a data:
 * URI its contract gives) is `pending`, then `ok` with the display fields read from its JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { labelDevnetContracts } from "../../devnet/labels.ts";
import { DEVNET_DAPP } from "../../devnet/register.ts";
import { createNftMetadataWorker } from "../../pipeline/jobs/nft-metadata.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

type Json = Record<string, unknown>;

const str = expect.any(String);
const num = expect.any(Number);
const strOrNull = expect.toBeOneOf([null, expect.any(String)]);
const numOrNull = expect.toBeOneOf([null, expect.any(Number)]);

/** The `contract` of `GET /contract/{address}/details`, every field the client reads. */
const CONTRACT_RECORD = {
  address: str,
  parent_address: strOrNull,
  n_childs: num,
  dapp: strOrNull,
  dapp_name: strOrNull,
  interface_id: strOrNull,
  contract_name: strOrNull,
  level: num,
  token_symbol: strOrNull,
  minter: strOrNull,
  mint_tx: strOrNull,
  last_upgrade_date: strOrNull,
  token_lp_kind: strOrNull,
  nft_registry_kind: strOrNull,
  nft_registry_collection_address: strOrNull,
  nft_registry_name: strOrNull,
  nft_registry_image: strOrNull,
  dia_oracle_display: expect.toBeOneOf([null, expect.any(Object)]),
  token_metadata: expect.toBeOneOf([null, expect.objectContaining({ website: strOrNull })]),
  contract_metadata: expect.any(Object),
};

const FIELD = {
  field_index: num,
  field_name: strOrNull,
  value_text: str,
  parsed_value_text: str,
  resolved_address: strOrNull,
  resolved_label: strOrNull,
  resolved_token_symbol: strOrNull,
};

const DISPLAY = {
  display_name: strOrNull,
  display_description: strOrNull,
  display_image: strOrNull,
  display_image_cdn_url: strOrNull,
  display_image_cdn_preview_url: strOrNull,
};

describe("the AlphScan client's 13 calls on the demo's data", () => {
  let p: TestPipeline;
  const get = async (url: string) => {
    const r = await p.api.app.inject({ url, headers: p.api.auth(p.api.userKey) });
    return r;
  };
  const ok = async (url: string) => {
    const r = await get(url);
    expect(r.statusCode, `${url}: ${r.body}`).toBe(200);
    return r.json();
  };

  beforeAll(async () => {
    p = await startTestPipeline({
      devnet: { seed: 31 },
      blocks: 200,
      env: { DECORATION_KEY: "alphscan" },
    });
    await labelDevnetContracts(p.pg.pg, p.chain);
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  const firstRow = async <T extends Json>(sql: string) =>
    (await p.pg.pg.query<T>("t", sql))[0] ?? expect.unreachable(`no row for ${sql}`);

  it("1, 13: a transaction and its events, with address_labels under alphscan", async () => {
    const factory = p.chain.plan().factory!;
    const { created_tx } = await firstRow<{ created_tx: string }>(
      `SELECT created_tx FROM contracts WHERE address = '${factory.address}'`,
    );
    const events = (await ok(`/transaction/${created_tx}/events`)).events as Json[];
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(e.address_labels).toEqual(expect.any(Object));
    const labelled = events.flatMap((e) => Object.values(e.address_labels as Record<string, Json>));
    expect(labelled.length).toBeGreaterThan(0);
    for (const l of labelled) expect(l.icon ?? null).toEqual(strOrNull);

    const tx = await ok(`/transaction/${created_tx}`);
    expect(tx).not.toHaveProperty("ext");
    expect(tx.alphscan).toMatchObject({ address_labels: expect.any(Object) });
  });

  it("2, 3: a contract's record and state; its parent's record; the parent's children", async () => {
    const { parent_address } = await firstRow<{ parent_address: string }>(
      "SELECT parent_address FROM contracts WHERE parent_address IS NOT NULL ORDER BY created_at, address LIMIT 1",
    );
    const children = await ok(`/contract/${parent_address}/children?page=1&pageSize=2`);
    expect(children).toMatchObject({ address: parent_address, page: 1, pageSize: 2, total: num });
    expect(children.total).toBeGreaterThan(0);
    const child = (children.contracts as Json[])[0]!;
    expect(child).toMatchObject({ parent_address, n_childs: num });

    const record = await ok(`/contract/${child.address}/details`);
    expect(record.contract).toMatchObject({ ...CONTRACT_RECORD, parent_address, address: child.address });
    expect(record.contract.level).toBeGreaterThanOrEqual(1);
    const parent = await ok(`/contract/${parent_address}/details`);
    expect(parent.contract).toMatchObject({ ...CONTRACT_RECORD, n_childs: children.total });
    expect(parent.contract.level).toBe(record.contract.level - 1);
    expect(parent.fields_source).toBe("node");
    for (const f of parent.fields as Json[]) expect(f).toMatchObject(FIELD);
  });

  it("2, 4: a fungible token's record gates the token block: its state fields named, then its details", async () => {
    const token = p.chain.tokens()[0]!;
    const record = await ok(`/contract/${token.address}/details`);
    expect(record.contract).toMatchObject({
      ...CONTRACT_RECORD,
      interface_id: expect.stringMatching(/^0001/),
      token_symbol: token.symbol,
      minter: token.minter,
      mint_tx: token.mintTxId,
      level: 0,
    });
    const fields = record.fields as Json[];
    for (const f of fields) expect(f).toMatchObject(FIELD);
    expect(fields.slice(0, 2)).toMatchObject([
      { field_index: 0, field_name: "symbol", parsed_value_text: token.symbol },
      { field_index: 1, field_name: "name" },
    ]);

    const details = await ok(`/token/${token.id}/details`);
    expect(details.token).toMatchObject({ id: token.id, symbol: strOrNull, symbolOnChain: token.symbol });
    expect(details.bridged).toEqual(expect.any(Array));
  });

  it("2, 6, 7: the Token Furnace's BurnerNFT: its record, its details with traits, its collection", async () => {
    const { address } = await firstRow<{ address: string }>(
      "SELECT address FROM contracts WHERE kind = 'nft' ORDER BY address LIMIT 1",
    );
    const record = await ok(`/contract/${address}/details`);
    expect(record.contract).toMatchObject({
      ...CONTRACT_RECORD,
      interface_id: "0003",
      nft_registry_kind: "nft",
    });

    // Before the job worker's round: the token URI the contract gave is known, its JSON not read yet.
    const before = (await ok(`/nft/${address}/details`)).nft;
    expect(before).toMatchObject({
      ...DISPLAY,
      token_uri: expect.stringMatching(/^data:application\/json;base64,/),
      token_uri_state: "pending",
      display_description: null,
      display_image: null,
    });
    const worker = createNftMetadataWorker({ pg: p.pg.pg, config: p.config, log: p.deps.log });
    expect(await worker.drain()).toBeGreaterThan(0);

    // The contract record names the NFT from its token URI's JSON too.
    expect((await ok(`/contract/${address}/details`)).contract).toMatchObject({
      contract_name: expect.stringMatching(/^BurnerNFT #\d+$/),
      nft_registry_name: expect.stringMatching(/^BurnerNFT #\d+$/),
      nft_registry_image: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
    });

    const { nft, traits } = await ok(`/nft/${address}/details`);
    expect(nft).toMatchObject({
      ...DISPLAY,
      address,
      token_uri_state: str,
      owner_address: strOrNull,
      index_in_collection: strOrNull,
      dapp: str,
      mint_time: numOrNull,
    });
    expect(nft).toMatchObject({
      token_uri_state: "ok",
      display_name: `BurnerNFT #${nft.index_in_collection}`,
      display_description: expect.stringContaining("Token Furnace"),
      display_image: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
      index_in_collection: expect.stringMatching(/^\d+$/),
    });
    expect(traits).toEqual([
      { trait_key: "token_burned", value_text: expect.stringMatching(/^[0-9a-f]{64}$/), display_order: 0 },
      { trait_key: "amount_burned", value_text: expect.stringMatching(/^\d+$/), display_order: 1 },
    ]);

    const collection = await ok(`/nft/collection/${nft.collection_address}/details`);
    expect(collection.collection).toMatchObject({
      ...DISPLAY,
      address: nft.collection_address,
      collection_uri_state: str,
      token_count: num,
    });
    // The Token Furnace is the BurnerNFTs' parent, not an INFTCollection: it gives no collection URI.
    expect(collection.collection).toMatchObject({ collection_uri: null, collection_uri_state: "none" });
    expect(collection.collection.token_count).toBeGreaterThan(0);
    expect(collection.trait_definitions).toContainEqual({
      trait_key: "token_burned",
      count: num,
      values: expect.arrayContaining([{ value_text: traits[0].value_text, count: num }]),
    });
    // Our earlier path answers the same collection.
    expect((await ok(`/nft/collections/${nft.collection_address}`)).collection.address).toBe(
      nft.collection_address,
    );
  });

  it("5, 8, 10: chains, an address's labels, a dapp by id", async () => {
    const chains = await ok("/chain/all?pageSize=-1");
    for (const c of chains.items as Json[])
      expect(c).toMatchObject({ id: expect.anything(), avatar_url: strOrNull, icon: strOrNull });
    const factory = p.chain.plan().factory!.address;
    const labels = await ok(`/addresses/${factory}/labels`);
    expect(labels.labels[0]).toMatchObject({
      address: factory,
      label: str,
      source: str,
      mapped_label: str,
      display_order: num,
      metadata: { dapp_id: DEVNET_DAPP, dapp_name: str },
    });
    expect(await ok(`/dapps/${DEVNET_DAPP}`)).toMatchObject({ dapp: { name: str, short_name: str } });
  });

  it("9, 11, 12: an address's, a block's transactions and the block, decorated under alphscan", async () => {
    const token = p.chain.tokens()[0]!;
    const block = await ok(`/block/${token.mintBlockHash}`);
    expect(block.alphscan).toMatchObject({ genesis_mints: expect.any(Array), coinbases: expect.any(Array) });
    for (const url of [
      `/addresses/${token.minter}/transactions?page=1&limit=10`,
      `/block/${token.mintBlockHash}/transactions?page=1&limit=20`,
    ]) {
      const items = (await ok(url)) as Json[];
      expect(items.length, url).toBeGreaterThan(0);
      for (const item of items) {
        expect(item, url).not.toHaveProperty("ext");
        expect((item.alphscan as Json).main_event_pending, url).toEqual(expect.any(Boolean));
      }
    }
  });

  it("answers 400 naming the field for a bad address and 404 not found for an unknown one", async () => {
    const unknown = "2AA7JgvZ3P6mWHzJKkV8oVdPWqgyZ1Rh7ZCGqhkd8Z7HE";
    for (const path of [
      "/contract/%s/details",
      "/contract/%s/children",
      "/nft/%s/details",
      "/nft/collection/%s/details",
    ]) {
      const bad = await get(path.replace("%s", "not-an-address!"));
      expect(bad.statusCode, path).toBe(400);
      expect(bad.json().detail, path).toContain("address");
      const missing = await get(path.replace("%s", unknown));
      expect(missing.statusCode, path).toBe(404);
      expect(missing.json().detail, path).toContain("not found");
    }
  });
});
