/**
 * The devnet's ledger: key pairs (users, miners), every output ever made, the UTXO set with its spends, and
 * the contracts' current state. Block production and reorgs change it only through these functions, so what
 * a block did can be undone (see {@link Undo}).
 */
import { addressFromPublicKey, addressToBytes, DUST_AMOUNT, groupOfAddress } from "@alephium/web3";
import { ADDRESS_GROUPS } from "../lib/chain/types.ts";
import type { Rng } from "./random.ts";
import type {
  BlockCtx,
  ContractRec,
  DevnetAddress,
  DevnetContractKind,
  OutRec,
  OutSpec,
  Undo,
} from "./types.ts";

/** Most inputs a generated transaction spends (the node allows 256; generated transactions stay small). */
const MAX_INPUTS = 12;
/**
 * A wallet holding more spendable outputs than this also spends its smallest ones that add no new token to the
 * change (up to {@link MAX_INPUTS}), as a wallet consolidates dust: it bounds every owner's UTXO set, so the
 * cost of choosing inputs stays flat however long the chain runs.
 */
const CONSOLIDATE_ABOVE = 8;

export function addTokens(into: Map<string, bigint>, tokens: Iterable<{ id: string; amount: bigint }>): void {
  for (const t of tokens) into.set(t.id, (into.get(t.id) ?? 0n) + t.amount);
}

/** Positive token amounts, ordered by id (the order outputs list them in). */
export const sortedTokens = (m: Map<string, bigint>): { id: string; amount: bigint }[] =>
  [...m]
    .filter(([, a]) => a > 0n)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, amount]) => ({ id, amount }));

/** djb2 as used by Alephium script hints (web3 keeps its copy private). */
function djb2(bytes: Uint8Array): number {
  let hash = 5381;
  for (const b of bytes) hash = ((hash << 5) + hash + (b & 0xff)) | 0;
  return hash;
}

const amountOf = (o: OutRec, id: string): bigint => {
  for (const t of o.tokens) if (t.id === id) return t.amount;
  return 0n;
};

/** Ascending by `value`, ties by key: a strict total order, so the choice is the same for a seed. */
const ascending =
  (value: (o: OutRec) => bigint) =>
  (a: OutRec, b: OutRec): number => {
    const va = value(a);
    const vb = value(b);
    if (va !== vb) return va < vb ? -1 : 1;
    return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  };

/**
 * At most `slots` outputs of `pool` (ascending by `value`) worth at least `need`: smallest first like the node's
 * wallet, largest first when the smallest would take too many; undefined when neither fits.
 */
function cover(
  pool: OutRec[],
  value: (o: OutRec) => bigint,
  need: bigint,
  slots: number,
): OutRec[] | undefined {
  for (const order of [pool, [...pool].reverse()]) {
    const out: OutRec[] = [];
    let sum = 0n;
    for (const o of order) {
      if (sum >= need || out.length === slots) break;
      out.push(o);
      sum += value(o);
    }
    if (sum >= need) return out;
  }
  return undefined;
}

/** The devnet's key pairs: users spread evenly over the groups, and one miner per group. */
export interface Accounts {
  users: DevnetAddress[];
  usersByGroup: DevnetAddress[][];
  perGroup: number;
  /** Users and the feeder, by address (the owners whose outputs the chain spends). */
  userByAddress: Map<string, DevnetAddress>;
  miners: DevnetAddress[];
  /** The price oracle's feeder: funded at genesis like a user, but it only posts oracle values. */
  feeder: DevnetAddress;
}

/**
 * Makes the key pairs (users, one miner per group, then the oracle feeder of `feederGroup`); they are the first
 * values drawn from the seed.
 */
export function createAccounts(rng: Rng, userCount: number, feederGroup: number): Accounts {
  const makeKeyPair = (): DevnetAddress => {
    const publicKey = (rng.chance(0.5) ? "02" : "03") + rng.hex(32);
    const address = addressFromPublicKey(publicKey);
    return { address, publicKey, group: groupOfAddress(address) };
  };
  const users: DevnetAddress[] = [];
  const usersByGroup: DevnetAddress[][] = Array.from({ length: ADDRESS_GROUPS }, () => []);
  const perGroup = Math.max(1, Math.ceil(userCount / ADDRESS_GROUPS));
  while (users.length < perGroup * ADDRESS_GROUPS) {
    const kp = makeKeyPair();
    const bucket = usersByGroup[kp.group]!;
    if (bucket.length < perGroup) {
      bucket.push(kp);
      users.push(kp);
    }
  }
  const miners: DevnetAddress[] = [];
  while (miners.length < ADDRESS_GROUPS) {
    const kp = makeKeyPair();
    if (kp.group === miners.length) miners.push(kp);
  }
  let feeder = makeKeyPair();
  while (feeder.group !== feederGroup) feeder = makeKeyPair();
  const userByAddress = new Map([...users, feeder].map((u) => [u.address, u]));
  return { users, usersByGroup, perGroup, userByAddress, miners, feeder };
}

export interface Ledger {
  /** Every output ever made (main chain or not). */
  output(key: string): OutRec | undefined;
  /** Unspent output by key. */
  utxo(key: string): OutRec | undefined;
  /** Every unspent output. */
  utxos(): IterableIterator<OutRec>;
  /** Tx id of the main-chain tx that spent an output. */
  spentBy(key: string): string | undefined;
  /** Script hint of an address (contract hints have the low bit cleared). */
  hintOf(address: string, contract: boolean): number;
  /** Current contracts by id. */
  contracts(): IterableIterator<ContractRec>;
  contractsOn(chainIndex: number, kind: DevnetContractKind): ContractRec[];
  contractByAddress(address: string): ContractRec | undefined;
  contractById(id: string): ContractRec | undefined;
  /** Whether a contract's creation is as deep as outputs must be to mature (no reorg can undo it any more). */
  settled(c: ContractRec): boolean;
  tokenBalance(owner: DevnetAddress, ts: number): Map<string, bigint>;
  /** Picks inputs covering `alph` (+ dust for the change) and the given tokens; undefined when impossible. */
  gather(
    owner: DevnetAddress,
    ts: number,
    alph: bigint,
    tokens?: Map<string, bigint>,
  ): { inputs: OutRec[]; change: OutSpec } | undefined;
  /** Spends inputs and adds outputs of a tx of the block being built (recorded in its undo). */
  apply(ctx: BlockCtx, txId: string, inputs: OutRec[], made: OutRec[]): void;
  /** Removes outputs from the UTXO set (they stay known as outputs). */
  forget(outputs: OutRec[]): void;
  /** Snapshots a contract before the block being built changes it. */
  touchContract(ctx: BlockCtx, c: ContractRec): void;
  /** Removes a contract the block being built destroys (undo restores it). */
  removeContract(ctx: BlockCtx, c: ContractRec): void;
  /** Adds a contract created by the block being built. */
  addContract(ctx: BlockCtx, c: ContractRec): void;
  /** Reverts what a block did. */
  undo(undo: Undo): void;
}

/**
 * Outputs mature once their chain has `maturity` more blocks (and their lock time passed); `chainHeight` is the
 * current main-chain height of a chain.
 */
export function createLedger(deps: {
  maturity: number;
  chainHeight: (chainIndex: number) => number;
}): Ledger {
  const outputs = new Map<string, OutRec>();
  const utxos = new Map<string, OutRec>();
  const utxosByOwner = new Map<string, Set<string>>();
  /** The subset of each owner's UTXOs that hold tokens (token balances scan only these). */
  const tokenUtxosByOwner = new Map<string, Set<string>>();
  const spent = new Map<string, string>();
  const contracts = new Map<string, ContractRec>();
  const hintCache = new Map<string, number>();

  const isMature = (o: OutRec, ts: number): boolean =>
    o.lockTime <= ts && (o.height === 0 || deps.chainHeight(o.chainIndex) >= o.height + deps.maturity);

  const spendable = (owner: DevnetAddress, ts: number): OutRec[] => {
    const keys = utxosByOwner.get(owner.address);
    if (!keys) return [];
    const out: OutRec[] = [];
    for (const k of keys) {
      const o = utxos.get(k);
      if (o && isMature(o, ts)) out.push(o);
    }
    return out;
  };

  const tokenBalance = (owner: DevnetAddress, ts: number): Map<string, bigint> => {
    const m = new Map<string, bigint>();
    for (const k of tokenUtxosByOwner.get(owner.address) ?? []) {
      const o = utxos.get(k)!;
      if (isMature(o, ts)) addTokens(m, o.tokens);
    }
    return m;
  };

  const gather: Ledger["gather"] = (owner, ts, alph, tokens = new Map()) => {
    const candidates = spendable(owner, ts);
    const chosen: OutRec[] = [];
    const used = new Set<string>();
    const take = (list: OutRec[]): void => {
      for (const o of list) {
        chosen.push(o);
        used.add(o.key);
      }
    };
    for (const [id, need] of tokens) {
      let have = 0n;
      for (const o of chosen) have += amountOf(o, id);
      const value = (o: OutRec): bigint => amountOf(o, id);
      const pool = candidates.filter((o) => !used.has(o.key) && value(o) > 0n).sort(ascending(value));
      const picked = cover(pool, value, need - have, MAX_INPUTS - chosen.length);
      if (!picked) return undefined;
      take(picked);
    }
    const alphOf = (o: OutRec): bigint => o.attoAlphAmount;
    const sumAlph = (): bigint => chosen.reduce((s, o) => s + o.attoAlphAmount, 0n);
    // ALPH comes from token-free outputs first, as the node's wallet does, then from any.
    const free = candidates.filter((o) => !used.has(o.key) && o.tokens.length === 0).sort(ascending(alphOf));
    let picked = cover(free, alphOf, alph + DUST_AMOUNT - sumAlph(), MAX_INPUTS - chosen.length);
    if (!picked) {
      const any = candidates.filter((o) => !used.has(o.key)).sort(ascending(alphOf));
      picked = cover(any, alphOf, alph + DUST_AMOUNT - sumAlph(), MAX_INPUTS - chosen.length);
    }
    if (!picked) return undefined;
    take(picked);
    if (chosen.length === 0) return undefined;
    let unspent = candidates.length - chosen.length;
    if (unspent > CONSOLIDATE_ABOVE) {
      const moved = new Set<string>(tokens.keys());
      for (const o of chosen) for (const t of o.tokens) moved.add(t.id);
      const dust = candidates
        .filter((o) => !used.has(o.key) && o.tokens.every((t) => moved.has(t.id)))
        .sort(ascending(alphOf));
      for (const o of dust) {
        if (unspent <= CONSOLIDATE_ABOVE || chosen.length === MAX_INPUTS) break;
        take([o]);
        unspent -= 1;
      }
    }
    const total = sumAlph();
    const changeTokens = new Map<string, bigint>();
    for (const o of chosen) addTokens(changeTokens, o.tokens);
    for (const [id, need] of tokens) changeTokens.set(id, changeTokens.get(id)! - need);
    for (const [id, amount] of changeTokens) if (amount === 0n) changeTokens.delete(id);
    return {
      inputs: chosen,
      change: { type: "AssetOutput", address: owner.address, alph: total - alph, tokens: changeTokens },
    };
  };

  const indexAdd = (index: Map<string, Set<string>>, o: OutRec): void => {
    let set = index.get(o.address);
    if (!set) {
      set = new Set();
      index.set(o.address, set);
    }
    set.add(o.key);
  };
  const addUtxo = (o: OutRec): void => {
    utxos.set(o.key, o);
    indexAdd(utxosByOwner, o);
    if (o.tokens.length > 0) indexAdd(tokenUtxosByOwner, o);
  };
  const removeUtxo = (o: OutRec): void => {
    utxos.delete(o.key);
    utxosByOwner.get(o.address)?.delete(o.key);
    tokenUtxosByOwner.get(o.address)?.delete(o.key);
  };
  const forget = (list: OutRec[]): void => {
    for (const o of list) removeUtxo(o);
  };

  const touchContract: Ledger["touchContract"] = (ctx, c) => {
    if (ctx.undo.contracts.has(c.id)) return;
    ctx.undo.contracts.set(c.id, {
      ...c,
      tokens: new Map(c.tokens),
      ...(c.pair ? { pair: { ...c.pair } } : {}),
      ...(c.oracle ? { oracle: { values: [...c.oracle.values], nextDue: [...c.oracle.nextDue] } } : {}),
      ...(c.dapp ? { dapp: structuredClone(c.dapp) } : {}),
      ...(c.defi ? { defi: structuredClone(c.defi) } : {}),
    });
  };

  return {
    output: (key) => outputs.get(key),
    utxo: (key) => utxos.get(key),
    utxos: () => utxos.values(),
    spentBy: (key) => spent.get(key),
    hintOf(address, contract) {
      let h = hintCache.get(address);
      if (h === undefined) {
        h = djb2(addressToBytes(address).slice(1));
        hintCache.set(address, h);
      }
      return contract ? h & ~1 : h | 1;
    },
    contracts: () => contracts.values(),
    contractsOn: (chainIndex, kind) =>
      [...contracts.values()].filter((c) => c.homeChain === chainIndex && c.kind === kind),
    contractByAddress(address) {
      for (const c of contracts.values()) if (c.address === address) return c;
      return undefined;
    },
    contractById: (id) => contracts.get(id),
    settled: (c) => deps.chainHeight(c.homeChain) >= c.createdHeight + deps.maturity,
    tokenBalance,
    gather,
    apply(ctx, txId, inputs, made) {
      for (const i of inputs) {
        removeUtxo(i);
        spent.set(i.key, txId);
        ctx.undo.spent.push(i);
      }
      for (const o of made) {
        outputs.set(o.key, o);
        addUtxo(o);
        ctx.undo.created.push(o);
      }
    },
    forget,
    touchContract,
    addContract(ctx, c) {
      contracts.set(c.id, c);
      ctx.undo.contracts.set(c.id, null);
    },
    removeContract(ctx, c) {
      touchContract(ctx, c);
      contracts.delete(c.id);
    },
    undo(undo) {
      forget(undo.created);
      for (const o of undo.spent) {
        spent.delete(o.key);
        addUtxo(o);
      }
      for (const [id, snapshot] of undo.contracts) {
        if (snapshot === null) contracts.delete(id);
        else contracts.set(id, snapshot);
      }
    },
  };
}
