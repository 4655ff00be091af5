import type { explorer, node } from "@alephium/web3";
import { addressFromContractId, NodeProvider } from "@alephium/web3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { startLive } from "../../devnet/live.ts";
import { runDevnet } from "../../devnet/main.ts";
import { type DevnetServer, startDevnetServer } from "../../devnet/server.ts";

async function get<T = unknown>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as T };
}

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setImmediate(r));
  }
}

describe("devnet HTTP server", () => {
  let chain: DevnetChain;
  let server: DevnetServer;
  beforeAll(async () => {
    chain = createDevnetChain({ seed: 5 });
    chain.advance(1000);
    server = await startDevnetServer(chain);
  });
  afterAll(async () => {
    await server.close();
  });

  it("serves node infos and chain layout", async () => {
    expect(server.explorerUrl).toBe(`${server.url}/explorer`);
    const clique = await get<node.SelfClique>(`${server.nodeUrl}/infos/self-clique`);
    expect(clique.body).toMatchObject({ selfReady: true, synced: true });
    expect(clique.body.nodes[0]!.restPort).toBe(server.port);
    expect((await get(`${server.nodeUrl}/infos/chain-params`)).body).toEqual({
      networkId: 4,
      numZerosAtLeastInHash: 0,
      groupNumPerBroker: 4,
      groups: 4,
    });
    expect(
      (await get<node.NodeInfo>(`${server.nodeUrl}/infos/node-info`)).body.buildInfo.releaseVersion,
    ).toBe("4.6.0");
    const info = await get<node.ChainInfo>(`${server.nodeUrl}/blockflow/chain-info?fromGroup=1&toGroup=2`);
    expect(info.body).toEqual({ currentHeight: chain.height(6) });
    const hashes = await get<node.HashesAtHeight>(
      `${server.nodeUrl}/blockflow/hashes?fromGroup=1&toGroup=2&height=3`,
    );
    expect(hashes.body.headers[0]).toBe(chain.mainChain(6)[3]!.block.hash);
    const bad = await get<{ detail: string }>(`${server.nodeUrl}/blockflow/chain-info?fromGroup=4&toGroup=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/fromGroup/);
  });

  it("serves blocks, headers, events and main-chain flags", async () => {
    const b = chain.mainChain(2).at(-5)!;
    const block = await get<node.BlockEntry>(`${server.nodeUrl}/blockflow/blocks/${b.block.hash}`);
    expect(block.body).toEqual(b.block);
    const header = await get<node.BlockHeaderEntry>(`${server.nodeUrl}/blockflow/headers/${b.block.hash}`);
    expect(Object.keys(header.body)).toEqual(["hash", "timestamp", "chainFrom", "chainTo", "height", "deps"]);
    const withEvents = await get<node.BlockAndEvents>(
      `${server.nodeUrl}/blockflow/blocks-with-events/${b.block.hash}`,
    );
    expect(withEvents.body).toEqual({ block: b.block, events: b.events });
    const inMain = await get<boolean>(
      `${server.nodeUrl}/blockflow/is-block-in-main-chain?blockHash=${b.block.hash}`,
    );
    expect(inMain.body).toBe(true);
    const missing = await get<{ detail: string; resource: string }>(
      `${server.nodeUrl}/blockflow/blocks/${"ab".repeat(32)}`,
    );
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/not found/);
    expect((await get(`${server.nodeUrl}/blockflow/blocks/nothex`)).status).toBe(400);
  });

  it("serves blocks-with-events by time range, main chain only, with the 30-minute cap", async () => {
    const provider = new NodeProvider(server.nodeUrl);
    const toTs = chain.latestTimestamp();
    const fromTs = toTs - 60_000;
    const res = await provider.blockflow.getBlockflowBlocksWithEvents({ fromTs, toTs });
    expect(res.blocksAndEvents).toHaveLength(16);
    const expected = chain.blocksInRange(fromTs, toTs);
    res.blocksAndEvents.forEach((perChain, c) => {
      expect(perChain.map((x) => x.block.hash)).toEqual(expected[c]!.map((x) => x.block.hash));
      for (const x of perChain) {
        expect(x.block.timestamp).toBeGreaterThanOrEqual(fromTs);
        expect(x.block.timestamp).toBeLessThanOrEqual(toTs);
      }
    });
    expect(res.blocksAndEvents.flat().some((x) => x.block.timestamp === toTs)).toBe(true);
    const tooWide = await get<{ detail: string }>(
      `${server.nodeUrl}/blockflow/blocks-with-events?fromTs=${fromTs}&toTs=${fromTs + 30 * 60_000 + 1}`,
    );
    expect(tooWide.status).toBe(400);
    expect(tooWide.body.detail).toMatch(/30/);
    const exact = await get(
      `${server.nodeUrl}/blockflow/blocks-with-events?fromTs=${fromTs}&toTs=${fromTs + 30 * 60_000}`,
    );
    expect(exact.status).toBe(200);
  });

  it("serves transactions, status and events by tx id", async () => {
    const pool = chain.pools()[0]!;
    const swap = chain
      .mainChain(0)
      .flatMap((b) => b.events)
      .find((e) => e.contractAddress === pool.address && e.eventIndex === 2)!;
    const loc = chain.getTransaction(swap.txId)!;
    const details = await get<node.Transaction>(`${server.nodeUrl}/transactions/details/${swap.txId}`);
    expect(details.body).toEqual(loc.tx);
    const status = await get<node.Confirmed>(`${server.nodeUrl}/transactions/status?txId=${swap.txId}`);
    expect(status.body).toMatchObject({ type: "Confirmed", blockHash: loc.blockHash, txIndex: loc.txIndex });
    expect(status.body.chainConfirmations).toBe(
      chain.height(0) - chain.getBlock(loc.blockHash)!.block.height + 1,
    );
    const unknown = await get<node.TxNotFound>(
      `${server.nodeUrl}/transactions/status?txId=${"cd".repeat(32)}`,
    );
    expect(unknown.body).toEqual({ type: "TxNotFound" });
    const events = await get<node.ContractEventsByTxId>(`${server.nodeUrl}/events/tx-id/${swap.txId}`);
    expect(events.body.events).toEqual([
      {
        blockHash: loc.blockHash,
        timestamp: loc.timestamp,
        contractAddress: pool.address,
        eventIndex: 2,
        fields: swap.fields,
      },
    ]);
    const byBlock = await get<node.ContractEventsByBlockHash>(
      `${server.nodeUrl}/events/block-hash/${loc.blockHash}`,
    );
    expect(byBlock.body.events).toEqual(chain.getBlock(loc.blockHash)!.events);
  });

  it("serves the oracle's posts like the other contract calls, on the node and the explorer", async () => {
    const oracle = chain.oracle();
    const post = chain
      .mainChain(oracle.chainIndex)
      .flatMap((b) => b.events)
      .find((e) => e.contractAddress === oracle.address && e.eventIndex === 1)!;
    const loc = chain.getTransaction(post.txId)!;
    expect((await get(`${server.nodeUrl}/transactions/details/${post.txId}`)).body).toEqual(loc.tx);
    const events = await get<node.ContractEventsByTxId>(`${server.nodeUrl}/events/tx-id/${post.txId}`);
    expect(events.body.events).toEqual(chain.eventsOfTx(post.txId));
    expect(events.body.events[0]!.fields.map((f) => f.type)).toEqual(["ByteVec", "U256", "U256"]);
    const accepted = await get<explorer.AcceptedTransaction>(
      `${server.explorerUrl}/transactions/${post.txId}`,
    );
    expect(accepted.body).toMatchObject({ type: "Accepted", hash: post.txId, blockHash: loc.blockHash });
    expect(accepted.body.inputs!.map((i) => i.address)).toEqual(
      loc.tx.unsigned.inputs.map(() => oracle.feeder),
    );
    const state = await get<node.ContractState>(`${server.nodeUrl}/contracts/${oracle.address}/state`);
    expect(state.status).toBe(200);
    expect(state.body.mutFields).toHaveLength(1 + oracle.keys.length);
  });

  it("answers fungible-token multicalls and contract state like the node", async () => {
    const token = chain.tokens()[1]!;
    const provider = new NodeProvider(server.nodeUrl);
    const meta = await provider.fetchFungibleTokenMetaData(token.id);
    expect(meta).toEqual({
      symbol: Buffer.from(token.symbol).toString("hex"),
      name: Buffer.from(token.name).toString("hex"),
      decimals: token.decimals,
      totalSupply: token.totalSupply,
    });
    const res = await fetch(`${server.nodeUrl}/contracts/multicall-contract`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        calls: [
          { group: 0, address: token.address, methodIndex: 3 },
          { group: 0, address: token.address, methodIndex: 9 },
        ],
      }),
    });
    const body = (await res.json()) as node.MultipleCallContractResult;
    expect(body.results[0]).toMatchObject({
      type: "CallContractSucceeded",
      returns: [{ type: "U256", value: token.totalSupply.toString() }],
    });
    expect(Object.keys(body.results[0]!).sort()).toEqual(
      ["contracts", "debugMessages", "events", "gasUsed", "returns", "txInputs", "txOutputs", "type"].sort(),
    );
    expect(body.results[1]!.type).toBe("CallContractFailed");
    const pool = chain.pools()[0]!;
    const state = await get<node.ContractState>(`${server.nodeUrl}/contracts/${pool.address}/state`);
    expect(state.body.address).toBe(pool.address);
    expect(state.body.mutFields.slice(0, 2)).toEqual([
      { type: "U256", value: pool.reserve0.toString() },
      { type: "U256", value: pool.reserve1.toString() },
    ]);
    expect((await get(`${server.nodeUrl}/contracts/${chain.addresses()[0]!.address}/state`)).status).toBe(
      404,
    );
  });

  it("answers call-contract for AlphBanX positions like the node", async () => {
    const ab = chain.plan().alphbanx;
    const call = async (address: string, methodIndex: number, args: node.Val[] = []) => {
      const res = await fetch(`${server.nodeUrl}/contracts/call-contract`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ group: 2, address, methodIndex, args }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as node.CallContractResult;
    };
    let found = 0;
    for (const u of chain.addresses()) {
      const r = await call(ab.loanManager.address, 23, [{ type: "Address", value: u.address }]);
      expect(r.type).toBe("CallContractSucceeded");
      const [loan] = (r as node.CallContractSucceeded).returns;
      expect(loan!.type).toBe("ByteVec");
      if (loan!.value === "") continue;
      found += 1;
      const address = addressFromContractId(String(loan!.value));
      const collateral = (await call(address, 16)) as node.CallContractSucceeded;
      expect(Object.keys(collateral).sort()).toEqual(
        [
          "contracts",
          "debugMessages",
          "events",
          "gasUsed",
          "returns",
          "txInputs",
          "txOutputs",
          "type",
        ].sort(),
      );
      expect(collateral.returns).toEqual([{ type: "U256", value: expect.stringMatching(/^[1-9]\d*$/) }]);
      expect(collateral.contracts[0]!.address).toBe(address);
      const debt = (await call(address, 17)) as node.CallContractSucceeded;
      expect(debt.returns).toEqual([{ type: "U256", value: expect.stringMatching(/^\d+$/) }]);
    }
    expect(found).toBeGreaterThan(0);
    const total = (await call(ab.loanManager.address, 17)) as node.CallContractSucceeded;
    expect(total.returns[0]!.type).toBe("U256");
    expect((await call(ab.loanManager.address, 99)).type).toBe("CallContractFailed");
  });

  it("serves explorer transactions, blocks, lists and pagination errors", async () => {
    const b = chain.mainChain(4).at(-2)!;
    const txId = b.block.transactions[0]!.unsigned.txId;
    const tx = await get<explorer.AcceptedTransaction>(`${server.explorerUrl}/transactions/${txId}`);
    expect(tx.body).toMatchObject({
      type: "Accepted",
      hash: txId,
      blockHash: b.block.hash,
      timestamp: b.block.timestamp,
    });
    const missing = await get<explorer.NotFound>(`${server.explorerUrl}/transactions/${"ef".repeat(32)}`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      detail: expect.stringMatching(/not found/),
      resource: expect.any(String),
    });
    const blk = await get<explorer.BlockEntry>(`${server.explorerUrl}/blocks/${b.block.hash}`);
    expect(blk.body).toMatchObject({
      hash: b.block.hash,
      mainChain: true,
      txNumber: b.block.transactions.length,
    });
    const txs = await get<explorer.Transaction[]>(
      `${server.explorerUrl}/blocks/${b.block.hash}/transactions?page=1&limit=100`,
    );
    expect(txs.body.map((t) => t.hash)).toEqual(b.block.transactions.map((t) => t.unsigned.txId));
    const list = await get<explorer.ListBlocks>(`${server.explorerUrl}/blocks?page=1&limit=3`);
    expect(list.body.blocks).toHaveLength(3);
    expect(list.body.total).toBe(1016);
    const user = chain.addresses()[1]!.address;
    const addrTxs = await get<explorer.Transaction[]>(`${server.explorerUrl}/addresses/${user}/transactions`);
    expect(addrTxs.body.length).toBe(20);
    const token = chain.tokens()[0]!;
    const tokTxs = await get<explorer.Transaction[]>(
      `${server.explorerUrl}/tokens/${token.id}/transactions?limit=5`,
    );
    expect(tokTxs.body).toHaveLength(5);
    const addrTok = await get<explorer.Transaction[]>(
      `${server.explorerUrl}/addresses/${token.minter}/tokens/${token.id}/transactions?limit=100`,
    );
    expect(addrTok.status).toBe(200);
    const heights = await get<explorer.PerChainHeight[]>(`${server.explorerUrl}/infos/heights`);
    expect(heights.body[15]).toEqual({
      chainFrom: 3,
      chainTo: 3,
      height: chain.height(15),
      value: chain.height(15),
    });
    for (const q of ["page=0", "limit=101", "limit=-1", "page=x"]) {
      const r = await get<{ detail: string }>(`${server.explorerUrl}/blocks?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.detail).toMatch(/Invalid value/);
    }
    expect((await get(`${server.explorerUrl}/blocks?limit=0`)).body).toMatchObject({ blocks: [] });
  });

  it("reflects a reorg on both APIs", async () => {
    const c = 10;
    const old = chain
      .mainChain(c)
      .slice(-2)
      .map((b) => b.block);
    const r = chain.reorg(c, 2);
    for (const h of r.orphaned) {
      expect((await get(`${server.nodeUrl}/blockflow/is-block-in-main-chain?blockHash=${h}`)).body).toBe(
        false,
      );
      expect((await get<explorer.BlockEntry>(`${server.explorerUrl}/blocks/${h}`)).body.mainChain).toBe(
        false,
      );
    }
    for (const h of r.added)
      expect((await get(`${server.nodeUrl}/blockflow/is-block-in-main-chain?blockHash=${h}`)).body).toBe(
        true,
      );
    const range = await get<node.BlocksAndEventsPerTimeStampRange>(
      `${server.nodeUrl}/blockflow/blocks-with-events?fromTs=${old[0]!.timestamp - 20_000}&toTs=${chain.latestTimestamp()}`,
    );
    const hashes = range.body.blocksAndEvents[c]!.map((x) => x.block.hash);
    expect(hashes.slice(-3)).toEqual(r.added);
    for (const h of r.orphaned) expect(hashes).not.toContain(h);
    const orphanTx = old[1]!.transactions[0]!.unsigned.txId;
    expect((await get(`${server.explorerUrl}/transactions/${orphanTx}`)).status).toBe(404);
    expect((await get(`${server.nodeUrl}/transactions/details/${orphanTx}`)).status).toBe(404);
    const atHeight = await get<node.HashesAtHeight>(
      `${server.nodeUrl}/blockflow/hashes?fromGroup=2&toGroup=2&height=${old[1]!.height}`,
    );
    // Main chain first, then the orphaned block and any ghost uncle made at that height.
    const [first, ...others] = atHeight.body.headers;
    expect(first).toBe(r.added[1]);
    expect(others).toContain(r.orphaned[1]);
    for (const h of others.filter((x) => x !== r.orphaned[1])) expect(chain.getBlock(h)?.uncle).toBe(true);
  });

  it("injects failures and counts requests per path", async () => {
    server.resetRequestCounts();
    server.setFailureMode("explorer-500");
    expect((await get(`${server.explorerUrl}/infos/heights`)).status).toBe(500);
    expect((await get(`${server.nodeUrl}/infos/chain-params`)).status).toBe(200);
    server.setFailureMode("node-500");
    const failed = await get<{ detail: string }>(`${server.nodeUrl}/infos/chain-params`);
    expect(failed.status).toBe(500);
    expect(typeof failed.body.detail).toBe("string");
    expect((await get(`${server.explorerUrl}/infos/heights`)).status).toBe(200);
    server.setFailureMode("none");
    expect(server.requestCounts()).toEqual({ "/explorer/infos/heights": 2, "/infos/chain-params": 2 });
    expect(server.requestCount("/explorer")).toBe(2);
  });
});

describe("devnet server lifecycle", () => {
  it("never answers explorer requests in explorer-timeout mode until closed", async () => {
    const chain = createDevnetChain({ seed: 2 });
    chain.advance(50);
    const server = await startDevnetServer(chain);
    server.setFailureMode("explorer-timeout");
    let settled = false;
    const pending = fetch(`${server.explorerUrl}/infos/heights`).finally(() => {
      settled = true;
    });
    await waitFor(() => server.requestCount("/explorer/infos/heights") === 1);
    expect((await get(`${server.nodeUrl}/infos/chain-params`)).status).toBe(200);
    expect(settled).toBe(false);
    await server.close();
    await expect(pending).rejects.toThrow();
  });

  it("produces blocks live and runs via runDevnet", async () => {
    const lines: string[] = [];
    const devnet = await runDevnet({ port: 0, blocks: 100, live: 200, reorgEvery: 10, seed: 3 }, (l) =>
      lines.push(l),
    );
    try {
      expect(lines.join("\n")).toContain(devnet.explorerUrl);
      const start = devnet.chain.latestTimestamp();
      await waitFor(() => devnet.chain.latestTimestamp() > start + 10_000);
      const heights = await get<explorer.PerChainHeight[]>(`${devnet.explorerUrl}/infos/heights`);
      expect(heights.body.reduce((s, h) => s + h.height, 0)).toBeGreaterThan(100);
    } finally {
      await devnet.close();
    }
    const chain = createDevnetChain({ seed: 4 });
    const stop = startLive(chain, { blocksPerSecond: 500 });
    await waitFor(() => chain.height(0) > 3);
    stop();
  });
});
