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

/** `GET /blocks`: main-chain blocks, newest first unless `reverse`. */
export function listBlocks(chain: DevnetChain, p: Page & { reverse?: boolean }): explorer.ListBlocks {
  const all: DevnetBlock[] = [];
  for (let c = 0; c < chain.options.groups ** 2; c++) all.push(...chain.mainChain(c));
  all.sort((a, b) => a.block.timestamp - b.block.timestamp || a.chainIndex - b.chainIndex);
  if (!p.reverse) all.reverse();
  return { total: all.length, blocks: slice(all, p).map(explorerBlockLite) };
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

const indexCache = new WeakMap<DevnetChain, { version: number; entries: TxIndexEntry[] }>();

/** Main-chain txs ordered like the explorer (`block_timestamp DESC, tx_order ASC`), cached per chain version. */
function mainChainTxIndex(chain: DevnetChain): TxIndexEntry[] {
  const cached = indexCache.get(chain);
  if (cached && cached.version === chain.version()) return cached.entries;
  const entries: TxIndexEntry[] = [];
  for (let c = 0; c < chain.options.groups ** 2; c++) {
    for (const b of chain.mainChain(c)) {
      b.block.transactions.forEach((tx, i) => {
        const addresses = new Set<string>();
        const tokens = new Set<string>();
        const refs = [...tx.unsigned.inputs.map((x) => x.outputRef), ...tx.contractInputs];
        for (const ref of refs) {
          const o = chain.getOutput(ref.key);
          if (!o) continue;
          addresses.add(o.address);
          for (const t of o.tokens) tokens.add(t.id);
        }
        for (const o of [...tx.unsigned.fixedOutputs, ...tx.generatedOutputs]) {
          addresses.add(o.address);
          for (const t of o.tokens) tokens.add(t.id);
        }
        entries.push({
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
        });
      });
    }
  }
  entries.sort(
    (a, b) =>
      b.loc.timestamp - a.loc.timestamp ||
      a.loc.chainIndex - b.loc.chainIndex ||
      a.loc.txIndex - b.loc.txIndex,
  );
  indexCache.set(chain, { version: chain.version(), entries });
  return entries;
}

/** `GET /addresses/{address}/transactions` (and `/tokens/{tokenId}/transactions` when `tokenId` is given). */
export function addressTransactions(
  chain: DevnetChain,
  address: string,
  p: Page,
  tokenId?: string,
): explorer.Transaction[] {
  const hits = mainChainTxIndex(chain).filter(
    (e) => e.addresses.has(address) && (tokenId === undefined || e.tokens.has(tokenId)),
  );
  return slice(hits, p).map((e) => toExplorerTransaction(chain, e.loc));
}

/** `GET /tokens/{tokenId}/transactions`: main-chain txs moving the token, newest first. */
export function tokenTransactions(chain: DevnetChain, tokenId: string, p: Page): explorer.Transaction[] {
  const hits = mainChainTxIndex(chain).filter((e) => e.tokens.has(tokenId));
  return slice(hits, p).map((e) => toExplorerTransaction(chain, e.loc));
}
