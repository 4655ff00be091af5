/** The API's dependency bag, built once by `createApiDeps` (CLI, tests, benches). */

import { createBanGuard } from "../lib/bans/guard.ts";
import { createBansRepo } from "../lib/bans/repo.ts";
import type { Config } from "../lib/config.ts";
import { createDappsService } from "../lib/dapps/service.ts";
import { createLabelCache } from "../lib/events/label-cache.ts";
import { createEventsReader, readProgress } from "../lib/events/reader.ts";
import { createEventsService } from "../lib/events/service.ts";
import { createStreamHub, streamSettings } from "../lib/events/stream.ts";
import { createEventsTail } from "../lib/events/tail.ts";
import { createExplorerClient } from "../lib/explorer-client.ts";
import { createJobsService } from "../lib/jobs/service.ts";
import { createKeysRepo } from "../lib/keys/repo.ts";
import { createKeyUsageRepo } from "../lib/keys/usage-repo.ts";
import { createExchangeWalletsRepo } from "../lib/labels/exchange-wallets.ts";
import { createAddressLabelsRepo } from "../lib/labels/repo.ts";
import type { Logger } from "../lib/logger.ts";
import { createMetrics, type Metrics } from "../lib/metrics.ts";
import { createContractCaller, createContractStateReader } from "../lib/node-calls.ts";
import { createPaymentsRepo } from "../lib/payments/repo.ts";
import { createPortalService } from "../lib/portal/service.ts";
import { createPricePairs } from "../lib/prices/pairs.ts";
import { createPriceReads } from "../lib/prices/service.ts";
import { createSharedSecrets } from "../lib/secrets.ts";
import { createSeriesService } from "../lib/series/service.ts";
import { seriesObjectStore, seriesSettings } from "../lib/series/settings.ts";
import { createSqlService } from "../lib/sql/service.ts";
import type { Ch } from "../lib/stores/clickhouse.ts";
import type { Pg } from "../lib/stores/postgres.ts";
import { createTelegramBot } from "../lib/telegram/bot.ts";
import { createTelegramStore } from "../lib/telegram/store.ts";
import { createRegistryRepo } from "../lib/tokens/repo.ts";
import { createUsageRecorder } from "../lib/usage/recorder.ts";
import { createWebhooksService } from "../lib/webhooks/service.ts";
import { createWireGuardPeersRepo } from "../lib/wireguard/peers.ts";
import type { ApiDeps } from "./types.ts";

/** Both stores, or neither (DATABASES=off). */
export interface ApiStores {
  pg: Pg | null;
  ch: Ch | null;
}

export function createApiDeps(
  config: Config,
  stores: ApiStores,
  log: Logger,
  metrics: Metrics = createMetrics(),
): ApiDeps {
  const { pg, ch } = stores;
  const secrets = createSharedSecrets(pg, {
    dapp_cursor: config.DAPP_CURSOR_SECRET,
    portal_session: config.PORTAL_SESSION_SECRET,
  });
  const labels = pg ? createAddressLabelsRepo(pg) : null;
  const reader = ch ? createEventsReader(ch) : null;
  const keys = pg ? createKeysRepo(pg) : null;
  const payments = pg ? createPaymentsRepo(pg) : null;
  const bansRepo = pg ? createBansRepo(pg) : null;
  const telegramStore = pg ? createTelegramStore(pg) : null;
  const jobs = pg ? createJobsService(pg, config, log) : null;
  const usage = pg
    ? createUsageRecorder({
        repo: createKeyUsageRepo(pg),
        log,
        flushMs: config.USAGE_FLUSH_MS,
        retentionDays: config.USAGE_RETENTION_DAYS,
      })
    : null;
  const events =
    labels && reader
      ? createEventsService({
          reader,
          labels: createLabelCache(labels, { checkMs: config.EVENTS_PAGE_CACHE_MS }),
          tail:
            config.EVENTS_TAIL_CACHE > 0
              ? createEventsTail({
                  reader,
                  capacity: config.EVENTS_TAIL_CACHE,
                  checkMs: config.EVENTS_WATERMARK_CACHE_MS,
                })
              : null,
          hydration: config.PAYLOAD_HYDRATION,
          watermarkCacheMs: config.EVENTS_WATERMARK_CACHE_MS,
          pageCacheMs: config.EVENTS_PAGE_CACHE_MS,
        })
      : null;
  const streamHub = events ? createStreamHub(events, streamSettings(config)) : null;
  return {
    config,
    log,
    secrets,
    metrics,
    pg,
    ch,
    keys,
    payments,
    bansRepo,
    bans: bansRepo ? createBanGuard({ repo: bansRepo, refreshMs: config.BANS_REFRESH_MS, log }) : null,
    telegramStore,
    jobs,
    usage,
    telegram:
      keys && payments && telegramStore && config.TELEGRAM_BOT_TOKEN
        ? createTelegramBot({
            config,
            log,
            keys,
            payments,
            store: telegramStore,
            jobs,
            usage,
            progress: ch ? () => readProgress(ch) : null,
          })
        : null,
    registry: pg ? createRegistryRepo(pg) : null,
    labels,
    prices: pg ? createPricePairs(pg) : null,
    events,
    streamHub,
    exchangeWallets: pg ? createExchangeWalletsRepo(pg) : null,
    contractState: config.NODE_URL
      ? createContractStateReader({
          url: config.NODE_URL,
          apiKey: config.NODE_API_KEY,
          timeoutMs: config.NODE_CALL_TIMEOUT_MS,
        })
      : null,
    priceReads: ch
      ? createPriceReads({ ch, cacheMs: config.OHLCV_CACHE_MS, staleMs: config.OHLCV_STALE_MS })
      : null,
    series: ch
      ? createSeriesService({
          ch: () => ch,
          settings: seriesSettings(config),
          openArchive: () => seriesObjectStore(config),
        })
      : null,
    sql: ch ? createSqlService({ ch, limits: config, metrics }) : null,
    dapps:
      events && pg && ch
        ? createDappsService({
            ch,
            pg,
            watermark: () => events.watermark(),
            node: config.NODE_URL
              ? createContractCaller({
                  url: config.NODE_URL,
                  apiKey: config.NODE_API_KEY,
                  timeoutMs: config.NODE_CALL_TIMEOUT_MS,
                })
              : null,
            cursorSecret: () => secrets.get("dapp_cursor"),
            cursorTtlMs: config.DAPP_CURSOR_TTL_MS,
            pageCacheMs: config.DAPP_PAGE_CACHE_MS,
            pageStaleMs: config.DAPP_PAGE_STALE_MS,
          })
        : null,
    webhooks: pg && events && jobs ? createWebhooksService(pg, config, events, () => jobs.boss()) : null,
    wireguard: pg ? createWireGuardPeersRepo(pg) : null,
    portal: pg && keys ? createPortalService({ pg, keys, config, log }) : null,
    explorer: createExplorerClient({
      baseUrl: config.EXPLORER_URL,
      timeoutMs: config.EXPLORER_TIMEOUT_MS,
      log,
    }),
  };
}
