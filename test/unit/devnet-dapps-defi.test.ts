/**
 * The simulated network's DeFi dapps (devnet/dapps/): Elexium, AlphBanX, DeadRare, MyOnion.fun and the Wormhole
 * bridge, checked from what the chain serves (events, transactions, contract state, call-contract answers) against
 * the layouts of dapp-spec.md, without the normalizer's decoders.
 */
import type { node } from "@alephium/web3";
import {
  addressFromContractId,
  bs58,
  Contract,
  CreateContractEventAddresses,
  codec,
  hexToBinUnsafe,
  isValidAddress,
  MINIMAL_CONTRACT_DEPOSIT,
  subContractId,
} from "@alephium/web3";
import { blake2b } from "@noble/hashes/blake2b";
import { beforeAll, describe, expect, it } from "vitest";
import { createDevnetChain, type DevnetChain } from "../../devnet/chain.ts";
import { stableK } from "../../devnet/dapps/elexium.ts";
import { myonionBytecode, myonionCodeHash } from "../../devnet/dapps/myonion.ts";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";

const HOUR = 3_600_000;
type Layout = node.Val["type"][];
const U = "U256";
const B = "ByteVec";
const A = "Address";

interface Ev extends node.ContractEventByBlockHash {
  block: node.BlockEntry;
}

function events(chain: DevnetChain): Ev[] {
  const out: Ev[] = [];
  for (let c = 0; c < 16; c++)
    for (const b of chain.mainChain(c)) for (const e of b.events) out.push({ ...e, block: b.block });
  return out;
}

const txOf = (chain: DevnetChain, txId: string): node.Transaction => chain.getTransaction(txId)!.tx;
const signerOf = (chain: DevnetChain, tx: node.Transaction): string =>
  chain.getOutput(tx.unsigned.inputs[0]!.outputRef.key)!.address;

/** The external calls of a script: the contract id pushed right before each CallExternal, and its method. */
function scriptCalls(hex: string): { contractId: string; method: number; addressArgs: string[] }[] {
  const instrs = codec.script.scriptCodec.decode(hexToBinUnsafe(hex)).methods[0]!.instrs;
  const out: { contractId: string; method: number; addressArgs: string[] }[] = [];
  let addresses: string[] = [];
  for (let i = 0; i < instrs.length; i++) {
    const ins = instrs[i]!;
    if (ins.name === "AddressConst")
      addresses.push(bs58.encode(codec.lockupScript.lockupScriptCodec.encode(ins.value)));
    if (ins.name !== "CallExternal") continue;
    const prev = instrs[i - 1];
    if (prev?.name === "BytesConst")
      out.push({
        contractId: Buffer.from(prev.value).toString("hex"),
        method: ins.index,
        addressArgs: addresses,
      });
    addresses = [];
  }
  return out;
}

describe("devnet DeFi dapps", () => {
  let chain: DevnetChain;
  let all: Ev[];
  beforeAll(() => {
    chain = createDevnetChain({ seed: 3 });
    chain.produceUntil(chain.options.startTimestamp + 2 * HOUR);
    all = events(chain);
  });

  const of = (address: string): Ev[] => all.filter((e) => e.contractAddress === address);

  /** Every event of a contract has a known index, with exactly its layout, and every known index occurs. */
  function expectLayouts(address: string, layouts: Record<number, Layout>): void {
    const seen = new Set<number>();
    for (const e of of(address)) {
      const layout = layouts[e.eventIndex];
      expect(layout, `event ${e.eventIndex} of ${address}`).toBeDefined();
      expect(e.fields.map((f) => f.type)).toEqual(layout);
      for (const f of e.fields) {
        if (f.type === "U256") expect(String(f.value)).toMatch(/^\d+$/);
        if (f.type === "ByteVec") expect(String(f.value)).toMatch(/^([0-9a-f]{2})*$/);
        if (f.type === "Address") expect(isValidAddress(String(f.value))).toBe(true);
      }
      seen.add(e.eventIndex);
    }
    expect([...seen].sort()).toEqual(Object.keys(layouts).map(Number).sort());
  }

  it("plans every contract before its block and deploys it on its home chain", () => {
    const plan = chain.plan();
    const planned = [
      plan.elexium.factory,
      ...plan.elexium.pools,
      ...plan.elexium.tokens,
      plan.alphbanx.abd,
      plan.alphbanx.abx,
      plan.alphbanx.borrower,
      plan.alphbanx.loanManager,
      plan.alphbanx.stake,
      plan.alphbanx.auction,
      plan.deadrare.marketplace,
      plan.deadrare.collection,
      ...plan.deadrare.nfts,
      plan.myonion.launcher,
      plan.myonion.router,
      plan.wormhole.governance,
      plan.wormhole.tokenBridge,
      ...plan.wormhole.pools,
    ];
    for (const c of planned) {
      expect(c.address).toBe(addressFromContractId(c.id));
      expect(chain.contractInfo(c.address)?.kind).toBe("dapp");
    }
    expect(createDevnetChain({ seed: chain.options.seed }).plan().alphbanx).toEqual(plan.alphbanx);
    expect(chain.contractInfo(plan.alphbanx.abd.address)?.token).toMatchObject({
      symbol: "ABD",
      decimals: 9,
    });
    expect(chain.contractInfo(plan.alphbanx.abx.address)?.token).toMatchObject({
      symbol: "ABX",
      decimals: 9,
    });
  });

  it("emits Elexium's layouts: pool created with a stable flag, Mint, Burn and Swap", () => {
    const { factory, pools } = chain.plan().elexium;
    expectLayouts(factory.address, { 0: [B, B, "Bool", B, U] });
    const created = of(factory.address);
    expect(created.map((e) => [e.fields[2]!.value, e.fields[3]!.value, e.fields[4]!.value])).toEqual(
      pools.map((p, i) => [p.stable, p.id, String(i + 1)]),
    );
    for (const p of pools) {
      expectLayouts(p.address, { 1: [A, U, U], 2: [A, A, U, U], 3: [A, U, U, U, U, A] });
      // The pool is the factory's sub-contract, created in the tx of the factory's event.
      const e = created.find((x) => x.fields[3]!.value === p.id)!;
      const sys = chain.eventsOfTx(e.txId).find((x) => x.eventIndex === Contract.ContractCreatedEventIndex)!;
      expect(sys.fields.slice(0, 2).map((f) => f.value)).toEqual([p.address, factory.address]);
    }
  });

  it("keeps Elexium reserves equal to what the events moved, on the volatile and the stable curve", () => {
    const { pools, tokens } = chain.plan().elexium;
    const decimals = (id: string): number =>
      id === ALPH_TOKEN_ID ? 18 : tokens.find((t) => t.id === id)!.decimals;
    for (const p of pools) {
      let r0 = 0n;
      let r1 = 0n;
      let swaps = 0;
      for (const e of of(p.address)) {
        const v = e.fields.map((f) => (f.type === "U256" ? BigInt(String(f.value)) : 0n));
        if (e.eventIndex === 1) {
          r0 += v[1]!;
          r1 += v[2]!;
        } else if (e.eventIndex === 2) {
          r0 -= v[2]!;
          r1 -= v[3]!;
        } else {
          const k = p.stable ? stableK(r0, r1, decimals(p.token0), decimals(p.token1)) : r0 * r1;
          r0 += v[1]! - v[3]!;
          r1 += v[2]! - v[4]!;
          const after = p.stable ? stableK(r0, r1, decimals(p.token0), decimals(p.token1)) : r0 * r1;
          expect(after).toBeGreaterThanOrEqual(k);
          swaps += 1;
        }
      }
      expect(swaps).toBeGreaterThan(20);
      const state = chain.contractState(p.address)!;
      expect(state.mutFields.slice(0, 2).map((f) => BigInt(String(f.value)))).toEqual([r0, r1]);
      const held = (id: string): bigint =>
        id === ALPH_TOKEN_ID
          ? BigInt(state.asset.attoAlphAmount) - MINIMAL_CONTRACT_DEPOSIT
          : BigInt(state.asset.tokens?.find((t) => t.id === id)?.amount ?? "0");
      expect([held(p.token0), held(p.token1)]).toEqual([r0, r1]);
      // The stable pool trades two dollars near 1:1 (random trades drift it by up to about half).
      if (p.stable) expect(Number(r0) / Number(r1)).toBeGreaterThan(0.66);
      if (p.stable) expect(Number(r0) / Number(r1)).toBeLessThan(1.5);
    }
  });

  it("runs AlphBanX through real scripts: every method, real token moves and a liquidation", () => {
    const ab = chain.plan().alphbanx;
    const roles = new Map([
      [ab.borrower.id, "borrower"],
      [ab.loanManager.id, "loanManager"],
      [ab.stake.id, "stake"],
      [ab.auction.id, "auction"],
    ]);
    const seen = new Map<string, Set<number>>();
    const liquidated: { borrower: string; txId: string }[] = [];
    for (const b of chain.mainChain(ab.chainIndex)) {
      for (const tx of b.block.transactions) {
        if (!tx.scriptExecutionOk || !tx.unsigned.scriptOpt) continue;
        let calls: ReturnType<typeof scriptCalls>;
        try {
          calls = scriptCalls(tx.unsigned.scriptOpt);
        } catch {
          continue; // the devnet's other scripts are random bytes
        }
        for (const c of calls) {
          const role = roles.get(c.contractId);
          if (!role) continue;
          seen.set(role, (seen.get(role) ?? new Set()).add(c.method));
          const signer = signerOf(chain, tx);
          const received = (id: string): bigint =>
            tx.generatedOutputs
              .filter((o) => o.address === signer)
              .reduce((s, o) => s + BigInt(o.tokens?.find((t) => t.id === id)?.amount ?? "0"), 0n);
          if (role === "borrower" && c.method === 11) {
            expect(received(ab.abd.id)).toBeGreaterThan(0n);
            const created = chain
              .eventsOfTx(tx.unsigned.txId)
              .find((e) => e.eventIndex === Contract.ContractCreatedEventIndex)!;
            expect(created.contractAddress).toBe(CreateContractEventAddresses[2]);
            expect(created.fields[1]!.value).toBe(ab.loanManager.address);
          }
          if (role === "loanManager") {
            expect(c.addressArgs).toHaveLength(1);
            liquidated.push({ borrower: c.addressArgs[0]!, txId: tx.unsigned.txId });
          }
          if (role === "stake" && c.method === 32) expect(received(ab.abx.id)).toBeGreaterThan(0n);
          if (role === "auction" && c.method === 41) expect(received(ab.abd.id)).toBeGreaterThan(0n);
        }
      }
    }
    expect(seen.get("borrower")).toEqual(new Set([11, 7, 10, 19, 20, 0]));
    expect(seen.get("stake")).toEqual(new Set([30, 31, 32, 33]));
    expect(seen.get("auction")).toEqual(new Set([36, 41, 40]));
    expect(seen.get("loanManager")).toEqual(new Set([5]));
    expect(liquidated.length).toBeGreaterThan(0);
    for (const l of liquidated) {
      // The liquidated loan is destroyed: its contract input is spent, nothing remade at its address.
      const tx = txOf(chain, l.txId);
      expect(tx.contractInputs.length).toBe(3);
      expect(
        chain.eventsOfTx(l.txId).some((e) => e.eventIndex === Contract.ContractDestroyedEventIndex),
      ).toBe(true);
      expect(isValidAddress(l.borrower)).toBe(true);
    }
  });

  it("answers call-contract for AlphBanX positions and totals", () => {
    const ab = chain.plan().alphbanx;
    let debts = 0n;
    let collaterals = 0n;
    let open = 0;
    for (const u of chain.addresses()) {
      const [loan] = chain.dappCall(ab.loanManager.address, 23, [{ type: "Address", value: u.address }])!;
      expect(loan!.type).toBe("ByteVec");
      if (loan!.value === "") continue;
      open += 1;
      const address = addressFromContractId(String(loan!.value));
      const [collateral] = chain.dappCall(address, 16, [])!;
      const [debt] = chain.dappCall(address, 17, [])!;
      expect(collateral!.type).toBe("U256");
      expect(BigInt(String(collateral!.value))).toBe(
        BigInt(chain.contractState(address)!.asset.attoAlphAmount) - MINIMAL_CONTRACT_DEPOSIT,
      );
      collaterals += BigInt(String(collateral!.value));
      debts += BigInt(String(debt!.value));
    }
    expect(open).toBeGreaterThan(0);
    expect(chain.dappCall(ab.loanManager.address, 17, [])).toEqual([
      { type: "U256", value: debts.toString() },
    ]);
    expect(chain.dappCall(ab.loanManager.address, 16, [])).toEqual([
      { type: "U256", value: collaterals.toString() },
    ]);
    expect(chain.dappCall(ab.loanManager.address, 99, [])).toBeUndefined();
  });

  it("emits DeadRare's marketplace layouts; a sale moves the NFT to the buyer and ALPH to the seller", () => {
    const { marketplace, collection, nfts } = chain.plan().deadrare;
    expectLayouts(marketplace.address, {
      0: [U, U, B, B, A, B],
      1: [U, U, B, B, A, A],
      2: [U, B, B, A],
      3: [U, B, B, U, U],
    });
    for (const sold of of(marketplace.address).filter((e) => e.eventIndex === 1)) {
      const [price, , nft, coll, seller, buyer] = sold.fields.map((f) => String(f.value));
      expect(coll).toBe(collection.id);
      expect(nfts.map((n) => n.id)).toContain(nft);
      const tx = txOf(chain, sold.txId);
      expect(signerOf(chain, tx)).toBe(buyer);
      expect(
        tx.generatedOutputs.some((o) => o.address === buyer && o.tokens?.some((t) => t.id === nft)),
      ).toBe(true);
      const paid = tx.generatedOutputs.find((o) => o.address === seller && o.type === "AssetOutput")!;
      expect(BigInt(paid.attoAlphAmount)).toBeGreaterThan((BigInt(price!) * 9n) / 10n);
    }
  });

  it("emits MyOnion's launcher and router layouts with real token moves", () => {
    const { launcher, router, tokens } = chain.plan().myonion;
    // After the last launch the owner upgrades the launcher: 2 MigrateCommence, 3 MigrateApply, 0 ChangeOwnerCommence.
    expectLayouts(launcher.address, {
      0: [A, A],
      2: [A, B],
      3: [A, B],
      5: [B, A, B, B, U, U, B],
      6: [B, A, B],
    });
    expectLayouts(router.address, { 5: [B, A, B, U, U, U, U, A] });
    const upgrades = of(launcher.address).filter((e) => e.eventIndex !== 5 && e.eventIndex !== 6);
    expect(upgrades.map((e) => e.eventIndex)).toEqual([2, 3, 0]);
    const lastLaunch = of(launcher.address)
      .filter((e) => e.eventIndex === 5)
      .at(-1)!;
    expect(upgrades[0]!.block.timestamp).toBeGreaterThan(lastLaunch.block.timestamp);
    // MigrateApply carries the code the node's contract state shows from then on, whose hash is not the registered one.
    const code = String(upgrades[1]!.fields[1]!.value);
    expect(code).toBe(myonionBytecode("launcher", 2));
    const state = chain.contractState(launcher.address)!;
    expect(state.bytecode).toBe(code);
    expect(state.codeHash).toBe(
      Buffer.from(blake2b(Buffer.from(code, "hex"), { dkLen: 32 })).toString("hex"),
    );
    expect(state.codeHash).toBe(myonionCodeHash("launcher", 2));
    expect(state.codeHash).not.toBe(myonionCodeHash("launcher", 1));
    expect(chain.contractState(router.address)!.codeHash).toBe(myonionCodeHash("router", 1));
    for (const e of of(launcher.address).filter((x) => x.eventIndex === 5)) {
      const t = tokens.find((x) => x.id === e.fields[0]!.value)!;
      const sys = chain.eventsOfTx(e.txId).filter((x) => x.eventIndex === Contract.ContractCreatedEventIndex);
      expect(sys.map((x) => [x.fields[0]!.value, x.fields[1]!.value])).toContainEqual([
        t.address,
        launcher.address,
      ]);
      expect(Buffer.from(String(e.fields[2]!.value), "hex").toString()).toBe(t.symbol);
    }
    let buys = 0;
    let sells = 0;
    for (const e of of(router.address)) {
      const [tokenId, caller, tokenIn, , amountOut] = e.fields.map((f) => String(f.value));
      const tx = txOf(chain, e.txId);
      const out = tx.generatedOutputs.find((o) => o.address === caller)!;
      if (tokenIn === ALPH_TOKEN_ID) {
        buys += 1;
        expect(out.tokens?.find((t) => t.id === tokenId)?.amount).toBe(amountOut);
      } else {
        sells += 1;
        expect(tokenIn).toBe(tokenId);
        expect(out.attoAlphAmount).toBe(amountOut);
      }
    }
    expect(buys).toBeGreaterThan(0);
    expect(sells).toBeGreaterThan(0);
  });

  it("emits Wormhole messages with the fork's transfer payloads, and redeems through the TokenBridgeForChain's method 7", () => {
    const wh = chain.plan().wormhole;
    const pool = wh.pools[0]!;
    // The id rule reproduces mainnet's bridged USDT from mainnet's TokenBridge (README §8).
    const mainnet = subContractId(
      "7f42f8e21128e70c7a30098a32c5c388de7eb4ffc6ef7dd86f72e8e11acc4800",
      `020002${pool.originToken}`,
      0,
    );
    expect(mainnet.startsWith("556d9582")).toBe(true);
    expect(pool.id).toBe(subContractId(wh.tokenBridge.id, `020002${pool.originToken}`, 0));
    expectLayouts(wh.governance.address, { 0: [B, U, U, B, B, U] });
    const msgs = of(wh.governance.address);
    expect(msgs.map((e) => e.fields[2]!.value)).toEqual(msgs.map((_, i) => String(i)));
    const chains = new Set<number>();
    for (const e of msgs) {
      const [sender, target, , nonce, payload] = e.fields.map((f) => String(f.value));
      expect(sender).toBe(wh.tokenBridge.id);
      expect(target).toBe("2");
      expect(nonce).toMatch(/^[0-9a-f]{8}$/);
      // 01 ‖ amount (32) ‖ token (32) ‖ token chain (2) ‖ recipient length (2) ‖ recipient (20) ‖ fee (32).
      const p = Buffer.from(payload!, "hex");
      expect(p.length).toBe(121);
      expect(p[0]).toBe(1);
      const amount = BigInt(`0x${p.subarray(1, 33).toString("hex")}`);
      const tokenAddress = p.subarray(33, 65).toString("hex");
      const tokenChain = p.readUInt16BE(65);
      expect(p.readUInt16BE(67)).toBe(20);
      expect(BigInt(`0x${p.subarray(89, 121).toString("hex")}`)).toBe(0n);
      chains.add(tokenChain);
      const tx = txOf(chain, e.txId);
      const spent = tx.unsigned.inputs.map((i) => chain.getOutput(i.outputRef.key)!);
      if (tokenChain === 2) {
        expect(
          subContractId(wh.tokenBridge.id, `02${p.subarray(65, 67).toString("hex")}${tokenAddress}`, 0),
        ).toBe(pool.id);
        // USDT has 6 decimals: the normalized amount is the amount sent.
        const sent = spent
          .flatMap((o) => o.tokens)
          .reduce((s, t) => s + (t.id === pool.id ? t.amount : 0n), 0n);
        const back = tx.unsigned.fixedOutputs
          .flatMap((o) => o.tokens)
          .reduce((s, t) => s + (t.id === pool.id ? BigInt(t.amount) : 0n), 0n);
        expect(sent - back).toBe(amount);
      } else {
        expect(tokenChain).toBe(255);
        expect(tokenAddress).toBe(ALPH_TOKEN_ID);
      }
    }
    expect(chains).toEqual(new Set([2, 255]));
    const bridgeOut = (a: string) => (o: { address: string }) => o.address === a;
    const redemptions = chain
      .mainChain(wh.chainIndex)
      .flatMap((b) => b.block.transactions)
      .filter(
        (tx) =>
          tx.contractInputs.length === 2 &&
          tx.generatedOutputs.some(bridgeOut(wh.bridgeForChain.address)) &&
          tx.generatedOutputs.some(bridgeOut(pool.address)),
      );
    expect(redemptions.length).toBeGreaterThan(0);
    expect(wh.bridgeForChain.id).toBe(subContractId(wh.tokenBridge.id, "010002", 0));
    for (const tx of redemptions) {
      expect(chain.eventsOfTx(tx.unsigned.txId)).toEqual([]);
      const calls = scriptCalls(tx.unsigned.scriptOpt!);
      expect(calls.map((c) => [c.contractId, c.method])).toEqual([[wh.bridgeForChain.id, 7]]);
      const signer = signerOf(chain, tx);
      expect(
        tx.generatedOutputs.some((o) => o.address === signer && o.tokens?.some((t) => t.id === pool.id)),
      ).toBe(true);
    }
  });

  it("undoes the dapps' blocks in reorgs of their home chains", () => {
    const c = createDevnetChain({ seed: 3 });
    c.produceUntil(c.options.startTimestamp + HOUR / 2);
    for (const plan of [c.plan().elexium, c.plan().alphbanx, c.plan().deadrare, c.plan().myonion]) {
      c.reorg(plan.chainIndex, 6);
      c.advance(40);
    }
    const ab = c.plan().alphbanx;
    let debts = 0n;
    for (const u of c.addresses()) {
      const [loan] = c.dappCall(ab.loanManager.address, 23, [{ type: "Address", value: u.address }])!;
      if (loan!.value !== "")
        debts += BigInt(String(c.dappCall(addressFromContractId(String(loan!.value)), 17, [])![0]!.value));
    }
    expect(c.dappCall(ab.loanManager.address, 17, [])).toEqual([{ type: "U256", value: debts.toString() }]);
  });
});
