/**
 * Read-only contract calls to the full node for the API (`POST /contracts/call-contract` through
 * @alephium/web3's client): one attempt with a timeout, since a request waits on it. A failed VM call is an
 * answer (`null`); an unreachable node is a 502.
 */
import { groupOfAddress, NodeProvider, type node } from "@alephium/web3";
import { upstreamUnavailable } from "./errors.ts";

export interface ContractCaller {
  /** The returned values of a method call, or null when the VM refused it (no such contract or method). */
  call(address: string, methodIndex: number, args?: node.Val[]): Promise<node.Val[] | null>;
}

export function createContractCaller(options: {
  url: string;
  apiKey: string;
  timeoutMs: number;
}): ContractCaller {
  const provider = new NodeProvider(options.url, options.apiKey || undefined);
  return {
    async call(address, methodIndex, args) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${options.timeoutMs} ms`)),
          options.timeoutMs,
        );
      });
      try {
        const result = await Promise.race([
          provider.contracts.postContractsCallContract({
            group: groupOfAddress(address),
            address,
            methodIndex,
            args,
          }),
          timeout,
        ]);
        return "returns" in result ? result.returns : null;
      } catch (error) {
        throw upstreamUnavailable("The Alephium full node did not answer the contract call.", error);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** A contract's state as the node answers `GET /contracts/{address}/state`. */
export interface ContractStateReader {
  /** The state, or null when the node knows no such contract; throws 502 when the node does not answer. */
  state(address: string): Promise<node.ContractState | null>;
}

export function createContractStateReader(options: {
  url: string;
  apiKey: string;
  timeoutMs: number;
}): ContractStateReader {
  const base = options.url.replace(/\/+$/, "");
  return {
    async state(address) {
      let res: Response;
      try {
        res = await fetch(`${base}/contracts/${encodeURIComponent(address)}/state`, {
          headers: { accept: "application/json", ...(options.apiKey ? { "X-API-KEY": options.apiKey } : {}) },
          signal: AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        throw upstreamUnavailable("The Alephium full node did not answer the contract state request.", error);
      }
      if (res.status === 404 || res.status === 400) return null;
      if (!res.ok)
        throw upstreamUnavailable(`The Alephium full node answered ${res.status} for a contract state.`);
      return (await res.json()) as node.ContractState;
    },
  };
}
