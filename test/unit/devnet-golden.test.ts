/**
 * Golden test of the simulated network: a seed and a fixed sequence of calls (production, reorgs) must keep
 * making byte-identical blocks, events, accessor results and explorer views. The hash pins the chain whose
 * wallets take inputs smallest first and consolidate (devnet/ledger.ts) and that runs the DeFi dapps of
 * devnet/dapps/; change it only for an intended change of the generated chain.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
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

const CHAINS = 16;
const GOLDEN = "b50f0cf3cc41bd65872552fba4d507ec863b8c955ea15f31b70e94c6744eb155";

/** Everything the chain and its explorer view serve, in a fixed order, with only public fields. */
function snapshot(chain: DevnetChain): unknown[] {
  const out: unknown[] = [];
  const txIds: string[] = [];
  const outputKeys: string[] = [];
  for (let c = 0; c < CHAINS; c++) {
    out.push(["height", c, chain.height(c)]);
    for (let h = 0; h <= chain.height(c) + 1; h++) {
      for (const hash of chain.hashesAt(c, h)) {
        const b = chain.getBlock(hash)!;
        out.push(["block", c, h, b.chainIndex, b.block, b.events, b.mainChain, b.uncle]);
        out.push(["raw", chain.rawBlock(hash)]);
        out.push(["explorer-block", explorerBlock(chain, hash)]);
        out.push(["explorer-block-txs", blockTransactions(chain, hash, { page: 1, limit: 100 })]);
        for (const tx of b.block.transactions) {
          txIds.push(tx.unsigned.txId);
          for (const o of [...tx.unsigned.fixedOutputs, ...tx.generatedOutputs]) outputKeys.push(o.key);
        }
      }
    }
  }
  for (const id of txIds) {
    const loc = chain.getTransaction(id)!;
    out.push(["tx", loc.blockHash, loc.txIndex, loc.timestamp, loc.chainIndex, loc.mainChain, loc.coinbase]);
    out.push(["tx-events", chain.eventsOfTx(id)]);
    out.push(["accepted", acceptedTransaction(chain, id)]);
  }
  for (const key of outputKeys) {
    const o = chain.getOutput(key)!;
    out.push([
      "output",
      o.key,
      o.hint,
      o.txId,
      o.blockHash,
      o.type,
      o.fixedOutput,
      o.address,
      o.attoAlphAmount,
      o.tokens,
      o.lockTime,
      o.message,
      chain.spentBy(key),
    ]);
  }
  const contracts = new Set<string>();
  for (const t of chain.tokens()) contracts.add(t.address);
  for (const p of chain.pools()) contracts.add(p.address).add(p.factoryAddress);
  for (let c = 0; c < CHAINS; c++)
    for (const b of chain.mainChain(c)) for (const e of b.events) contracts.add(e.contractAddress);
  for (const a of contracts) out.push(["contract", a, chain.contractState(a), chain.contractInfo(a)]);
  out.push(["tokens", chain.tokens()], ["pools", chain.pools()]);
  out.push(["addresses", chain.addresses()], ["miners", chain.miners()]);
  out.push(["plan", chain.plan()], ["oracle", chain.oracle()]);
  out.push(["latest", chain.latestTimestamp(), chain.version(), chain.options]);
  out.push(["heights", perChainHeights(chain)]);
  for (const reverse of [false, true])
    for (const page of [1, 2, 7]) out.push(["list", listBlocks(chain, { page, limit: 100, reverse })]);
  for (const u of chain.addresses())
    out.push(["address-txs", addressTransactions(chain, u.address, { page: 1, limit: 100 })]);
  for (const t of chain.tokens()) {
    out.push(["token-txs", tokenTransactions(chain, t.id, { page: 1, limit: 100 })]);
    const holder = chain.addresses()[0]!.address;
    out.push(["address-token-txs", addressTransactions(chain, holder, { page: 1, limit: 100 }, t.id)]);
  }
  return out;
}

const hashOf = (value: unknown): string =>
  createHash("sha256")
    .update(JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)))
    .digest("hex");

describe("devnet golden chain", () => {
  it("makes the same chain, events and explorer views for a seed as before", () => {
    const chain = createDevnetChain({ seed: 2024 });
    chain.advance(700);
    chain.reorg(3, 2);
    chain.reorg(0, 4);
    chain.advance(40);
    expect(chain.randomReorg(3)).toBeDefined();
    chain.produceUntil(chain.latestTimestamp() + 30_000);
    chain.advance(60);
    expect(hashOf(snapshot(chain))).toBe(GOLDEN);
  });
});
