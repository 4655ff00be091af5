/**
 * HTTP test double of an Alephium full node (at `/`) and of the explorer backend (under `/explorer`), serving a
 * {@link DevnetChain}. Shapes follow the node OpenAPI (v4.6.0) and explorer-backend JSON; errors are
 * `{"detail": ...}` (400) and `{"detail", "resource"}` (404) like both services.
 */
import type { explorer, node } from "@alephium/web3";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";
import { ADDRESS_GROUPS } from "../lib/chain/types.ts";
import { turn } from "../lib/turns.ts";
import { type DevnetBlock, type DevnetChain, MAX_BLOCK_RANGE_MS } from "./chain.ts";
import {
  acceptedTransaction,
  addressTransactions,
  blockTransactions,
  explorerBlock,
  listBlocks,
  type Page,
  perChainHeights,
  tokenTransactions,
} from "./explorer-view.ts";

/** Failure injection for consumers' tests. `explorer-timeout` never answers explorer requests until close. */
export type FailureMode = "none" | "explorer-500" | "explorer-timeout" | "node-500";

/** Options of {@link startDevnetServer}. */
export interface DevnetServerOptions {
  /** Interface to bind (default "127.0.0.1"). */
  host?: string;
  /** Port (default 0 = ephemeral). */
  port?: number;
  /** The explorer's clock (ms), which decides what is still locked in `/infos/supply` (default `Date.now`). */
  clock?: () => number;
  /**
   * Added answer time of `GET /blockflow/blocks-with-events` (ms, default 0): a remote node's, for benches of what
   * ingest does while it waits for the node.
   */
  blocksWithEventsDelayMs?: number;
}

/** A running devnet server. */
export interface DevnetServer {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Full-node API base URL (same as `url`). */
  nodeUrl: string;
  /** Explorer-backend API base URL (`${url}/explorer`). */
  explorerUrl: string;
  port: number;
  chain: DevnetChain;
  /** Switch failure injection on/off. */
  setFailureMode(mode: FailureMode): void;
  failureMode(): FailureMode;
  /** Requests received per URL path (query string excluded), failures included. */
  requestCounts(): Record<string, number>;
  /** Sum of request counts whose path starts with `prefix`. */
  requestCount(prefix: string): number;
  resetRequestCounts(): void;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: { detail: string; resource?: string },
  ) {
    super(body.detail);
  }
}

const badRequest = (detail: string): HttpError => new HttpError(400, { detail });
const notFound = (resource: string): HttpError =>
  new HttpError(404, { detail: `${resource} not found`, resource });

type Query = Record<string, string | undefined>;

function intParam(q: Query, name: string, kind: "query" | "path", fallback?: number): number {
  const raw = q[name];
  if (raw === undefined || raw === "") {
    if (fallback !== undefined) return fallback;
    throw badRequest(`Invalid value for: ${kind} parameter ${name} (missing)`);
  }
  if (!/^-?\d+$/.test(raw))
    throw badRequest(`Invalid value for: ${kind} parameter ${name} (expected an integer)`);
  return Number(raw);
}

function hashParam(value: string | undefined, name: string, kind: "query" | "path"): string {
  if (!value || !/^[0-9a-fA-F]{64}$/.test(value))
    throw badRequest(`Invalid value for: ${kind} parameter ${name} (Invalid hash: ${value ?? ""})`);
  return value.toLowerCase();
}

function groupParams(q: Query): { chainIndex: number } {
  const from = intParam(q, "fromGroup", "query");
  const to = intParam(q, "toGroup", "query");
  for (const [n, v] of [
    ["fromGroup", from],
    ["toGroup", to],
  ] as const) {
    if (v < 0 || v >= ADDRESS_GROUPS)
      throw badRequest(`Invalid value for: query parameter ${n} (Invalid group index: ${v})`);
  }
  return { chainIndex: from * ADDRESS_GROUPS + to };
}

/** Explorer pagination: page ≥ 1 (default 1), limit 0..100 (default 20). */
/** attoALPH as the explorer's text endpoints write ALPH: a decimal number without trailing zeros. */
function wholeAlph(atto: bigint): string {
  const unit = 10n ** 18n;
  const frac = (atto % unit).toString().padStart(18, "0").replace(/0+$/, "");
  return frac ? `${atto / unit}.${frac}` : `${atto / unit}`;
}

function pageParams(q: Query): Page {
  const page = intParam(q, "page", "query", 1);
  const limit = intParam(q, "limit", "query", 20);
  if (page < 1)
    throw badRequest(
      `Invalid value for: query parameter page (expected value to be greater than or equal to 1, but got ${page})`,
    );
  if (limit < 0)
    throw badRequest(
      `Invalid value for: query parameter limit (expected value to be greater than or equal to 0, but got ${limit})`,
    );
  if (limit > 100)
    throw badRequest(
      `Invalid value for: query parameter limit (expected value to be less than or equal to 100, but got ${limit})`,
    );
  return { page, limit };
}

function timeRange(q: Query): { fromTs: number; toTs: number } {
  const fromTs = intParam(q, "fromTs", "query");
  // The node defaults toTs to "now"; the double uses the widest allowed window instead.
  const toTs = intParam(q, "toTs", "query", fromTs + MAX_BLOCK_RANGE_MS);
  if (fromTs > toTs) throw badRequest("`toTs` cannot be before `fromTs`");
  if (toTs - fromTs > MAX_BLOCK_RANGE_MS) throw badRequest("Time span cannot be greater than 30min");
  return { fromTs, toTs };
}

const blockAndEvents = (b: DevnetBlock): node.BlockAndEvents => ({ block: b.block, events: b.events });

/**
 * A window's `BlocksAndEventsPerTimeStampRange` as JSON text, a block at a time with turns for the event loop: a
 * window is thousands of blocks (tens of MB), and the demo serves its API on this thread (`lib/turns.ts`).
 */
async function blocksAndEventsJson(chains: DevnetBlock[][]): Promise<string> {
  const perChain: string[] = [];
  for (const blocks of chains) {
    const texts: string[] = [];
    for (const b of blocks) {
      texts.push(JSON.stringify(blockAndEvents(b)));
      const t = turn();
      if (t) await t;
    }
    perChain.push(`[${texts.join(",")}]`);
  }
  return `{"blocksAndEvents":[${perChain.join(",")}]}`;
}

function callContract(chain: DevnetChain, call: Partial<node.CallContract>): node.CallContractResult {
  const address = call.address ?? "";
  const info = chain.contractInfo(address);
  const state = chain.contractState(address);
  if (!info || !state) return { type: "CallContractFailed", error: `Contract ${address} does not exist` };
  const hex = (s: string): string => Buffer.from(s, "utf8").toString("hex");
  let returns: node.Val[] | undefined;
  const m = call.methodIndex;
  if (info.token) {
    const t = info.token;
    if (m === 0) returns = [{ type: "ByteVec", value: hex(t.symbol) }];
    else if (m === 1) returns = [{ type: "ByteVec", value: hex(t.name) }];
    else if (m === 2) returns = [{ type: "U256", value: String(t.decimals) }];
    else if (m === 3) returns = [{ type: "U256", value: t.totalSupply.toString() }];
  } else if (info.pool) {
    const p = info.pool;
    if (m === 7)
      returns = [
        { type: "ByteVec", value: p.token0 },
        { type: "ByteVec", value: p.token1 },
      ];
    else if (m === 8)
      returns = [
        { type: "U256", value: p.reserve0.toString() },
        { type: "U256", value: p.reserve1.toString() },
      ];
  }
  returns ??= chain.dappCall(address, m ?? -1, call.args ?? []);
  if (!returns) return { type: "CallContractFailed", error: `VM execution error: InvalidMethodIndex(${m})` };
  return {
    type: "CallContractSucceeded",
    returns,
    gasUsed: 5000 + returns.length * 100,
    contracts: [state],
    txInputs: [],
    txOutputs: [],
    events: [],
    debugMessages: [],
  };
}

/** Starts the node + explorer test double on `host:port` (ephemeral port by default). */
export async function startDevnetServer(
  chain: DevnetChain,
  options: DevnetServerOptions = {},
): Promise<DevnetServer> {
  const host = options.host ?? "127.0.0.1";
  const app = Fastify({ logger: false, forceCloseConnections: true });
  let mode: FailureMode = "none";
  const counts = new Map<string, number>();
  const hanging = new Set<FastifyReply>();

  app.addHook("onRequest", async (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split("?")[0] ?? req.url;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const isExplorer = path === "/explorer" || path.startsWith("/explorer/");
    if (isExplorer && mode === "explorer-500")
      return reply.code(500).send({ detail: "Simulated explorer failure" });
    if (!isExplorer && mode === "node-500") return reply.code(500).send({ detail: "Simulated node failure" });
    if (isExplorer && mode === "explorer-timeout") {
      // Never answer: the socket is destroyed by close().
      hanging.add(reply);
      reply.hijack();
      return reply;
    }
    return undefined;
  });

  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof HttpError) return reply.code(err.status).send(err.body);
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    return reply.code(status).send({ detail: (err as Error).message });
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split("?")[0] ?? req.url;
    return reply.code(404).send({ detail: `${path} not found`, resource: path });
  });

  type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query }>;

  // ---- full node --------------------------------------------------------------------------------------
  const nodeInfo: node.NodeInfo = {
    buildInfo: { releaseVersion: "4.6.0", commit: "devnet-test-double" },
    upnp: false,
  };
  app.get("/infos/node", async () => nodeInfo);
  app.get("/infos/node-info", async () => nodeInfo);
  app.get("/infos/version", async (): Promise<node.NodeVersion> => ({ version: "v4.6.0" }));
  app.get(
    "/infos/chain-params",
    async (): Promise<node.ChainParams> => ({
      networkId: chain.options.networkId,
      numZerosAtLeastInHash: 0,
      groupNumPerBroker: ADDRESS_GROUPS,
      groups: ADDRESS_GROUPS,
    }),
  );
  let port = 0;
  app.get(
    "/infos/self-clique",
    async (): Promise<node.SelfClique> => ({
      cliqueId: `02${"de7e".repeat(16)}`,
      nodes: [{ address: host, restPort: port, wsPort: port, minerApiPort: port }],
      selfReady: true,
      synced: true,
    }),
  );
  app.get("/blockflow/chain-info", async (req: Req): Promise<node.ChainInfo> => {
    const { chainIndex } = groupParams(req.query);
    return { currentHeight: chain.height(chainIndex) };
  });
  app.get("/blockflow/hashes", async (req: Req): Promise<node.HashesAtHeight> => {
    const { chainIndex } = groupParams(req.query);
    const height = intParam(req.query, "height", "query");
    return { headers: chain.hashesAt(chainIndex, height) };
  });
  const blockOr404 = (req: Req): DevnetBlock => {
    const hash = hashParam(req.params["hash"], "block_hash", "path");
    const b = chain.getBlock(hash);
    if (!b) throw notFound(`BlockHash(${hash})`);
    return b;
  };
  app.get("/blockflow/blocks/:hash", async (req: Req): Promise<node.BlockEntry> => blockOr404(req).block);
  app.get("/blockflow/headers/:hash", async (req: Req): Promise<node.BlockHeaderEntry> => {
    const { hash, timestamp, chainFrom, chainTo, height, deps } = blockOr404(req).block;
    return { hash, timestamp, chainFrom, chainTo, height, deps };
  });
  app.get("/blockflow/blocks-with-events/:hash", async (req: Req) => blockAndEvents(blockOr404(req)));
  app.get("/blockflow/blocks", async (req: Req): Promise<node.BlocksPerTimeStampRange> => {
    const { fromTs, toTs } = timeRange(req.query);
    return { blocks: chain.blocksInRange(fromTs, toTs).map((c) => c.map((b) => b.block)) };
  });
  app.get("/blockflow/blocks-with-events", async (req: Req, reply: FastifyReply) => {
    const { fromTs, toTs } = timeRange(req.query);
    const delay = options.blocksWithEventsDelayMs ?? 0;
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    // node.BlocksAndEventsPerTimeStampRange, serialised with turns.
    const json = await blocksAndEventsJson(chain.blocksInRange(fromTs, toTs));
    return reply.type("application/json; charset=utf-8").send(json);
  });
  app.get("/blockflow/is-block-in-main-chain", async (req: Req, reply) => {
    const hash = hashParam(req.query["blockHash"], "blockHash", "query");
    const b = chain.getBlock(hash);
    if (!b) throw notFound(`BlockHash(${hash})`);
    return reply.type("application/json").send(JSON.stringify(b.mainChain));
  });
  app.get("/blockflow/main-chain-block-by-ghost-uncle/:hash", async (req: Req): Promise<node.BlockEntry> => {
    const hash = hashParam(req.params["hash"], "ghost_uncle_hash", "path");
    const uncle = chain.getBlock(hash);
    if (uncle) {
      for (const b of chain
        .mainChain(uncle.chainIndex)
        .slice(uncle.block.height + 1, uncle.block.height + 8)) {
        if (b.block.ghostUncles.some((u) => u.blockHash === hash)) return b.block;
      }
    }
    throw notFound(`Mainchain block by ghost uncle hash ${hash}`);
  });
  const mainTx = (txId: string) => {
    const loc = chain.getTransaction(txId);
    return loc?.mainChain ? loc : undefined;
  };
  app.get("/transactions/details/:txId", async (req: Req): Promise<node.Transaction> => {
    const txId = hashParam(req.params["txId"], "txId", "path");
    const loc = mainTx(txId);
    if (!loc) throw notFound(`Transaction ${txId}`);
    return loc.tx;
  });
  app.get("/transactions/status", async (req: Req): Promise<node.TxStatus> => {
    const txId = hashParam(req.query["txId"], "txId", "query");
    const loc = mainTx(txId);
    if (!loc) return { type: "TxNotFound" };
    const b = chain.getBlock(loc.blockHash)!;
    const from = b.block.chainFrom;
    const to = b.block.chainTo;
    const confirmations = chain.height(loc.chainIndex) - b.block.height + 1;
    // Group confirmations are approximated by the intra-group chains' progress.
    const groupConf = (g: number): number =>
      Math.max(
        0,
        chain.height(g * ADDRESS_GROUPS + g) -
          Math.min(chain.height(g * ADDRESS_GROUPS + g), b.block.height) +
          1,
      );
    return {
      type: "Confirmed",
      blockHash: loc.blockHash,
      txIndex: loc.txIndex,
      chainConfirmations: confirmations,
      fromGroupConfirmations: Math.min(confirmations, groupConf(from)),
      toGroupConfirmations: from === to ? confirmations : Math.min(confirmations, groupConf(to)),
    };
  });
  app.get("/events/tx-id/:txId", async (req: Req): Promise<node.ContractEventsByTxId> => {
    const txId = hashParam(req.params["txId"], "txId", "path");
    return { events: chain.eventsOfTx(txId) };
  });
  app.get("/events/block-hash/:hash", async (req: Req): Promise<node.ContractEventsByBlockHash> => {
    const hash = hashParam(req.params["hash"], "blockHash", "path");
    return { events: chain.getBlock(hash)?.events ?? [] };
  });
  // Not a node endpoint: the devnet's own way to pay an address (demo of the bot's payments).
  app.post("/devnet/send", async (req) => {
    const body = req.body as { to?: unknown; amount?: unknown } | undefined;
    const to = typeof body?.to === "string" ? body.to : "";
    const amount =
      typeof body?.amount === "string" && /^[1-9]\d{0,40}$/.test(body.amount) ? BigInt(body.amount) : 0n;
    if (!to || amount === 0n)
      throw badRequest("Invalid value for: body (to: address, amount: attoALPH string)");
    try {
      return { queued: chain.sendAlph(to, amount) };
    } catch (error) {
      throw badRequest(`Invalid value for: body (${(error as Error).message})`);
    }
  });
  app.post("/contracts/multicall-contract", async (req): Promise<node.MultipleCallContractResult> => {
    const body = req.body as Partial<node.MultipleCallContract> | undefined;
    if (!body || !Array.isArray(body.calls)) throw badRequest("Invalid value for: body (missing calls)");
    return { results: body.calls.map((c) => callContract(chain, c)) };
  });
  app.post("/contracts/call-contract", async (req): Promise<node.CallContractResult> => {
    const body = req.body as Partial<node.CallContract> | undefined;
    if (!body?.address) throw badRequest("Invalid value for: body (missing address)");
    return callContract(chain, body);
  });
  app.get("/contracts/:address/state", async (req: Req): Promise<node.ContractState> => {
    const address = req.params["address"] ?? "";
    const state = chain.contractState(address);
    if (!state) throw notFound(`Contract ${address}`);
    return state;
  });

  // ---- explorer backend -------------------------------------------------------------------------------
  app.get("/explorer/transactions/:hash", async (req: Req): Promise<explorer.TransactionLike> => {
    const hash = hashParam(req.params["hash"], "transaction_hash", "path");
    const tx = acceptedTransaction(chain, hash);
    if (!tx) throw notFound(`Transaction ${hash}`);
    return tx;
  });
  app.get("/explorer/blocks", async (req: Req): Promise<explorer.ListBlocks> => {
    const reverse = req.query["reverse"] === "true";
    return listBlocks(chain, { ...pageParams(req.query), reverse });
  });
  app.get("/explorer/blocks/:hash", async (req: Req): Promise<explorer.BlockEntry> => {
    const hash = hashParam(req.params["hash"], "block_hash", "path");
    const b = explorerBlock(chain, hash);
    if (!b) throw notFound(`BlockHash(${hash})`);
    return b;
  });
  app.get("/explorer/blocks/:hash/transactions", async (req: Req): Promise<explorer.Transaction[]> => {
    const hash = hashParam(req.params["hash"], "block_hash", "path");
    const p = pageParams(req.query);
    const txs = blockTransactions(chain, hash, p);
    if (!txs) throw notFound(`BlockHash(${hash})`);
    return txs;
  });
  app.get(
    "/explorer/addresses/:address/transactions",
    async (req: Req): Promise<explorer.Transaction[]> =>
      addressTransactions(chain, req.params["address"] ?? "", pageParams(req.query)),
  );
  app.get("/explorer/addresses/:address/tokens/:tokenId/transactions", async (req: Req) => {
    const tokenId = hashParam(req.params["tokenId"], "token_id", "path");
    return addressTransactions(chain, req.params["address"] ?? "", pageParams(req.query), tokenId);
  });
  app.get("/explorer/tokens/:tokenId/transactions", async (req: Req) => {
    const tokenId = hashParam(req.params["tokenId"], "token_id", "path");
    return tokenTransactions(chain, tokenId, pageParams(req.query));
  });
  // ALPH's supply as the explorer computes it from the UTXO set at the time of the request.
  const clock = options.clock ?? Date.now;
  const supplyNow = () => chain.alphSupply(clock());
  app.get("/explorer/infos/supply", async (req: Req): Promise<explorer.TokenSupply[]> => {
    const p = pageParams(req.query);
    if (p.page > 1 || p.limit === 0) return [];
    const s = supplyNow();
    return [
      {
        timestamp: clock(),
        total: s.total.toString(),
        circulating: s.circulating.toString(),
        reserved: s.reserved.toString(),
        locked: s.locked.toString(),
        maximum: (10n ** 27n).toString(),
      },
    ];
  });
  for (const figure of ["total", "circulating", "reserved", "locked"] as const)
    app.get(`/explorer/infos/supply/${figure}-alph`, async (_req, reply) =>
      reply.type("text/plain").send(wholeAlph(supplyNow()[figure])),
    );
  app.get("/explorer/infos/heights", async (): Promise<explorer.PerChainHeight[]> => perChainHeights(chain));
  app.get(
    "/explorer/infos",
    async (): Promise<explorer.ExplorerInfo> => ({
      releaseVersion: "3.4.0",
      commit: "devnet-test-double",
      migrationsVersion: 0,
      lastFinalizedInputTime: chain.latestTimestamp(),
      lastHoldersUpdate: chain.latestTimestamp(),
    }),
  );

  await app.listen({ host, port: options.port ?? 0 });
  const addr = app.server.address();
  port = typeof addr === "object" && addr ? addr.port : (options.port ?? 0);
  const hostPart = host.includes(":") ? `[${host}]` : host;
  const url = `http://${hostPart}:${port}`;
  let closed = false;
  return {
    url,
    nodeUrl: url,
    explorerUrl: `${url}/explorer`,
    port,
    chain,
    setFailureMode(m) {
      mode = m;
    },
    failureMode: () => mode,
    requestCounts: () => Object.fromEntries(counts),
    requestCount(prefix) {
      let n = 0;
      for (const [path, c] of counts) if (path.startsWith(prefix)) n += c;
      return n;
    },
    resetRequestCounts() {
      counts.clear();
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const reply of hanging) reply.raw.destroy();
      hanging.clear();
      await app.close();
    },
  };
}
