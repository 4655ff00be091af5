import type { node } from "@alephium/web3";
import {
  addressFromContractId,
  blockChainIndex,
  Contract,
  CreateContractEventAddresses,
  DestroyContractEventAddresses,
  getSenderAddress,
} from "@alephium/web3";
import { beforeAll, describe, expect, it } from "vitest";
import {
  COINBASE_LOCK_MS,
  createDevnetChain,
  type DevnetChain,
  GENESIS_TIMESTAMP,
  swapAmountOut,
} from "../../devnet/chain.ts";
import { DEVNET_MAINNET_PROFILE } from "../../devnet/types.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";

const CHAINS = 16;

/** getAddressFromUnlockScript is not re-exported by web3's index; getSenderAddress applies it to input 0. */
const addressOfUnlockScript = (unlockScript: string): string =>
  getSenderAddress({ unsigned: { inputs: [{ unlockScript }] } } as unknown as node.Transaction);

function mainTxs(chain: DevnetChain): { tx: node.Transaction; block: node.BlockEntry; index: number }[] {
  const out: { tx: node.Transaction; block: node.BlockEntry; index: number }[] = [];
  for (let c = 0; c < CHAINS; c++)
    for (const b of chain.mainChain(c))
      b.block.transactions.forEach((tx, index) => {
        out.push({ tx, block: b.block, index });
      });
  return out;
}

function checkStructure(chain: DevnetChain): void {
  for (let c = 0; c < CHAINS; c++) {
    const blocks = chain.mainChain(c);
    blocks.forEach((b, h) => {
      const blk = b.block;
      expect(blk.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(blockChainIndex(blk.hash)).toEqual({ fromGroup: Math.floor(c / 4), toGroup: c % 4 });
      expect([blk.chainFrom * 4 + blk.chainTo, blk.height, b.mainChain]).toEqual([c, h, true]);
      expect(blk.deps).toHaveLength(7);
      if (h === 0) {
        expect(blk.timestamp).toBe(GENESIS_TIMESTAMP);
        return;
      }
      const parent = blocks[h - 1]!.block;
      expect(blk.deps[3 + blk.chainTo]).toBe(parent.hash);
      expect(blk.timestamp).toBeGreaterThan(parent.timestamp);
    });
  }
}

/** Every main-chain input spends an output created by an earlier main-chain tx, and only once. */
function checkUtxoConsistency(chain: DevnetChain): void {
  const created = new Set<string>();
  const txs = mainTxs(chain);
  for (const { tx } of txs) {
    for (const o of [...tx.unsigned.fixedOutputs, ...tx.generatedOutputs]) created.add(o.key);
  }
  const spent = new Set<string>();
  for (const { tx } of txs) {
    for (const ref of [...tx.unsigned.inputs.map((i) => i.outputRef), ...tx.contractInputs]) {
      expect(created.has(ref.key)).toBe(true);
      expect(spent.has(ref.key)).toBe(false);
      spent.add(ref.key);
      expect(chain.spentBy(ref.key)).toBe(tx.unsigned.txId);
    }
  }
}

describe("devnet chain", () => {
  let chain: DevnetChain;
  beforeAll(() => {
    chain = createDevnetChain({ seed: 42 });
    chain.advance(1600);
  });

  it("is deterministic for a seed and differs across seeds", () => {
    const a = createDevnetChain({ seed: 9 });
    const b = createDevnetChain({ seed: 9 });
    const c = createDevnetChain({ seed: 10 });
    a.advance(300);
    b.advance(300);
    c.advance(300);
    const dump = (x: DevnetChain) =>
      JSON.stringify(Array.from({ length: CHAINS }, (_, i) => x.mainChain(i).map((b) => b.block)));
    expect(dump(a)).toBe(dump(b));
    expect(dump(a)).not.toBe(dump(c));
    a.reorg(5, 2);
    b.reorg(5, 2);
    expect(dump(a)).toBe(dump(b));
  });

  it("encodes chain index in hashes, links parents via deps[3 + chainTo] and keeps heights consecutive", () => {
    checkStructure(chain);
    const total = Array.from({ length: CHAINS }, (_, i) => chain.height(i)).reduce((s, h) => s + h, 0);
    expect(total).toBe(1600);
  });

  it("interleaves timestamps across chains and produces in timestamp order", () => {
    const fresh = createDevnetChain({ seed: 4, startTimestamp: 1_700_000_000_000 });
    const produced = fresh.advance(64).map((b) => b.block.timestamp);
    expect([...produced].sort((x, y) => x - y)).toEqual(produced);
    expect(new Set(fresh.advance(16).map((b) => b.chainIndex)).size).toBeGreaterThan(8);
    const until = fresh.latestTimestamp() + 20_000;
    const more = fresh.produceUntil(until);
    expect(more.length).toBeGreaterThan(16);
    expect(more.every((b) => b.block.timestamp <= until)).toBe(true);
    expect(fresh.advance(1)[0]!.block.timestamp).toBeGreaterThan(until);
  });

  it("puts the coinbase last: no inputs, 20000 gas, locked 500 min, one output per ghost uncle", () => {
    for (let c = 0; c < CHAINS; c++) {
      for (const { block } of chain.mainChain(c).slice(1)) {
        const coinbase = block.transactions.at(-1)!;
        expect(coinbase.unsigned.inputs).toEqual([]);
        expect(coinbase.unsigned.gasAmount).toBe(20000);
        expect(coinbase.unsigned.gasPrice).toBe("1000000000");
        expect(coinbase.unsigned.fixedOutputs).toHaveLength(1 + block.ghostUncles.length);
        for (const o of coinbase.unsigned.fixedOutputs)
          expect(o.lockTime).toBe(block.timestamp + COINBASE_LOCK_MS);
        for (const tx of block.transactions.slice(0, -1))
          expect(tx.unsigned.inputs.length).toBeGreaterThan(0);
      }
    }
  });

  it("references orphan ghost uncles that stay off the main chain", () => {
    const withUncle = mainTxs(chain).filter(
      ({ block, index }) => index === 0 && block.ghostUncles.length > 0,
    );
    expect(withUncle.length).toBeGreaterThan(0);
    for (const { block } of withUncle) {
      const uncle = chain.getBlock(block.ghostUncles[0]!.blockHash)!;
      expect(uncle.mainChain).toBe(false);
      expect(uncle.block.height).toBe(block.height - 1);
      const c = block.chainFrom * 4 + block.chainTo;
      expect(chain.hashesAt(c, uncle.block.height)).toEqual([
        chain.mainChain(c)[uncle.block.height]!.block.hash,
        uncle.block.hash,
      ]);
      expect(chain.getTransaction(uncle.block.transactions[0]!.unsigned.txId)?.mainChain).toBe(false);
    }
  });

  it("recovers each input's owner from its unlock script and keeps a consistent UTXO set", () => {
    let inputs = 0;
    for (const { tx } of mainTxs(chain)) {
      for (const input of tx.unsigned.inputs) {
        const spent = chain.getOutput(input.outputRef.key)!;
        expect(spent.hint).toBe(input.outputRef.hint);
        expect(addressOfUnlockScript(input.unlockScript)).toBe(spent.address);
        inputs += 1;
      }
    }
    expect(inputs).toBeGreaterThan(1000);
    checkUtxoConsistency(chain);
  });

  it("conserves ALPH (minus gas) and tokens, except at a token's issuance and what its events say it burned", () => {
    const plan = chain.plan();
    const furnaces = new Set(plan.furnaces.map((f) => f.address));
    /**
     * Tokens a tx burns: Furnace `Burned` (token id as ASCII hex, or raw on group 0's generation-1 furnace) and
     * Chain Reaction V2 token games' joins (counted on the factory's re-emit, not on the game's own event).
     */
    const burnedBy = (txId: string): Map<string, bigint> => {
      const out = new Map<string, bigint>();
      for (const e of chain.eventsOfTx(txId)) {
        const f = e.fields.map((v) => String(v.value));
        if (furnaces.has(e.contractAddress) && e.eventIndex === 0)
          out.set(f[1]!.length === 64 ? f[1]! : Buffer.from(f[1]!, "hex").toString("utf8"), BigInt(f[2]!));
        if (e.contractAddress === plan.chainReaction.factoryV2.address && e.eventIndex === 2)
          if (f[7] !== ALPH_TOKEN_ID) out.set(f[7]!, (out.get(f[7]!) ?? 0n) + BigInt(f[6]!));
      }
      return out;
    };
    // Planned tokens and the dapps' tokens (their contracts carry token metadata).
    const supplyIssuedBy = (txId: string, id: string): bigint | undefined => {
      const t = chain.contractInfo(addressFromContractId(id))?.token;
      return t?.mintTxId === txId ? t.totalSupply : undefined;
    };
    let burns = 0;
    for (const { tx, block, index } of mainTxs(chain)) {
      if (block.height === 0 || index === block.transactions.length - 1) continue;
      const ins = [...tx.unsigned.inputs.map((i) => i.outputRef), ...tx.contractInputs].map(
        (r) => chain.getOutput(r.key)!,
      );
      const outs = [...tx.unsigned.fixedOutputs, ...tx.generatedOutputs];
      const fee = BigInt(tx.unsigned.gasAmount) * BigInt(tx.unsigned.gasPrice);
      const alphIn = ins.reduce((s, o) => s + o.attoAlphAmount, 0n);
      const alphOut = outs.reduce((s, o) => s + BigInt(o.attoAlphAmount), 0n);
      expect(alphIn).toBe(alphOut + fee);
      const delta = new Map<string, bigint>();
      for (const o of ins) for (const t of o.tokens) delta.set(t.id, (delta.get(t.id) ?? 0n) - t.amount);
      for (const o of outs) {
        for (const t of o.tokens) delta.set(t.id, (delta.get(t.id) ?? 0n) + BigInt(t.amount));
        if (o.tokens.length > 0) expect(BigInt(o.attoAlphAmount)).toBeGreaterThanOrEqual(10n ** 15n);
      }
      const burned = burnedBy(tx.unsigned.txId);
      burns += burned.size;
      for (const [id, d] of delta) {
        expect(d).toBe(supplyIssuedBy(tx.unsigned.txId, id) ?? -(burned.get(id) ?? 0n));
      }
    }
    expect(burns).toBeGreaterThan(0);
  });

  it("issues tokens with a ContractCreated system event and fungible metadata", () => {
    const tokens = chain.tokens();
    expect(tokens).toHaveLength(6);
    for (const t of tokens) {
      const group = Number.parseInt(t.id.slice(-2), 16);
      expect(group).toBeLessThan(4);
      expect(t.address).toBe(addressFromContractId(t.id));
      const loc = chain.getTransaction(t.mintTxId)!;
      expect(loc.mainChain).toBe(true);
      expect(loc.tx.unsigned.scriptOpt).toMatch(/^[0-9a-f]+$/);
      const created = chain
        .eventsOfTx(t.mintTxId)
        .find((e) => e.eventIndex === Contract.ContractCreatedEventIndex)!;
      expect(created.contractAddress).toBe(CreateContractEventAddresses[group]);
      expect(created.fields).toEqual([
        { type: "Address", value: t.address },
        { type: "ByteVec", value: "" },
        { type: "ByteVec", value: "0001" },
      ]);
      expect(
        loc.tx.generatedOutputs.some((o) => o.type === "ContractOutput" && o.address === t.address),
      ).toBe(true);
      expect(chain.contractInfo(t.address)?.token?.symbol).toBe(t.symbol);
    }
  });

  it("creates Ayin-like pairs and swaps that follow x*y=k with a 0.3% fee", () => {
    const pools = chain.pools();
    expect(pools.length).toBeGreaterThan(0);
    const byAddress = new Map(pools.map((p) => [p.address, p]));
    const factory = pools[0]!.factoryAddress;
    const pairCreated = chain
      .mainChain(0)
      .flatMap((b) => b.events.filter((e) => e.contractAddress === factory));
    expect(pairCreated.map((e) => e.fields[2]!.value)).toEqual(pools.map((p) => p.id));
    let swaps = 0;
    let mints = 0;
    for (const b of chain.mainChain(0)) {
      for (const e of b.events) {
        const pool = byAddress.get(e.contractAddress);
        if (!pool) continue;
        const tx = chain.getTransaction(e.txId)!.tx;
        const reserves = (o: {
          attoAlphAmount: bigint | string;
          tokens: { id: string; amount: bigint | string }[];
        }) => {
          const of = (id: string) =>
            id === ALPH_TOKEN_ID
              ? BigInt(o.attoAlphAmount) - 10n ** 17n
              : BigInt(o.tokens.find((t) => t.id === id)?.amount ?? 0n);
          return [of(pool.token0), of(pool.token1)] as const;
        };
        const [r0, r1] = reserves(chain.getOutput(tx.contractInputs[0]!.key)!);
        const [n0, n1] = reserves(tx.generatedOutputs.find((o) => o.type === "ContractOutput")!);
        if (e.eventIndex === 0) {
          mints += 1;
          expect([n0 - r0, n1 - r1]).toEqual([
            BigInt(e.fields[1]!.value as string),
            BigInt(e.fields[2]!.value as string),
          ]);
          continue;
        }
        expect(e.eventIndex).toBe(2);
        expect(e.fields.map((f) => f.type)).toEqual(["Address", "U256", "U256", "U256", "U256", "Address"]);
        const [a0In, a1In, a0Out, a1Out] = e.fields.slice(1, 5).map((f) => BigInt(f.value as string)) as [
          bigint,
          bigint,
          bigint,
          bigint,
        ];
        if (a0In > 0n) expect(a1Out).toBe(swapAmountOut(a0In, r0, r1));
        else expect(a0Out).toBe(swapAmountOut(a1In, r1, r0));
        expect([n0, n1]).toEqual([r0 + a0In - a0Out, r1 + a1In - a1Out]);
        // k grows (fee stays in the pool) and the fee-adjusted invariant holds.
        expect(n0 * n1).toBeGreaterThanOrEqual(r0 * r1);
        expect((n0 * 1000n - a0In * 3n) * (n1 * 1000n - a1In * 3n)).toBeGreaterThanOrEqual(
          r0 * r1 * 1_000_000n,
        );
        swaps += 1;
      }
    }
    expect(mints).toBeGreaterThanOrEqual(pools.length);
    expect(swaps).toBeGreaterThan(5);
  });

  it("has failed script txs and generic contract events", () => {
    const failed = mainTxs(chain).filter(({ tx }) => !tx.scriptExecutionOk);
    expect(failed.length).toBeGreaterThan(0);
    for (const { tx } of failed) {
      expect(tx.contractInputs).toEqual([]);
      expect(tx.generatedOutputs).toEqual([]);
      expect(tx.unsigned.scriptOpt).toBeDefined();
      expect(chain.eventsOfTx(tx.unsigned.txId)).toEqual([]);
    }
    const plan = chain.plan();
    // Guessing rooms are destroyed once played: known from the hub's ContractCreated events.
    const rooms = Array.from({ length: CHAINS }, (_, c) => chain.mainChain(c))
      .flat()
      .flatMap((b) => b.events)
      .filter((e) => e.eventIndex === -1 && e.fields[1]!.value === plan.chainReaction.hub.address)
      .map((e) => String(e.fields[0]!.value));
    const known = new Set([
      ...chain.tokens().map((t) => t.address),
      ...chain.pools().flatMap((p) => [p.address, p.factoryAddress]),
      chain.oracle().address,
      plan.randomness.address,
      ...plan.furnaces.map((f) => f.address),
      plan.chainReaction.factoryV2.address,
      plan.chainReaction.v1.address,
      plan.chainReaction.hub.address,
      ...rooms,
      ...CreateContractEventAddresses,
      ...DestroyContractEventAddresses,
    ]);
    const generic = Array.from({ length: CHAINS }, (_, c) => chain.mainChain(c))
      .flat()
      .flatMap((b) => b.events)
      .filter(
        (e) =>
          !known.has(e.contractAddress) &&
          !["dapp", "chainreaction-game"].includes(chain.contractInfo(e.contractAddress)?.kind ?? ""),
      );
    expect(generic.length).toBeGreaterThan(0);
    expect(chain.contractInfo(generic[0]!.contractAddress)?.kind).toBe("generic");
  });

  it("exposes a RawBlock view", () => {
    const b = chain.mainChain(7).at(-1)!;
    expect(chain.rawBlock(b.block.hash)).toEqual({
      chainIndex: 7,
      block: b.block,
      events: b.events,
      mainChain: true,
    });
    expect(chain.rawBlock("00".repeat(32))).toBeUndefined();
  });
});

describe("devnet mainnet-shaped profile", () => {
  it("leaves most blocks with only the coinbase and gives user transactions to about a third", () => {
    const chain = createDevnetChain({ seed: 3, ...DEVNET_MAINNET_PROFILE });
    chain.advance(2000);
    let blocks = 0;
    let coinbaseOnly = 0;
    for (let c = 0; c < 16; c++)
      for (const b of chain.mainChain(c)) {
        if (b.block.height === 0) continue;
        blocks++;
        if (b.block.transactions.length === 1) coinbaseOnly++;
      }
    // The dapps' own transactions come on top of the user ones: more than the 70 % quiet share carry something.
    expect(coinbaseOnly / blocks).toBeGreaterThan(0.5);
    expect(coinbaseOnly / blocks).toBeLessThan(0.7);
  });

  it("refuses a share outside 0 to 1", () => {
    expect(() => createDevnetChain({ userTxBlockShare: 1.5 })).toThrow("invalid userTxBlockShare 1.5");
  });
});

describe("devnet reorg", () => {
  it("replaces the last `depth` blocks with depth+1 new ones and keeps the old ones retrievable", () => {
    const chain = createDevnetChain({ seed: 11 });
    chain.advance(800);
    const c = 0;
    const oldHeight = chain.height(c);
    const old = chain
      .mainChain(c)
      .slice(-2)
      .map((b) => b.block);
    const oldTxIds = old.flatMap((b) => b.transactions.map((t) => t.unsigned.txId));
    const r = chain.reorg(c, 2);
    expect(r.orphaned).toEqual(old.map((b) => b.hash));
    expect(r.added).toHaveLength(3);
    expect(chain.height(c)).toBe(oldHeight + 1);
    for (const h of r.orphaned) expect(chain.getBlock(h)!.mainChain).toBe(false);
    for (const h of r.added) expect(chain.getBlock(h)!.mainChain).toBe(true);
    for (const id of oldTxIds) expect(chain.getTransaction(id)!.mainChain).toBe(false);
    expect(chain.hashesAt(c, oldHeight)).toEqual([r.added[1], r.orphaned[1]]);
    // The new branch forks from the block below the orphans.
    expect(chain.getBlock(r.added[0]!)!.block.deps[3]).toBe(chain.mainChain(c)[oldHeight - 2]!.block.hash);
    const range = chain
      .blocksInRange(old[0]!.timestamp - 60_000, chain.latestTimestamp())
      [c]!.map((b) => b.block.hash);
    expect(range.slice(-3)).toEqual(r.added);
    for (const h of r.orphaned) expect(range).not.toContain(h);
    checkStructure(chain);
    checkUtxoConsistency(chain);
  });

  it("survives many random reorgs interleaved with production", () => {
    const chain = createDevnetChain({ seed: 12 });
    chain.advance(400);
    for (let i = 0; i < 40; i++) {
      chain.advance(25);
      expect(chain.randomReorg(3)).toBeDefined();
    }
    checkStructure(chain);
    checkUtxoConsistency(chain);
    expect(() => chain.reorg(0, 7)).toThrow(/depth/);
  });
});
