/**
 * The NFT metadata fetcher of the job worker process (started with the reindex worker and the webhook deliveries,
 * pipeline/jobs/worker.ts): a loop that claims due URIs of the cache (`nft_metadata`, lib/nfts/metadata-repo.ts),
 * fetches NFT_METADATA_CONCURRENCY of them at once (lib/nfts/metadata.ts: address policy, redirects, byte limit,
 * timeout, JSON only), records each outcome and counts it (`alephium_nft_metadata_fetches_total{outcome}`). When
 * nothing is due it waits NFT_METADATA_POLL_S. Any number of worker processes may run: a claim moves the row's
 * `next_try_at` past the fetch's lease (FOR UPDATE SKIP LOCKED), so each URI is fetched by one of them, and a
 * worker that dies mid-fetch leaves its rows due again once the lease ends. Routes only read the cache.
 */
import type { Config } from "../../lib/config.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics.ts";
import {
  createNftMetadataFetcher,
  fetcherOptions,
  type NftMetadataFetcher,
} from "../../lib/nfts/metadata.ts";
import { type Backoff, createNftMetadataRepo } from "../../lib/nfts/metadata-repo.ts";
import { sleep } from "../../lib/retry.ts";
import type { PgQueryable } from "../../lib/stores/postgres.ts";

export interface NftMetadataWorkerDeps {
  pg: PgQueryable;
  config: Config;
  log: Logger;
  metrics?: Metrics;
  /** The fetcher (tests pass one with another address policy); built from the config when absent. */
  fetcher?: NftMetadataFetcher;
}

export interface NftMetadataWorker {
  /** Claims and fetches one round of due URIs (at most NFT_METADATA_CONCURRENCY); how many were fetched. */
  runOnce(now?: number): Promise<number>;
  /** Runs rounds until none is due; how many URIs were fetched in all. */
  drain(): Promise<number>;
  /** Starts the loop (nothing when NFT_METADATA_FETCH is off or NFT_METADATA_CONCURRENCY is 0). */
  start(): void;
  stop(): Promise<void>;
}

export function createNftMetadataWorker(deps: NftMetadataWorkerDeps): NftMetadataWorker {
  const { config } = deps;
  const log = deps.log.child({ component: "nft-metadata" });
  const repo = createNftMetadataRepo(deps.pg);
  const fetcher = deps.fetcher ?? createNftMetadataFetcher(fetcherOptions(config));
  const backoff: Backoff = {
    baseMs: config.NFT_METADATA_RETRY_BASE_S * 1000,
    maxMs: config.NFT_METADATA_RETRY_MAX_S * 1000,
  };
  // A claimed row is due again after the fetch's own limit and a margin, should this process die mid-fetch.
  const leaseMs = config.NFT_METADATA_TIMEOUT_MS + 60_000;
  const width = Math.max(1, config.NFT_METADATA_CONCURRENCY);
  const stopping = new AbortController();
  let loop: Promise<void> | null = null;

  const runOnce = async (now = Date.now()): Promise<number> => {
    const started = performance.now();
    // The round's clock: `now` plus the time it took (a test's round in the future stays there).
    const clock = () => now + Math.round(performance.now() - started);
    const claimed = await repo.claimDue(width, now, leaseMs);
    await Promise.all(
      claimed.map(async (c) => {
        const outcome = await fetcher.fetch(c.uri).catch((error: unknown) => ({
          state: "failed" as const,
          error: `fetcher error: ${(error as Error).message}`,
        }));
        await repo.record(c, outcome, clock(), backoff);
        deps.metrics?.nftMetadataFetches.inc({ outcome: outcome.state });
        if (outcome.state !== "ok")
          log.debug(
            { uri: c.uri.slice(0, 200), state: outcome.state, err: outcome.error },
            "NFT metadata not read.",
          );
      }),
    );
    return claimed.length;
  };

  return {
    runOnce,
    async drain() {
      let total = 0;
      for (let n = await runOnce(); n > 0; n = await runOnce()) total += n;
      return total;
    },
    start() {
      if (loop || !config.NFT_METADATA_FETCH || config.NFT_METADATA_CONCURRENCY === 0) return;
      loop = (async () => {
        while (!stopping.signal.aborted) {
          let fetched = 0;
          try {
            fetched = await runOnce();
          } catch (error) {
            log.warn({ err: error }, "NFT metadata round failed; trying again later.");
          }
          if (fetched === 0) await sleep(config.NFT_METADATA_POLL_S * 1000, stopping.signal);
        }
      })();
    },
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
