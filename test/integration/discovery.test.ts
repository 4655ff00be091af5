// Test passes: embedded (figures computed from the stored events, whatever batches the bus made; the guarantees run over Kafka elsewhere).
/** Discovery: a token issued on the simulated chain appears in the registry, unregistered, with its mint facts. */

import { addressFromContractId } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EventsMessage, TOPICS, type WireEvent } from "../../pipeline/messages.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";

describe("token discovery from genesis mints", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 300, confirmations: 2 });
    await p.catchUp();
  });
  afterAll(async () => p?.close());

  it("lists issued tokens as unregistered with minter, mint tx, mint time and on-chain metadata", async () => {
    const tokens = p.chain.tokens();
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) {
      const r = await p.api.app.inject({ url: `/token/${token.id}/details` });
      expect(r.statusCode, token.symbol).toBe(200);
      const t = r.json().token;
      expect(t).toMatchObject({
        id: token.id,
        contractAddress: token.address,
        registered: false,
        minter: token.minter,
        mintTx: token.mintTxId,
        mintTime: token.mintTimestamp,
        symbolOnChain: token.symbol,
        decimals: token.decimals,
        chainId: 8738,
      });
      expect(r.json().bridged).toEqual([]);
    }
    const unregistered = await p.api.app.inject({ url: "/token/all?registered=false&pageSize=-1" });
    const ids = (unregistered.json().tokens as { id: string }[]).map((t) => t.id);
    for (const token of tokens) expect(ids).toContain(token.id);
  });

  it("records created contracts with their kind", async () => {
    const token = p.chain.tokens()[0]!;
    const r = await p.api.app.inject({ url: `/contracts/${token.address}` });
    expect(r.statusCode).toBe(200);
    expect(r.json().contract).toMatchObject({
      address: token.address,
      kind: "token",
      created_tx: token.mintTxId,
    });
  });
});

describe("NFT discovery from contract creations", () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await startTestPipeline({ blocks: 50, confirmations: 2 });
  });
  afterAll(async () => p?.close());

  it("records a collection (interface 0002) and its NFTs (interface 0003, created by the collection)", async () => {
    const collectionId = `${"c0".repeat(31)}00`;
    const nftId = `${"d1".repeat(31)}00`;
    const collection = addressFromContractId(collectionId);
    const nft = addressFromContractId(nftId);
    const minter = p.chain.addresses()[0]!.address;
    const created = (to: string, parent: string, iface: string, index: number): WireEvent => ({
      id: `1752573600000-00-0000000099-00000-000${index}`,
      tx_id: "ab".repeat(32),
      tx_index: 0,
      event_index: index,
      dapp_id: "unknown",
      category: "contract",
      sub_kind: "created",
      type: "system",
      is_main: index === 0,
      from: minter,
      to,
      with: parent,
      token_address: "",
      token_id: "0".repeat(64),
      amount: "0",
      contract_address: "tgx7VNFoP9DJiFMFgXXtafQZkUvyEdDHT9ryamHJZC9M",
      contract_event_index: -1,
      payload_json: JSON.stringify({ contract_address: to, parent_address: parent, std_interface_id: iface }),
      payload_ref: null,
    });
    const events = [created(collection, "", "000201", 0), created(nft, collection, "0003", 1)];
    const message: EventsMessage = {
      kind: "block",
      chain_index: 0,
      block_hash: "ef".repeat(32),
      block_height: 99,
      block_timestamp: 1752573600000,
      seq: 1,
      events,
      offloaded: [],
    };
    await p.deps.bus.publish(TOPICS.events, [{ key: "0", value: p.deps.codecs.events.encode(message) }]);
    await p.catchUp(); // also drains the consumer groups when the bus is Kafka

    const c = await p.api.app.inject({ url: `/nft/collections/${collection}` });
    expect(c.statusCode).toBe(200);
    expect(JSON.stringify(c.json())).toContain("000201");
    const tokens = await p.api.app.inject({ url: `/nft/collections/${collection}/tokens` });
    expect(tokens.statusCode).toBe(200);
    expect(JSON.stringify(tokens.json())).toContain(nftId);
    const contract = await p.api.app.inject({ url: `/contracts/${nft}` });
    expect(contract.json().contract).toMatchObject({ kind: "nft", created_tx: "ab".repeat(32) });
  });
});
