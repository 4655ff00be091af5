/**
 * EVM chains through viem: the only module that imports it. Reads Uniswap-V2-style pools (Uniswap V2
 * on Ethereum, PancakeSwap V2 on BSC: the same pair interface and `Swap` event): the pool's tokens
 * and their decimals and symbols, `Swap` logs of a block range, block hashes and times, and reserves.
 * One HTTP JSON-RPC client per chain id (`EVM_RPC_URLS`).
 */
import { createPublicClient, type Hex, http, type PublicClient, parseAbi, parseAbiItem } from "viem";
import { AppError } from "../../lib/errors.ts";

const PAIR_ABI = parseAbi([
  "function token0() view returns (address)",
  "function token1() view returns (address)",
  "function getReserves() view returns (uint112 reserve0, uint112 reserve1, uint32 blockTimestampLast)",
]);
const ERC20_ABI = parseAbi([
  "function decimals() view returns (uint8)",
  "function symbol() view returns (string)",
]);
/** Uniswap V2's (and PancakeSwap V2's) pair `Swap` event. */
export const SWAP_EVENT = parseAbiItem(
  "event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
);

/** A failed EVM call: retryable (the poller backs off and reports the source degraded). */
export class EvmError extends AppError {
  constructor(chainId: number, message: string, cause?: unknown) {
    super("upstream_unavailable", `EVM chain ${chainId}: ${message}`, {
      status: 502,
      retryable: true,
      cause,
    });
  }
}

/** `EVM_RPC_URLS` (checked by the config: chain ids to http(s) URLs) by numeric chain id. */
export function rpcUrlsByChain(urls: Readonly<Record<string, string>>): Map<number, string> {
  return new Map(Object.entries(urls).map(([id, url]) => [Number(id), url]));
}

export interface EvmClient {
  chainId: number;
  client: PublicClient;
}

export function createEvmClient(chainId: number, url: string, timeoutMs: number): EvmClient {
  return {
    chainId,
    client: createPublicClient({ transport: http(url, { timeout: timeoutMs, retryCount: 0 }) }),
  };
}

async function call<T>(c: EvmClient, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const name = error instanceof Error ? error.constructor.name : "Error";
    const message =
      error instanceof Error
        ? ((error as { shortMessage?: string }).shortMessage ?? error.message)
        : String(error);
    throw new EvmError(c.chainId, `${what} failed (${name}): ${message.slice(0, 300)}`, error);
  }
}

export interface PoolTokens {
  token0: string;
  token1: string;
  decimals0: number;
  decimals1: number;
  symbol0: string;
  symbol1: string;
}

/** The two tokens of a pool with their decimals and symbols (addresses lower case). */
export async function readPoolTokens(c: EvmClient, pool: string): Promise<PoolTokens> {
  const address = pool as Hex;
  return call(c, `tokens of pool ${pool}`, async () => {
    const [token0, token1] = await Promise.all([
      c.client.readContract({ address, abi: PAIR_ABI, functionName: "token0" }),
      c.client.readContract({ address, abi: PAIR_ABI, functionName: "token1" }),
    ]);
    const meta = async (token: Hex) => {
      const [decimals, symbol] = await Promise.all([
        c.client.readContract({ address: token, abi: ERC20_ABI, functionName: "decimals" }),
        c.client.readContract({ address: token, abi: ERC20_ABI, functionName: "symbol" }).catch(() => ""),
      ]);
      return { decimals: Number(decimals), symbol: String(symbol) };
    };
    const [m0, m1] = await Promise.all([meta(token0), meta(token1)]);
    return {
      token0: token0.toLowerCase(),
      token1: token1.toLowerCase(),
      decimals0: m0.decimals,
      decimals1: m1.decimals,
      symbol0: m0.symbol,
      symbol1: m1.symbol,
    };
  });
}

export interface SwapLog {
  blockNumber: number;
  blockHash: string;
  txHash: string;
  logIndex: number;
  to: string;
  amount0In: bigint;
  amount1In: bigint;
  amount0Out: bigint;
  amount1Out: bigint;
}

/** `Swap` logs of a pool in blocks [from, to], in chain order. */
export async function swapLogs(c: EvmClient, pool: string, from: number, to: number): Promise<SwapLog[]> {
  const logs = await call(c, `Swap logs of ${pool} in blocks ${from}..${to}`, () =>
    c.client.getLogs({
      address: pool as Hex,
      event: SWAP_EVENT,
      fromBlock: BigInt(from),
      toBlock: BigInt(to),
    }),
  );
  return logs
    .filter((l) => !l.removed && l.blockNumber !== null && l.blockHash !== null && l.transactionHash !== null)
    .map((l) => ({
      blockNumber: Number(l.blockNumber),
      blockHash: String(l.blockHash).toLowerCase(),
      txHash: String(l.transactionHash).toLowerCase(),
      logIndex: Number(l.logIndex),
      to: String(l.args.to).toLowerCase(),
      amount0In: l.args.amount0In ?? 0n,
      amount1In: l.args.amount1In ?? 0n,
      amount0Out: l.args.amount0Out ?? 0n,
      amount1Out: l.args.amount1Out ?? 0n,
    }))
    .sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
}

/** The newest block number. */
export async function headNumber(c: EvmClient): Promise<number> {
  return Number(await call(c, "block number", () => c.client.getBlockNumber({ cacheTime: 0 })));
}

/** A block's hash and time (ms). */
export async function blockAt(c: EvmClient, n: number): Promise<{ hash: string; ts: number }> {
  const b = await call(c, `block ${n}`, () => c.client.getBlock({ blockNumber: BigInt(n) }));
  return { hash: String(b.hash).toLowerCase(), ts: Number(b.timestamp) * 1000 };
}

/** A pool's reserves of token0 and token1 (smallest units). */
export async function reservesOf(c: EvmClient, pool: string): Promise<[bigint, bigint]> {
  const [r0, r1] = await call(c, `reserves of ${pool}`, () =>
    c.client.readContract({ address: pool as Hex, abi: PAIR_ABI, functionName: "getReserves" }),
  );
  return [BigInt(r0), BigInt(r1)];
}
