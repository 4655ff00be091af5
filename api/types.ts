import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from "fastify";
import type { BanGuard } from "../lib/bans/guard.ts";
import type { BansRepo } from "../lib/bans/repo.ts";
import type { Config } from "../lib/config.ts";
import type { DappsService } from "../lib/dapps/service.ts";
import type { EventsService } from "../lib/events/service.ts";
import type { StreamHub } from "../lib/events/stream.ts";
import type { ExplorerClient } from "../lib/explorer-client.ts";
import type { JobsService } from "../lib/jobs/service.ts";
import type { KeysRepo, KeyWithPlan } from "../lib/keys/repo.ts";
import type { ExchangeWalletsRepo } from "../lib/labels/exchange-wallets.ts";
import type { AddressLabelsRepo } from "../lib/labels/repo.ts";
import type { Logger } from "../lib/logger.ts";
import type { Metrics } from "../lib/metrics.ts";
import type { ContractStateReader } from "../lib/node-calls.ts";
import type { PaymentsRepo } from "../lib/payments/repo.ts";
import type { PortalService } from "../lib/portal/service.ts";
import type { PricePairs } from "../lib/prices/pairs.ts";
import type { PriceReads } from "../lib/prices/service.ts";
import type { SharedSecrets } from "../lib/secrets.ts";
import type { SeriesService } from "../lib/series/service.ts";
import type { SqlService } from "../lib/sql/service.ts";
import type { Ch } from "../lib/stores/clickhouse.ts";
import type { Pg } from "../lib/stores/postgres.ts";
import type { TelegramBot } from "../lib/telegram/bot.ts";
import type { TelegramStore } from "../lib/telegram/store.ts";
import type { RegistryRepo } from "../lib/tokens/repo.ts";
import type { UsageRecorder } from "../lib/usage/recorder.ts";
import type { WebhooksService } from "../lib/webhooks/service.ts";
import type { WireGuardPeersRepo } from "../lib/wireguard/peers.ts";

/**
 * Who may call a route: anyone, any valid key, an admin key, or (the admin portal's own routes) a signed-in
 * portal session: its signed cookie, and a CSRF token on state-changing requests (api/routes/portal).
 */
export type AccessLevel = "public" | "user" | "admin" | "session";
/** Whether a route needs the databases: `required` answers 503 without them, `optional` degrades. */
export type DbNeed = "required" | "optional" | "none";

/** The tags of the interface (SPEC.md, "What the service does", point 3). */
export const SPEC_TAGS = [
  "Addresses",
  "Category",
  "Chain",
  "Contracts",
  "NFT",
  "Dapps",
  "dapps:furnace",
  "dapps:chainreaction",
  "dapps:elexium",
  "dapps:alphbanx",
  "dapps:dia-oracle",
  "Events",
  "Series",
  "Token",
  "Price",
  "Transaction",
  "Blocks",
  "Keys",
  "Plans",
  "Payment",
  "Banned",
  "Telegram",
  "Webhook",
  "WireGuard",
  "Docs",
] as const;

declare module "fastify" {
  interface FastifyContextConfig {
    access?: AccessLevel;
    db?: DbNeed;
    /** The key may come as the `api_key` query parameter when neither key header is sent (EventSource). */
    keyInQuery?: boolean;
  }
  interface FastifyInstance {
    /** Every route with its access level, in registration order. */
    routeTable: RouteEntry[];
  }
  interface FastifyRequest {
    /** The authenticated key on user/admin routes (null on public routes and without a database). */
    apiKey: KeyWithPlan | null;
  }
}

export interface RouteEntry {
  method: string;
  url: string;
  access: AccessLevel;
  db: DbNeed;
}

/**
 * The dependency bag of the API, built by `createApiDeps` (api/deps.ts) and passed to `buildApp`.
 * Stores and repositories are null without databases; routes declared `db: "required"` are answered
 * 503 by the auth hook before their handler runs, and route groups read them through `requireDb`
 * (api/require-db.ts), which answers the same 503 rather than assume them with `!`.
 */
export interface ApiDeps {
  config: Config;
  log: Logger;
  /** Secrets shared by every API process: configured, else kept in Postgres (lib/secrets.ts); loaded by buildApp. */
  secrets: SharedSecrets;
  metrics: Metrics;
  pg: Pg | null;
  ch: Ch | null;
  keys: KeysRepo | null;
  registry: RegistryRepo | null;
  labels: AddressLabelsRepo | null;
  /** Price sources, configured pairs and their token legs (lib/prices/pairs.ts). */
  prices: PricePairs | null;
  /** Normalized events as served (lib/events). */
  events: EventsService | null;
  /** Exchange wallets (lib/labels/exchange-wallets.ts). */
  exchangeWallets: ExchangeWalletsRepo | null;
  /** A contract's state from the full node (lib/node-calls.ts); null without NODE_URL. */
  contractState: ContractStateReader | null;
  /** The stream's hub: one watermark read per step for every waiting /events/stream connection (lib/events/stream.ts). */
  streamHub: StreamHub | null;
  /** Spot prices, candles and their scales (lib/prices/service.ts). */
  priceReads: PriceReads | null;
  /** Series, lists and their archive (lib/series/service.ts); closed with the app. */
  series: SeriesService | null;
  /** Read-only SQL over the api_v1_* views (lib/sql). */
  sql: SqlService | null;
  /** The five dapp groups' reads (lib/dapps). */
  dapps: DappsService | null;
  /** Invoices and payments (lib/payments). */
  payments: PaymentsRepo | null;
  /** Bans of key owners, Telegram users and IP ranges (lib/bans/repo.ts). */
  bansRepo: BansRepo | null;
  /** This process's cache of the active bans, enforced by the auth hook (lib/bans/guard.ts). */
  bans: BanGuard | null;
  /** The bot's admins, bans and handled updates (lib/telegram/store.ts). */
  telegramStore: TelegramStore | null;
  /** The Telegram bot; null when TELEGRAM_BOT_TOKEN is empty or without a database (webhook answers 404). */
  telegram: TelegramBot | null;
  /** Reindex jobs (lib/jobs): created, listed and cancelled here; run by the job workers. */
  jobs: JobsService | null;
  /** Per-key request counts (lib/usage/recorder.ts): counted by the auth hook, flushed to `key_usage`. */
  usage: UsageRecorder | null;
  /** Outbound webhooks of key owners (lib/webhooks): managed here; delivered by the job workers. */
  webhooks: WebhooksService | null;
  /** WireGuard peers of key owners (lib/wireguard/peers.ts). */
  wireguard: WireGuardPeersRepo | null;
  /** The admin portal's sign-in, sessions and audit log (lib/portal); null without a database. */
  portal: PortalService | null;
  /** Explorer backend behind the decorated transaction and block routes; closed with the app. */
  explorer: ExplorerClient;
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** The services of `ApiDeps` that exist only with the databases. */
export type DbDeps = {
  [K in keyof ApiDeps as null extends ApiDeps[K] ? K : never]-?: NonNullable<ApiDeps[K]>;
};
