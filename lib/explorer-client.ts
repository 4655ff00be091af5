/**
 * The one module that talks to the explorer backend (alephium/explorer-backend) and the only one that
 * imports undici. It owns the connection pool, the timeouts and the classification of failures:
 * unreachable, timing out, 5xx or unreadable answers become `upstream_unavailable` (502); the
 * explorer's 404 becomes our 404 with its own `detail`; its 400 becomes our 400.
 */
import { Pool, errors as undiciErrors } from "undici";
import { AppError, badRequest, notFound, upstreamUnavailable } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { withRetry } from "./retry.ts";

/** Explorer pagination: `page` ≥ 1, `limit` 0..100 (explorer defaults 1 and 20). */
export interface ExplorerPage {
  page: number;
  limit: number;
}

/** A successful explorer answer: its status, the raw body and the parsed JSON. */
export interface ExplorerResponse<T> {
  status: number;
  body: string;
  json: T;
}

/** A JSON object as the explorer sent it (fields are passed through, never renamed). */
export type ExplorerObject = Record<string, unknown>;

export interface ExplorerClient {
  /** `GET /transactions/{hash}`: accepted (`type: "Accepted"`) or pending transaction. */
  transaction(txId: string): Promise<ExplorerResponse<ExplorerObject>>;
  /** `GET /blocks/{hash}`: BlockEntry (with `txNumber`). */
  block(blockHash: string): Promise<ExplorerResponse<ExplorerObject>>;
  /** `GET /blocks/{hash}/transactions`: transactions in block order (coinbase last). */
  blockTransactions(blockHash: string, page: ExplorerPage): Promise<ExplorerResponse<ExplorerObject[]>>;
  /** `GET /addresses/{address}/transactions`: main-chain transactions, newest first. */
  addressTransactions(address: string, page: ExplorerPage): Promise<ExplorerResponse<ExplorerObject[]>>;
  /** `GET /addresses/{address}/tokens/{tokenId}/transactions`. */
  addressTokenTransactions(
    address: string,
    tokenId: string,
    page: ExplorerPage,
  ): Promise<ExplorerResponse<ExplorerObject[]>>;
  /** `GET /tokens/{tokenId}/transactions`. */
  tokenTransactions(tokenId: string, page: ExplorerPage): Promise<ExplorerResponse<ExplorerObject[]>>;
  /** `GET /infos/supply`: ALPH's `TokenSupply` snapshots (amounts in attoALPH as strings), newest first. */
  supply(page: ExplorerPage): Promise<ExplorerResponse<ExplorerObject[]>>;
  /** Closes the pooled connections; idempotent. */
  close(): Promise<void>;
}

export interface ExplorerClientOptions {
  /** Explorer base URL, possibly with a path prefix (`http://host:port/explorer`); empty = not configured. */
  baseUrl: string;
  /** Bound of one request, connection included. */
  timeoutMs: number;
  log: Logger;
  /** Pooled keep-alive connections (default 32). */
  connections?: number;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;
// Codes of a pooled socket the server closed between requests: safe to retry a GET once.
const STALE_SOCKET_CODES = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);

const isObject = (v: unknown): v is ExplorerObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function detailOf(json: unknown): string | undefined {
  return isObject(json) && typeof json.detail === "string" ? json.detail : undefined;
}

function parse(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** Creates the client with one keep-alive pool to the explorer's origin. */
export function createExplorerClient(options: ExplorerClientOptions): ExplorerClient {
  const log = options.log.child({ component: "explorer-client" });
  const base = options.baseUrl ? new URL(options.baseUrl) : null;
  const prefix = base ? base.pathname.replace(/\/+$/, "") : "";
  const timeoutMs = options.timeoutMs;
  const pool = base
    ? new Pool(base.origin, {
        connections: options.connections ?? 32,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 60_000,
        connectTimeout: Math.min(timeoutMs, 10_000),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        maxResponseSize: MAX_BODY_BYTES,
      })
    : null;
  let closed = false;

  async function once(path: string, signal: AbortSignal) {
    if (!pool) throw new Error("no pool");
    const res = await pool.request({
      method: "GET",
      path,
      headers: { accept: "application/json" },
      signal,
    });
    return { status: res.statusCode, body: await res.body.text() };
  }

  async function get<T>(
    label: string,
    path: string,
    shape: (v: unknown) => v is T,
  ): Promise<ExplorerResponse<T>> {
    if (!pool) throw upstreamUnavailable("The explorer backend is not configured (EXPLORER_URL is empty).");
    const started = performance.now();
    const signal = AbortSignal.timeout(timeoutMs);
    let answer: { status: number; body: string };
    // A kept-alive socket the server closed meanwhile is retryable once, on a fresh one.
    const attempt = () =>
      once(`${prefix}${path}`, signal).catch((error: unknown) => {
        const code = (error as { code?: string }).code;
        const stale = code !== undefined && STALE_SOCKET_CODES.has(code) && !signal.aborted;
        throw new AppError("explorer_request_failed", "Explorer request failed", {
          retryable: stale,
          cause: error,
        });
      });
    try {
      answer = await withRetry(attempt, { retries: 1, baseMs: 0, maxMs: 0 });
    } catch (wrapped) {
      const error = wrapped instanceof AppError ? wrapped.cause : wrapped;
      const timedOut =
        signal.aborted ||
        error instanceof undiciErrors.HeadersTimeoutError ||
        error instanceof undiciErrors.BodyTimeoutError ||
        error instanceof undiciErrors.ConnectTimeoutError;
      log.warn(
        { err: error, label, duration_ms: Math.round(performance.now() - started), timed_out: timedOut },
        "Explorer request failed.",
      );
      throw upstreamUnavailable(
        timedOut
          ? `The explorer backend did not answer within ${timeoutMs} ms.`
          : "The explorer backend is unreachable.",
        error,
      );
    }
    const { status, body } = answer;
    const json = parse(body);
    log.debug({ label, status, duration_ms: Math.round(performance.now() - started) }, "Explorer answered.");
    if (status >= 200 && status < 300) {
      if (shape(json)) return { status, body, json };
      throw upstreamUnavailable(`The explorer backend sent an unexpected body for ${label}.`);
    }
    const detail = detailOf(json);
    if (status === 404) {
      const resource = isObject(json) && typeof json.resource === "string" ? json.resource : undefined;
      throw notFound(detail ?? "Not found on the explorer backend.", resource ? { resource } : undefined);
    }
    if (status === 400) throw badRequest(detail ?? "The explorer backend rejected the request.");
    log.warn({ label, status, detail }, "Explorer answered with an error.");
    throw new AppError("upstream_unavailable", `The explorer backend answered ${status}.`, {
      status: 502,
      retryable: status >= 500,
    });
  }

  const seg = encodeURIComponent;
  const qs = (p: ExplorerPage) => `?page=${p.page}&limit=${p.limit}`;
  const isList = (v: unknown): v is ExplorerObject[] => Array.isArray(v) && v.every(isObject);

  return {
    transaction: (txId) => get("transaction", `/transactions/${seg(txId)}`, isObject),
    block: (hash) => get("block", `/blocks/${seg(hash)}`, isObject),
    blockTransactions: (hash, p) =>
      get("block_transactions", `/blocks/${seg(hash)}/transactions${qs(p)}`, isList),
    addressTransactions: (address, p) =>
      get("address_transactions", `/addresses/${seg(address)}/transactions${qs(p)}`, isList),
    addressTokenTransactions: (address, tokenId, p) =>
      get(
        "address_token_transactions",
        `/addresses/${seg(address)}/tokens/${seg(tokenId)}/transactions${qs(p)}`,
        isList,
      ),
    tokenTransactions: (tokenId, p) =>
      get("token_transactions", `/tokens/${seg(tokenId)}/transactions${qs(p)}`, isList),
    supply: (p) => get("infos_supply", `/infos/supply${qs(p)}`, isList),
    async close() {
      if (closed || !pool) return;
      closed = true;
      await pool.close();
    },
  };
}
