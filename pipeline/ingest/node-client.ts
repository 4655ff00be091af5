/**
 * The slice of the full node API ingest uses, through @alephium/web3's generated client, with retries.
 * Failures become `AppError`s classified by HTTP status: 4xx answers (bad range, unknown block) are
 * final, network errors, timeouts and 5xx are retried.
 */
import { NodeProvider, type node } from "@alephium/web3";
import { AppError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import { retryableStatus, withRetry } from "../../lib/retry.ts";

/** The node call's failure with its retry decision. */
export function nodeError(what: string, error: unknown): AppError {
  const status = (error as { status?: unknown } | null)?.status;
  const code = typeof status === "number" ? status : undefined;
  return new AppError("node_request_failed", `Node call ${what} failed${code ? ` (HTTP ${code})` : ""}`, {
    status: 502,
    retryable: retryableStatus(code),
    cause: error,
  });
}

export interface NodeClient {
  chainTip(fromGroup: number, toGroup: number): Promise<number>;
  mainHashAt(fromGroup: number, toGroup: number, height: number): Promise<string | undefined>;
  header(hash: string): Promise<node.BlockHeaderEntry>;
  blocksWithEvents(fromTs: number, toTs: number): Promise<node.BlockAndEvents[][]>;
}

export function createNodeClient(options: {
  url: string;
  apiKey: string;
  log: Logger;
  signal?: AbortSignal;
}): NodeClient {
  const provider = new NodeProvider(options.url, options.apiKey || undefined);
  const log = options.log.child({ component: "node-client" });
  const call = <T>(what: string, fn: () => Promise<T>) =>
    withRetry(() => fn().catch((error: unknown) => Promise.reject(nodeError(what, error))), {
      retries: 8,
      baseMs: 200,
      maxMs: 10_000,
      signal: options.signal,
      onRetry: (error, attempt, delay) =>
        log.warn(
          { call: what, attempt, delay_ms: Math.round(delay), err: String((error as Error).cause ?? error) },
          "Node call failed; retrying.",
        ),
    });
  return {
    chainTip: async (fromGroup, toGroup) =>
      (await call("chain-info", () => provider.blockflow.getBlockflowChainInfo({ fromGroup, toGroup })))
        .currentHeight,
    mainHashAt: async (fromGroup, toGroup, height) =>
      (await call("hashes", () => provider.blockflow.getBlockflowHashes({ fromGroup, toGroup, height })))
        .headers[0],
    header: (hash) => call("header", () => provider.blockflow.getBlockflowHeadersBlockHash(hash)),
    blocksWithEvents: async (fromTs, toTs) =>
      (
        await call("blocks-with-events", () =>
          provider.blockflow.getBlockflowBlocksWithEvents({ fromTs, toTs }),
        )
      ).blocksAndEvents,
  };
}
