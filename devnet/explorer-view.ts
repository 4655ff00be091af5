/**
 * Pure mappings from the devnet test double to explorer-backend JSON (alephium/explorer-backend shapes).
 *
 * Field presence follows the recorded samples: optional scalars/objects (`scriptOpt`, `lockTime` (only > 0),
 * `spent`, `tokens`, `unlockScript`, `parent`, `ghostUncles`) are omitted when empty, while the tx-level arrays
 * (`inputs`, `outputs`, `inputSignatures`, `scriptSignatures`) are always present, as the explorer sends them.
 */
import type { explorer, node } from "@alephium/web3";
import type { DevnetBlock, DevnetChain, DevnetTxLocation } from "./chain.ts";

/** Explorer pagination (page ≥ 1, limit 0..100). */
export interface Page {
  page: number;
  limit: number;
}

/** Hash rate reported for every block: the devnet has no PoW, this is a fixed plausible value. */
export const DEVNET_HASH_RATE = "1152921504606846976";

const tokensOut = (tokens: { id: string; amount: bigint | string }[]): explorer.Token[] | undefined =>
  tokens.length === 0 ? undefined : tokens.map((t) => ({ id: t.id, amount: t.amount.toString() }));

function input(chain: DevnetChain, ref: node.OutputRef, unlockScript: string | undefined): explorer.Input {
  const spent = chain.getOutput(ref.key);
  const tokens = spent && tokensOut(spent.tokens);
  return {
    outputRef: { hint: ref.hint, key: ref.key },
    ...(unlockScript !== undefined ? { unlockScript } : {}),
    ...(spent
      ? { txHashRef: spent.txId, address: spent.address, attoAlphAmount: spent.attoAlphAmount.toString() }
      : {}),
    ...(tokens ? { tokens } : {}),
    contractInput: unlockScript === undefined,
  };
}

function output(
  chain: DevnetChain,
  o: node.FixedAssetOutput | node.Output,
  type: string,
  fixedOutput: boolean,
): explorer.Output {
  const tokens = tokensOut(o.tokens);
  const spent = chain.spentBy(o.key);
  const base = {
    hint: o.hint,
    key: o.key,
    attoAlphAmount: o.attoAlphAmount,
    address: o.address,
    ...(tokens ? { tokens } : {}),
  };
  if (type === "ContractOutput") {
    return { type: "ContractOutput", ...base, ...(spent ? { spent } : {}), fixedOutput: false };
  }
  const asset = o as node.FixedAssetOutput;
  return {
    type: "AssetOutput",
    ...base,
    ...(asset.lockTime > 0 ? { lockTime: asset.lockTime } : {}),
    message: asset.message,
    ...(spent ? { spent } : {}),
    fixedOutput,
  };
}

/** Explorer `Transaction` (list element, no `type`) of a located transaction. */
export function toExplorerTransaction(chain: DevnetChain, loc: DevnetTxLocation): explorer.Transaction {
  const { tx } = loc;
  const u = tx.unsigned;
  return {
    hash: u.txId,
    blockHash: loc.blockHash,
    timestamp: loc.timestamp,
    inputs: [
      ...u.inputs.map((i) => input(chain, i.outputRef, i.unlockScript)),
      ...tx.contractInputs.map((ref) => input(chain, ref, undefined)),
    ],
    outputs: [
      ...u.fixedOutputs.map((o) => output(chain, o, "AssetOutput", true)),
      ...tx.generatedOutputs.map((o) => output(chain, o, o.type, false)),
    ],
    version: u.version,
    networkId: u.networkId,
    ...(u.scriptOpt ? { scriptOpt: u.scriptOpt } : {}),
    gasAmount: u.gasAmount,
    gasPrice: u.gasPrice,
    scriptExecutionOk: tx.scriptExecutionOk,
    inputSignatures: tx.inputSignatures,
    scriptSignatures: tx.scriptSignatures,
    coinbase: loc.coinbase,
  };
}

/** `GET /transactions/{hash}`: the accepted tx (`"type":"Accepted"`) if it is on the main chain. */
export function acceptedTransaction(
  chain: DevnetChain,
  txId: string,
): explorer.AcceptedTransaction | undefined {
  const loc = chain.getTransaction(txId);
  if (!loc?.mainChain) return undefined;
  return { type: "Accepted", ...toExplorerTransaction(chain, loc) };
}

/** Explorer `BlockEntry` of any known block (non-main-chain blocks report `mainChain: false`). */
export function explorerBlock(chain: DevnetChain, hash: string): explorer.BlockEntry | undefined {
  const b = chain.getBlock(hash);
  if (!b) return undefined;
  const blk = b.block;
  return {
    hash: blk.hash,
    timestamp: blk.timestamp,
    chainFrom: blk.chainFrom,
    chainTo: blk.chainTo,
    height: blk.height,
    deps: blk.deps,
    nonce: blk.nonce,
    version: blk.version,
    depStateHash: blk.depStateHash,
    txsHash: blk.txsHash,
    txNumber: blk.transactions.length,
    target: blk.target,
    hashRate: DEVNET_HASH_RATE,
    ...(blk.height > 0 ? { parent: blk.deps[3 + blk.chainTo]! } : {}),
    mainChain: b.mainChain,
    ...(blk.ghostUncles.length > 0 ? { ghostUncles: blk.ghostUncles } : {}),
  };
}

/** Explorer `BlockEntryLite`. */
export function explorerBlockLite(b: DevnetBlock): explorer.BlockEntryLite {
  return {
    hash: b.block.hash,
    timestamp: b.block.timestamp,
    chainFrom: b.block.chainFrom,
    chainTo: b.block.chainTo,
    height: b.block.height,
    txNumber: b.block.transactions.length,
    mainChain: b.mainChain,
    hashRate: DEVNET_HASH_RATE,
  };
}

const slice = <T>(items: T[], p: Page): T[] => items.slice((p.page - 1) * p.limit, p.page * p.limit);

/** `GET /blocks/{hash}/transactions`: block txs in block order (coinbase last), or undefined for unknown blocks. */
export function blockTransactions(
  chain: DevnetChain,
  hash: string,
  p: Page,
): explorer.Transaction[] | undefined {
  const b = chain.getBlock(hash);
  if (!b) return undefined;
  const txs = b.block.transactions.map((tx, i) =>
    toExplorerTransaction(chain, {
      tx,
      blockHash: hash,
      txIndex: i,
      timestamp: b.block.timestamp,
      chainIndex: b.chainIndex,
      mainChain: b.mainChain,
      coinbase: b.block.height > 0 && i === b.block.transactions.length - 1,
    }),
  );
  return slice(txs, p);
}

/**
 * `GET /blocks`: main-chain blocks ordered by (timestamp, chain index), newest first unless `reverse`. Each
 * chain's blocks are already in timestamp order, so the page is merged from the chains' ends: the cost follows
 * the page, not the length of the chain.
 */
export function listBlocks(chain: DevnetChain, p: Page & { reverse?: boolean }): explorer.ListBlocks {
  const chains = Array.from({ length: chain.options.groups ** 2 }, (_, c) => chain.mainChain(c));
  const total = chains.reduce((n, blocks) => n + blocks.length, 0);
  const newestFirst = !p.reverse;
  const cursor = chains.map((blocks) => (newestFirst ? blocks.length - 1 : 0));
  /** True when `a` comes before `b` in the listed order. */
  const before = (a: DevnetBlock, b: DevnetBlock): boolean => {
    const ascending = a.block.timestamp - b.block.timestamp || a.chainIndex - b.chainIndex;
    return newestFirst ? ascending > 0 : ascending < 0;
  };
  const from = (p.page - 1) * p.limit;
  const to = Math.min(total, p.page * p.limit);
  const page: DevnetBlock[] = [];
  for (let i = 0; i < to; i++) {
    let best: DevnetBlock | undefined;
    let bestChain = -1;
    for (let c = 0; c < chains.length; c++) {
      const b = chains[c]![cursor[c]!];
      if (b && (!best || before(b, best))) {
        best = b;
        bestChain = c;
      }
    }
    cursor[bestChain]! += newestFirst ? -1 : 1;
    if (i >= from) page.push(best!);
  }
  return { total, blocks: page.map(explorerBlockLite) };
}

/** `GET /infos/heights`: main-chain height per chain. */
export function perChainHeights(chain: DevnetChain): explorer.PerChainHeight[] {
  const out: explorer.PerChainHeight[] = [];
  const groups = chain.options.groups;
  for (let c = 0; c < groups * groups; c++) {
    const height = chain.height(c);
    out.push({ chainFrom: Math.floor(c / groups), chainTo: c % groups, height, value: height });
  }
  return out;
}

interface TxIndexEntry {
  loc: DevnetTxLocation;
  addresses: Set<string>;
  tokens: Set<string>;
}

/**
 * Main-chain txs per address and per token, each list in the reverse of the explorer's order
 * (`block_timestamp DESC, tx_order ASC`, then chain index) so new blocks append at its end. Kept up to date
 * block by block: a query costs what it returns, not the length of the chain.
 */
interface TxIndex {
  /** Per chain, the hashes of the main-chain blocks indexed (index = height). */
  hashes: string[][];
  /** Per chain, per height: the entries of that block (removed again when a reorg orphans it). */
  entries: TxIndexEntry[][][];
  byAddress: Map<string, TxIndexEntry[]>;
  byToken: Map<string, TxIndexEntry[]>;
  version: number;
}

const indexCache = new WeakMap<DevnetChain, TxIndex>();

/** Explorer order: newest block first, then lower chain index, then tx order within the block. */
const explorerOrder = (a: DevnetTxLocation, b: DevnetTxLocation): number =>
  b.timestamp - a.timestamp || a.chainIndex - b.chainIndex || a.txIndex - b.txIndex;

function blockEntries(chain: DevnetChain, b: DevnetBlock): TxIndexEntry[] {
  return b.block.transactions.map((tx, i) => {
    const addresses = new Set<string>();
    const tokens = new Set<string>();
    for (const ref of [...tx.unsigned.inputs.map((x) => x.outputRef), ...tx.contractInputs]) {
      const o = chain.getOutput(ref.key);
      if (!o) continue;
      addresses.add(o.address);
      for (const t of o.tokens) tokens.add(t.id);
    }
    for (const o of [...tx.unsigned.fixedOutputs, ...tx.generatedOutputs]) {
      addresses.add(o.address);
      for (const t of o.tokens) tokens.add(t.id);
    }
    return {
      loc: {
        tx,
        blockHash: b.block.hash,
        txIndex: i,
        timestamp: b.block.timestamp,
        chainIndex: b.chainIndex,
        mainChain: true,
        coinbase: b.block.height > 0 && i === b.block.transactions.length - 1,
      },
      addresses,
      tokens,
    };
  });
}

/** Inserts in reverse explorer order, scanning from the end (where blocks of the newest timestamps go). */
function insert(index: Map<string, TxIndexEntry[]>, key: string, e: TxIndexEntry): void {
  let list = index.get(key);
  if (!list) {
    list = [];
    index.set(key, list);
  }
  let at = list.length;
  while (at > 0 && explorerOrder(list[at - 1]!.loc, e.loc) < 0) at -= 1;
  list.splice(at, 0, e);
}

function remove(index: Map<string, TxIndexEntry[]>, key: string, e: TxIndexEntry): void {
  const list = index.get(key);
  const at = list ? list.lastIndexOf(e) : -1;
  if (at >= 0) list!.splice(at, 1);
}

/** The index of a chain, brought up to its current main chains (new blocks added, orphaned ones removed). */
function mainChainTxIndex(chain: DevnetChain): TxIndex {
  const chains = chain.options.groups ** 2;
  let index = indexCache.get(chain);
  if (!index) {
    index = {
      hashes: Array.from({ length: chains }, () => []),
      entries: Array.from({ length: chains }, () => []),
      byAddress: new Map(),
      byToken: new Map(),
      version: -1,
    };
    indexCache.set(chain, index);
  }
  if (index.version === chain.version()) return index;
  for (let c = 0; c < chains; c++) {
    const main = chain.mainChain(c);
    const hashes = index.hashes[c]!;
    const entries = index.entries[c]!;
    // Below the fork point of the last reorg the indexed blocks are still the main chain.
    let keep = Math.min(hashes.length, main.length);
    while (keep > 0 && hashes[keep - 1] !== main[keep - 1]!.block.hash) keep -= 1;
    for (let h = hashes.length - 1; h >= keep; h--) {
      for (const e of entries[h]!) {
        for (const a of e.addresses) remove(index.byAddress, a, e);
        for (const t of e.tokens) remove(index.byToken, t, e);
      }
    }
    hashes.length = keep;
    entries.length = keep;
    for (let h = keep; h < main.length; h++) {
      const b = main[h]!;
      const made = blockEntries(chain, b);
      for (const e of made) {
        for (const a of e.addresses) insert(index.byAddress, a, e);
        for (const t of e.tokens) insert(index.byToken, t, e);
      }
      hashes.push(b.block.hash);
      entries.push(made);
    }
  }
  index.version = chain.version();
  return index;
}

/** The page of `list` (reverse explorer order) read newest first, keeping the entries `keep` accepts. */
function pageOf(
  list: TxIndexEntry[] | undefined,
  p: Page,
  keep: (e: TxIndexEntry) => boolean,
): TxIndexEntry[] {
  const out: TxIndexEntry[] = [];
  if (!list) return out;
  let skip = (p.page - 1) * p.limit;
  for (let i = list.length - 1; i >= 0 && out.length < p.limit; i--) {
    const e = list[i]!;
    if (!keep(e)) continue;
    if (skip > 0) skip -= 1;
    else out.push(e);
  }
  return out;
}

/** `GET /addresses/{address}/transactions` (and `/tokens/{tokenId}/transactions` when `tokenId` is given). */
export function addressTransactions(
  chain: DevnetChain,
  address: string,
  p: Page,
  tokenId?: string,
): explorer.Transaction[] {
  const hits = pageOf(
    mainChainTxIndex(chain).byAddress.get(address),
    p,
    (e) => tokenId === undefined || e.tokens.has(tokenId),
  );
  return hits.map((e) => toExplorerTransaction(chain, e.loc));
}

/** `GET /tokens/{tokenId}/transactions`: main-chain txs moving the token, newest first. */
export function tokenTransactions(chain: DevnetChain, tokenId: string, p: Page): explorer.Transaction[] {
  const hits = pageOf(mainChainTxIndex(chain).byToken.get(tokenId), p, () => true);
  return hits.map((e) => toExplorerTransaction(chain, e.loc));
}
