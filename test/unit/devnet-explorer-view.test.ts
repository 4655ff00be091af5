import { beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import {
  acceptedTransaction,
  addressTransactions,
  blockTransactions,
  explorerBlock,
  listBlocks,
  perChainHeights,
  tokenTransactions,
} from "../../devnet/explorer-view.ts";

function noNulls(value: unknown): void {
  JSON.stringify(value, (_k, v) => {
    expect(v).not.toBeNull();
    return v;
  });
}

describe("devnet explorer view", () => {
  let chain: DevnetChain;
  beforeAll(() => {
    chain = createDevnetChain({ seed: 21 });
    chain.advance(1200);
  });

  it("maps a swap tx like the explorer: enriched inputs, contract input, generated outputs", () => {
    const pool = chain.pools()[0]!;
    const swapEvent = chain
      .mainChain(0)
      .flatMap((b) => b.events)
      .find((e) => e.contractAddress === pool.address && e.eventIndex === 2)!;
    const tx = acceptedTransaction(chain, swapEvent.txId)!;
    noNulls(tx);
    expect(tx.type).toBe("Accepted");
    expect(tx.coinbase).toBe(false);
    expect(tx.scriptOpt).toMatch(/^[0-9a-f]+$/);
    expect(Object.keys(tx)).toEqual([
      "type",
      "hash",
      "blockHash",
      "timestamp",
      "inputs",
      "outputs",
      "version",
      "networkId",
      "scriptOpt",
      "gasAmount",
      "gasPrice",
      "scriptExecutionOk",
      "inputSignatures",
      "scriptSignatures",
      "coinbase",
    ]);
    const assetInputs = tx.inputs!.filter((i) => !i.contractInput);
    const contractInputs = tx.inputs!.filter((i) => i.contractInput);
    expect(contractInputs).toHaveLength(1);
    expect(contractInputs[0]!.unlockScript).toBeUndefined();
    expect(contractInputs[0]!.address).toBe(pool.address);
    for (const i of assetInputs) {
      expect(i.unlockScript).toMatch(/^00(02|03)[0-9a-f]{64}$/);
      const spent = chain.getOutput(i.outputRef.key)!;
      expect([i.txHashRef, i.address, i.attoAlphAmount]).toEqual([
        spent.txId,
        spent.address,
        spent.attoAlphAmount.toString(),
      ]);
      expect("tokens" in i).toBe(spent.tokens.length > 0);
    }
    const contractOut = tx.outputs!.find((o) => o.type === "ContractOutput")!;
    expect(contractOut.fixedOutput).toBe(false);
    expect("message" in contractOut).toBe(false);
    expect("lockTime" in contractOut).toBe(false);
    const fixed = tx.outputs!.filter((o) => o.fixedOutput);
    expect(fixed.every((o) => o.type === "AssetOutput" && "message" in o && !("lockTime" in o))).toBe(true);
    for (const o of tx.outputs!) if ("tokens" in o) expect(o.tokens!.length).toBeGreaterThan(0);
  });

  it("marks coinbase txs, keeps their lockTime and omits empty optionals", () => {
    const b = chain.mainChain(3).at(-1)!;
    const coinbase = acceptedTransaction(chain, b.block.transactions.at(-1)!.unsigned.txId)!;
    noNulls(coinbase);
    expect(coinbase.coinbase).toBe(true);
    expect(coinbase.inputs).toEqual([]);
    expect(coinbase.scriptOpt).toBeUndefined();
    expect("scriptOpt" in coinbase).toBe(false);
    expect(coinbase.outputs![0]).toMatchObject({
      type: "AssetOutput",
      lockTime: b.block.timestamp + 30_000_000,
      fixedOutput: true,
    });
    expect("tokens" in coinbase.outputs![0]!).toBe(false);
    expect("spent" in coinbase.outputs![0]!).toBe(false);
  });

  it("sets `spent` on outputs spent on the main chain", () => {
    // A recent user tx of chain 5 (any block that has one: which blocks do depends on the seed).
    const spender = chain
      .mainChain(5)
      .slice(0, -2)
      .flatMap((b) => b.block.transactions.filter((t) => t.unsigned.inputs.length > 0))
      .at(-1)!;
    const ref = spender.unsigned.inputs[0]!.outputRef;
    const creator = chain.getOutput(ref.key)!.txId;
    const out = acceptedTransaction(chain, creator)!.outputs!.find((o) => o.key === ref.key)!;
    expect(out.spent).toBe(spender.unsigned.txId);
  });

  it("maps blocks with parent, txNumber and mainChain; genesis has no parent", () => {
    const b = chain.mainChain(6).at(-1)!;
    const e = explorerBlock(chain, b.block.hash)!;
    noNulls(e);
    expect(e).toMatchObject({
      hash: b.block.hash,
      height: b.block.height,
      chainFrom: 1,
      chainTo: 2,
      mainChain: true,
    });
    expect(e.parent).toBe(chain.mainChain(6).at(-2)!.block.hash);
    expect(e.txNumber).toBe(b.block.transactions.length);
    expect("ghostUncles" in e).toBe(b.block.ghostUncles.length > 0);
    const genesis = explorerBlock(chain, chain.mainChain(6)[0]!.block.hash)!;
    expect("parent" in genesis).toBe(false);
    const txs = blockTransactions(chain, b.block.hash, { page: 1, limit: 100 })!;
    expect(txs.map((t) => t.hash)).toEqual(b.block.transactions.map((t) => t.unsigned.txId));
    expect(txs.at(-1)!.coinbase).toBe(true);
    expect(txs.every((t) => !("type" in t))).toBe(true);
  });

  it("reports orphaned blocks with mainChain=false and hides their txs", () => {
    const fresh = createDevnetChain({ seed: 22 });
    fresh.advance(300);
    const old = fresh.mainChain(9).at(-1)!;
    fresh.reorg(9, 1);
    expect(explorerBlock(fresh, old.block.hash)!.mainChain).toBe(false);
    expect(acceptedTransaction(fresh, old.block.transactions[0]!.unsigned.txId)).toBeUndefined();
    expect(blockTransactions(fresh, old.block.hash, { page: 1, limit: 20 })).toHaveLength(
      old.block.transactions.length,
    );
  });

  it("lists address and token txs newest first, main chain only", () => {
    const user = chain.addresses()[0]!.address;
    const txs = addressTransactions(chain, user, { page: 1, limit: 100 });
    expect(txs.length).toBeGreaterThan(5);
    const ts = txs.map((t) => t.timestamp);
    expect([...ts].sort((a, b) => b - a)).toEqual(ts);
    for (const t of txs) {
      const touched = [...t.inputs!.map((i) => i.address), ...t.outputs!.map((o) => o.address)];
      expect(touched).toContain(user);
    }
    expect(addressTransactions(chain, user, { page: 2, limit: 3 })).toEqual(txs.slice(3, 6));
    const token = chain.tokens()[0]!;
    const all = <T>(fetch: (page: number) => T[]): T[] => {
      const out: T[] = [];
      for (let page = 1; ; page++) {
        const items = fetch(page);
        out.push(...items);
        if (items.length < 100) return out;
      }
    };
    const tokTxs = all((page) => tokenTransactions(chain, token.id, { page, limit: 100 }));
    expect(tokTxs.at(-1)!.hash).toBe(token.mintTxId);
    const minterTok = all((page) => addressTransactions(chain, token.minter, { page, limit: 100 }, token.id));
    expect(minterTok.map((t) => t.hash)).toContain(token.mintTxId);
    expect(minterTok.length).toBeLessThanOrEqual(tokTxs.length);
  });

  it("lists blocks and heights", () => {
    const list = listBlocks(chain, { page: 1, limit: 5 });
    expect(list.total).toBe(1200 + 16);
    expect(list.blocks).toHaveLength(5);
    expect(list.blocks![0]!.timestamp).toBe(chain.latestTimestamp());
    expect(listBlocks(chain, { page: 1, limit: 1, reverse: true }).blocks![0]!.height).toBe(0);
    const heights = perChainHeights(chain);
    expect(heights).toHaveLength(16);
    expect(heights[6]).toEqual({ chainFrom: 1, chainTo: 2, height: chain.height(6), value: chain.height(6) });
  });
});
