// Test passes: embedded (ganache and viem against the price sources; Postgres holds the registry rows).
/**
 * EVM pool sources on a real in-process EVM (ganache) with Uniswap's published V2 contracts
 * (@uniswap/v2-core: factory, pair, ERC-20), read through viem over JSON-RPC, on real stores: a pool
 * added through the API gets candles equal to a reference computed here from its `Swap` logs, spot
 * equal to its reserves, and (with enable_trades) one `dex` event per swap through the trade watcher;
 * a reorg (snapshot, swaps, revert, other swaps) leaves the candles of the winning chain and the
 * orphaned trades retracted; an unreachable RPC degrades its source while the other goes on.
 */

import { createRequire } from "node:module";
import ganache from "ganache";
import {
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  type PublicClient,
  parseAbi,
  parseAbiItem,
  type WalletClient,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import { loadConfig } from "../../lib/config.ts";
import { createMetrics } from "../../lib/metrics.ts";
import { rpcUrlsByChain } from "../../pipeline/trade-watcher/evm.ts";
import { createEvmPoller, type EvmPoller } from "../../pipeline/trade-watcher/evm-poller.ts";
import { createTradeFeed, MARKET_CHAIN_INDEX, type TradeFeed } from "../../pipeline/trade-watcher/feed.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { type RefSwap, referenceCandles } from "../helpers/prices.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const require = createRequire(import.meta.url);
const artifact = (name: string) =>
  require(`@uniswap/v2-core/build/${name}.json`) as { abi: unknown[]; bytecode: string };
const ERC20 = artifact("ERC20");
const FACTORY = artifact("UniswapV2Factory");
const PAIR_ABI = parseAbi([
  "function mint(address to) returns (uint liquidity)",
  "function swap(uint amount0Out, uint amount1Out, address to, bytes data)",
  "function token0() view returns (address)",
  "function getReserves() view returns (uint112, uint112, uint32)",
]);
const TOKEN_ABI = parseAbi(["function transfer(address to, uint value) returns (bool)"]);
const FACTORY_ABI = parseAbi([
  "function createPair(address a, address b) returns (address)",
  "function getPair(address a, address b) view returns (address)",
]);
const SWAP = parseAbiItem(
  "event Swap(address indexed sender, uint256 amount0In, uint256 amount1In, uint256 amount0Out, uint256 amount1Out, address indexed to)",
);
const GAS = 6_000_000n;

/** The part of ganache's server the test uses (its own types do not check under this TypeScript). */
interface GanacheServer {
  listen(port: number): Promise<void>;
  close(): Promise<void>;
  address(): { port: number };
}
const E18 = 10n ** 18n;

describe("EVM pool sources (ganache + Uniswap V2 + viem)", () => {
  let pg: TestPg;
  let ch: TestCh;
  let api: TestApp;
  let server: GanacheServer;
  let rpc: string;
  let pub: PublicClient;
  let wallet: WalletClient;
  let me: Hex;
  let pool: Hex;
  let tokens: [Hex, Hex];
  let feed: TradeFeed;
  let poller: EvmPoller;
  let pairId = 0;

  const rpcCall = async (method: string, params: unknown[] = []) => {
    const r = await fetch(rpc, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return ((await r.json()) as { result: unknown }).result;
  };
  const send = async (to: Hex, abi: readonly unknown[], functionName: string, args: unknown[]) => {
    const hash = await wallet.writeContract({
      address: to,
      abi: abi as never,
      functionName: functionName as never,
      args: args as never,
      account: me,
      chain: null,
      gas: GAS,
    });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
  };
  const deploy = async (a: { abi: unknown[]; bytecode: string }, args: unknown[]): Promise<Hex> => {
    const hash = await wallet.deployContract({
      abi: a.abi as never,
      bytecode: `0x${a.bytecode.replace(/^0x/, "")}` as Hex,
      args: args as never,
      account: me,
      chain: null,
      gas: GAS,
    });
    const receipt = await pub.waitForTransactionReceipt({ hash });
    return receipt.contractAddress as Hex;
  };
  /** Sells `amountIn` of token `side` (0 or 1) into the pool at the constant-product price, 30 s later. */
  const swap = async (side: 0 | 1, amountIn: bigint) => {
    await rpcCall("evm_increaseTime", [30]);
    const [r0, r1] = (await pub.readContract({
      address: pool,
      abi: PAIR_ABI,
      functionName: "getReserves",
    })) as [bigint, bigint, number];
    const [rin, rout] = side === 0 ? [r0, r1] : [r1, r0];
    const out = (amountIn * 997n * rout) / (rin * 1000n + amountIn * 997n) - 1n;
    await send(tokens[side], TOKEN_ABI, "transfer", [pool, amountIn]);
    await send(pool, PAIR_ABI, "swap", [side === 0 ? 0n : out, side === 0 ? out : 0n, me, "0x"]);
  };
  /** Every Swap log of the pool on the current chain, with its block time, as reference swaps. */
  const chainSwaps = async (): Promise<RefSwap[]> => {
    const logs = await pub.getLogs({ address: pool, event: SWAP, fromBlock: 0n, toBlock: "latest" });
    const out: RefSwap[] = [];
    for (const l of logs) {
      const block = await pub.getBlock({ blockNumber: l.blockNumber! });
      const a = l.args as { amount0In: bigint; amount1In: bigint; amount0Out: bigint; amount1Out: bigint };
      out.push({
        id: `${l.blockNumber}-${l.logIndex}`.padStart(20, "0"),
        timestamp: Number(block.timestamp) * 1000,
        pool,
        base_token_id: tokens[0],
        quote_token_id: tokens[1],
        base_amount: a.amount0Out > 0n ? a.amount0Out : a.amount0In,
        quote_amount: a.amount0Out > 0n ? a.amount1In : a.amount1Out,
      });
    }
    return out;
  };
  const ohlcv = async (scale: string) => {
    const r = await api.app.inject({
      url: `/price/pair/${pairId}/ohlcv?scale=${scale}&pageSize=1000`,
      headers: api.auth(api.userKey),
    });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().ohlcv as { t: number; o: number; h: number; l: number; c: number; v: number }[];
  };
  const expectCandles = async () => {
    const swaps = await chainSwaps();
    for (const scale of ["1m", "1h"]) {
      const expected = referenceCandles(swaps, pool, tokens[0], 18, 18, scale);
      const served = await ohlcv(scale);
      expect(served.map((c) => c.t)).toEqual(expected.map((c) => c.t));
      served.forEach((c, i) => {
        const e = expected[i]!;
        for (const k of ["o", "h", "l", "c", "v"] as const) expect(c[k]).toBeCloseTo(e[k], 9);
      });
    }
    return swaps;
  };

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    api = await createTestApp({ stores: { pg, ch } });
    server = (ganache.server as unknown as (options: object) => GanacheServer)({
      logging: { quiet: true },
      wallet: { deterministic: true },
      chain: { chainId: 1 },
    });
    await server.listen(0);
    rpc = `http://127.0.0.1:${server.address().port}`;
    pub = createPublicClient({ transport: http(rpc) }) as PublicClient;
    wallet = createWalletClient({ transport: http(rpc) });
    me = ((await rpcCall("eth_accounts")) as Hex[])[0]!;
    const a = await deploy(ERC20, [1_000_000n * E18]);
    const b = await deploy(ERC20, [1_000_000n * E18]);
    const factory = await deploy(FACTORY, [me]);
    await send(factory, FACTORY_ABI, "createPair", [a, b]);
    pool = (
      (await pub.readContract({
        address: factory,
        abi: FACTORY_ABI,
        functionName: "getPair",
        args: [a, b],
      })) as Hex
    ).toLowerCase() as Hex;
    const token0 = (
      (await pub.readContract({ address: pool, abi: PAIR_ABI, functionName: "token0" })) as Hex
    ).toLowerCase() as Hex;
    tokens =
      token0 === a.toLowerCase()
        ? [a.toLowerCase() as Hex, b.toLowerCase() as Hex]
        : [b.toLowerCase() as Hex, a.toLowerCase() as Hex];
    // Liquidity: 10,000 token0 against 3,000 token1 (a price of 0.3).
    await send(tokens[0], TOKEN_ABI, "transfer", [pool, 10_000n * E18]);
    await send(tokens[1], TOKEN_ABI, "transfer", [pool, 3_000n * E18]);
    await send(pool, PAIR_ABI, "mint", [me]);
    feed = createTradeFeed({ pg: pg.pg, ch: ch.ch, log: quietLog }, { heartbeatMs: 60_000 });
    await feed.start();
  }, 60_000);

  afterAll(async () => {
    await poller?.stop();
    await feed?.stop();
    await api?.close();
    await server?.close();
    await pg?.close();
    await ch?.close();
  });

  it("serves candles equal to the pool's Swap logs, spot from its reserves, and a dex event per swap", async () => {
    const admin = api.auth(api.adminKey);
    const add = await api.app.inject({
      method: "POST",
      url: "/price/source/uniswap/pair/add",
      headers: admin,
      payload: { pair_symbol: pool, token_id: ALPH_TOKEN_ID, chain_id: 1 },
    });
    expect(add.statusCode, add.body).toBe(200);
    pairId = add.json().id as number;
    const update = await api.app.inject({
      method: "POST",
      url: `/price/source/uniswap/pair/${pairId}/update`,
      headers: admin,
      payload: { enable_trades: true },
    });
    expect(update.statusCode, update.body).toBe(200);
    for (const [side, amount] of [
      [0, 50n],
      [1, 20n],
      [0, 5n],
      [0, 80n],
      [1, 7n],
      [1, 30n],
      [0, 12n],
    ] as const) {
      await swap(side, amount * E18);
    }
    poller = createEvmPoller(
      { pg: pg.pg, ch: ch.ch, log: quietLog, metrics: createMetrics(), sink: feed },
      {
        rpcUrls: rpcUrlsByChain({ 1: rpc }),
        confirmations: 0,
        pollMs: 50,
        timeoutMs: 5_000,
        blockRange: 4,
        backfillBlocks: 1_000,
      },
    );
    expect(await poller.pollOnce()).toEqual({ uniswap: "ok" });
    const swaps = await expectCandles();
    expect(swaps).toHaveLength(7);

    const [r0, r1] = (await pub.readContract({
      address: pool,
      abi: PAIR_ABI,
      functionName: "getReserves",
    })) as [bigint, bigint, number];
    const spot = await api.app.inject({ url: `/price/pair/${pairId}/spot`, headers: api.auth(api.userKey) });
    expect(spot.json().price).toBeCloseTo(Number((r1 * 10n ** 18n) / r0) / 1e18, 12);

    const events = await ch.ch.query<{ doc: string }>(
      "t",
      `SELECT doc FROM events FINAL WHERE chain_index = ${MARKET_CHAIN_INDEX} ORDER BY id`,
    );
    expect(events).toHaveLength(7);
    const first = JSON.parse(events[0]!.doc);
    expect(first).toMatchObject({
      category: "dex",
      type: "evm_swap",
      dapp_id: "uniswap",
      with: pool,
      sub_kind: "sell",
    });
    expect(first.payload).toMatchObject({ evm_chain_id: 1, base_amount: "50" });
    // Polling again (or re-reading after a crash before the cursor moved) records nothing twice.
    await pg.pg.query("t", "UPDATE evm_pool_cursors SET next_block = 0, last_hash = NULL");
    expect(await poller.pollOnce()).toEqual({ uniswap: "ok" });
    expect(
      await ch.ch.query("t", `SELECT id FROM events FINAL WHERE chain_index = ${MARKET_CHAIN_INDEX}`),
    ).toHaveLength(7);
    await expectCandles();
  });

  it("follows a reorg: the orphaned swaps are retracted and the candles are the winning chain's", async () => {
    const snapshot = await rpcCall("evm_snapshot");
    await swap(0, 300n * E18);
    await swap(0, 200n * E18);
    expect(await poller.pollOnce()).toEqual({ uniswap: "ok" });
    const before = await expectCandles();
    expect(before).toHaveLength(9);
    // The two blocks are replaced by a longer branch with other swaps.
    expect(await rpcCall("evm_revert", [snapshot])).toBe(true);
    await swap(1, 90n * E18);
    await swap(1, 10n * E18);
    await swap(0, 1n * E18);
    expect(await poller.pollOnce()).toEqual({ uniswap: "ok" });
    const after = await expectCandles();
    expect(after).toHaveLength(10);
    const [retracted] = await ch.ch.query<{ n: string }>(
      "t",
      "SELECT count() AS n FROM trades FINAL WHERE pool = {p:String} AND NOT main_chain",
      { p: pool },
    );
    expect(Number(retracted!.n)).toBe(2);
  });

  it("degrades a source whose RPC does not answer while the others go on", async () => {
    const admin = api.auth(api.adminKey);
    const add = await api.app.inject({
      method: "POST",
      url: "/price/source/pancakeswap/pair/add",
      headers: admin,
      payload: { pair_symbol: `0x${"42".repeat(20)}`, token_id: ALPH_TOKEN_ID, chain_id: 56 },
    });
    expect(add.statusCode, add.body).toBe(200);
    const broken = createEvmPoller(
      { pg: pg.pg, ch: ch.ch, log: quietLog, metrics: createMetrics(), sink: feed },
      {
        rpcUrls: rpcUrlsByChain({ 1: rpc, 56: "http://127.0.0.1:9" }),
        confirmations: 0,
        pollMs: 50,
        timeoutMs: 1_000,
        blockRange: 100,
        backfillBlocks: 1_000,
      },
    );
    expect(await broken.pollOnce()).toEqual({ uniswap: "ok", pancakeswap: "degraded" });
    const status = await api.app.inject({ url: "/status" });
    const sources = status.json().price_sources as {
      id: string;
      status: string;
      last_error: string | null;
    }[];
    expect(sources.find((s) => s.id === "pancakeswap")).toMatchObject({ status: "degraded" });
    expect(sources.find((s) => s.id === "uniswap")).toMatchObject({ status: "ok" });
  });

  it("reads EVM_RPC_URLS by chain id and names a bad entry", () => {
    const rpcUrls = (raw: string) => rpcUrlsByChain(loadConfig({ EVM_RPC_URLS: raw }).EVM_RPC_URLS);
    expect([...rpcUrls('{"1":"http://a","56":"https://b/x"}')]).toEqual([
      [1, "http://a"],
      [56, "https://b/x"],
    ]);
    expect(() => rpcUrls('{"eth":"http://a"}')).toThrow(/"eth" is not a key it takes/);
    expect(() => rpcUrls('{"1":"ftp://a"}')).toThrow(/the value of "1" is not one it takes/);
    expect(() => rpcUrls("1=http://a")).toThrow(
      /EVM_RPC_URLS="1=http:\/\/a": expected a JSON object of EVM chain id/,
    );
  });
});
