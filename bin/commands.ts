/** Subcommands of the CLI; each loads the validated config, builds its deps and runs. */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Argument, Command, InvalidArgumentError, Option } from "commander";
import { createApiDeps } from "../api/deps.ts";
import { startServer } from "../api/server.ts";
import type { ApiDeps } from "../api/types.ts";
import { defaultExchangePairs, type ExchangeDouble, startExchangeDouble } from "../devnet/exchange.ts";
import {
  DEMO_ACCOUNTS,
  DEMO_ADMIN_EMAIL,
  DEMO_PASSWORD,
  type IdentityProvider,
  startIdentityProvider,
} from "../devnet/identity-provider.ts";
import { DEVNET_RUN_DEFAULTS, type DevnetRunOptions, type RunningDevnet, runDevnet } from "../devnet/main.ts";
import { registerDevnetDapps, watchDevnetExchangePair } from "../devnet/register.ts";
import { DEVNET_PAYMENT_ADDRESS, startTelegramDouble, type TelegramDouble } from "../devnet/telegram.ts";
import { ensureAdminKey } from "../lib/admin-key.ts";
import { type Config, describeConfig, loadConfig } from "../lib/config.ts";
import { ConfigError } from "../lib/errors.ts";
import { backfillFigures } from "../lib/figures/backfill.ts";
import { factContext } from "../lib/figures/facts.ts";
import { refreshFigures, truncateFacts } from "../lib/figures/store.ts";
import { followJob } from "../lib/jobs/follow.ts";
import { createJobsService } from "../lib/jobs/service.ts";
import { type JobWorker, startJobWorker } from "../lib/jobs/worker.ts";
import { createLogger, type Logger } from "../lib/logger.ts";
import { createMetrics, type Metrics } from "../lib/metrics.ts";
import { backfillPair } from "../lib/prices/backfill.ts";
import { loadPricePairIds } from "../lib/prices/watched.ts";
import { seedRegistry } from "../lib/registry/seed.ts";
import { createExchangeWalletsRepo, validateWalletAddress } from "../lib/repos/exchange-wallets.ts";
import { createKeysRepo } from "../lib/repos/keys.ts";
import { runProcess } from "../lib/run-process.ts";
import { backfillSeries } from "../lib/series/backfill.ts";
import { TIMESERIES } from "../lib/series/definitions/index.ts";
import { backfillHolders } from "../lib/series/holders.ts";
import { createSeriesDeps } from "../lib/series/settings.ts";
import { openStores, type Stores } from "../lib/stores/index.ts";
import { tryLock } from "../lib/stores/pg-lock.ts";
import type { TelegramBot } from "../lib/telegram/bot.ts";
import { createProgressReporter } from "../pipeline/ingest/progress.ts";
import { CONSUMER_GROUPS } from "../pipeline/messages.ts";
import { processorLockName } from "../pipeline/processor.ts";
import { createPipelineDeps, PROCESSORS, type ProcessorName, startPipeline } from "../pipeline/runtime.ts";
import { retireTradeFeed } from "../pipeline/trade-watcher/feed.ts";
import { marketSettings, startTradeWatcher, type TradeWatcher } from "../pipeline/trade-watcher/watcher.ts";

export interface ProcessContext {
  config: Config;
  log: Logger;
  metrics: Metrics;
}

/** Config from the environment; a bad value stops here with the key, the value and what is allowed. */
export function context(env: NodeJS.ProcessEnv = process.env): ProcessContext {
  let config: Config;
  try {
    config = loadConfig(env);
    marketSettings(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(
        `${error.message}\nRun \`alephium-indexer config\` for every key and its default.\n`,
      );
      process.exit(2);
    }
    throw error;
  }
  return { config, log: createLogger({ level: config.LOG_LEVEL }), metrics: createMetrics() };
}

/** Normalized events the events sink of this process wrote (read from its metrics; a step behind). */
function eventsWritten(metrics: Metrics): () => number {
  let written = 0;
  return () => {
    void metrics.pipelineRows.get().then((m) => {
      written = m.values.find((v) => v.labels.stage === "events-sink")?.value ?? written;
    });
    return written;
  };
}

/**
 * The trade watcher of this process (pipeline/trade-watcher): the exchange and EVM pool pollers and the feed they
 * hand trades to; null without databases or without a market source.
 */
async function startMarkets(ctx: ProcessContext, stores: Stores): Promise<TradeWatcher | null> {
  if (!stores.pg || !stores.ch) return null;
  return startTradeWatcher({ pg: stores.pg, ch: stores.ch, log: ctx.log, metrics: ctx.metrics }, ctx.config);
}

const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new InvalidArgumentError(`${name} must be a whole number, got ${value}`);
  return n;
};

export function buildCli(): Command {
  const program = new Command()
    .name("alephium-indexer")
    .description(
      "Alephium indexer and normalized-events API.\nConfiguration comes from environment variables; `config` lists them all.",
    )
    .showHelpAfterError();

  program
    .command("api")
    .description("Serve the HTTP API (applies pending migrations first)")
    .action(async () => {
      const ctx = context();
      await runProcess("api", ctx.log, async () => {
        const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "api" });
        if (stores.pg) await ensureAdminKey(stores.pg, ctx.config, ctx.log);
        const server = await startServer(createApiDeps(ctx.config, stores, ctx.log, ctx.metrics));
        return async () => {
          await server.close();
          await stores.close();
        };
      });
    });

  program
    .command("migrate")
    .description("Apply pending PostgreSQL and ClickHouse migrations, then exit")
    .action(async () => {
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "migrate" });
      await stores.close();
      ctx.log.info("Migrations are up to date.");
    });

  const keys = program.command("keys").description("Manage API keys from the shell");
  keys
    .command("create")
    .description("Create an API key and print the raw key once (bootstraps the first admin key)")
    .requiredOption("--user <id>", "user id that owns the key")
    .addOption(new Option("--plan <plan>", "plan id").choices(["free", "pro", "enterprise"]).default("free"))
    .addOption(new Option("--level <level>", "access level").choices(["user", "admin"]).default("user"))
    .option(
      "--valid-until <time>",
      "end of validity (ISO 8601, or `none` for no end); default: now + the plan's validity_days",
    )
    .action(async (opts: { user: string; plan: string; level: "user" | "admin"; validUntil?: string }) => {
      if (opts.validUntil && opts.validUntil !== "none" && Number.isNaN(Date.parse(opts.validUntil)))
        throw new InvalidArgumentError(
          `--valid-until must be an ISO 8601 time or none, got ${opts.validUntil}`,
        );
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "keys create" });
      try {
        if (!stores.pg) throw new Error("keys create needs the database (DATABASES=on)");
        const created = await createKeysRepo(stores.pg).createKey({
          userId: opts.user,
          planId: opts.plan,
          level: opts.level,
          ...(opts.validUntil
            ? { validUntil: opts.validUntil === "none" ? null : new Date(opts.validUntil).toISOString() }
            : {}),
        });
        process.stdout.write(
          `${JSON.stringify({ ...created, user_id: opts.user, plan_id: opts.plan, level: opts.level }, null, 2)}\n`,
        );
        process.stderr.write("Store the key now: it is not shown again and only its hash is kept.\n");
      } finally {
        await stores.close();
      }
    });

  const registry = program.command("registry").description("Token registry");
  registry
    .command("seed")
    .description(
      "Seed tokens, bridged rows, dapps and categories from @alephium/token-list (idempotent; keeps admin edits)",
    )
    .action(async () => {
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "registry seed" });
      try {
        if (!stores.pg) throw new Error("registry seed needs the database (DATABASES=on)");
        const report = await seedRegistry({ pg: stores.pg, log: ctx.log });
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } finally {
        await stores.close();
      }
    });

  const prices = program.command("prices").description("Price pairs, trades and candles");
  prices
    .command("backfill")
    .description(
      "Rebuild the trades, candles and spot price of configured pairs from the stored normalized events (idempotent); prints one JSON result per pair, progress on stderr",
    )
    .option("--pair <id...>", "pair ids (default: every pair of an on-chain source)")
    .option("--pending", "only pairs not rebuilt yet (added while no candles processor ran)")
    .action(async (opts: { pair?: string[]; pending?: boolean }) => {
      const ids = opts.pair?.map((v) => positiveInt("--pair")(v));
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "prices backfill" });
      try {
        if (!stores.pg || !stores.ch) throw new Error("prices backfill needs the databases (DATABASES=on)");
        const pairs = await loadPricePairIds(stores.pg, ids, opts.pending === true);
        if (ids) {
          const missing = ids.filter((id) => !pairs.includes(id));
          if (missing.length > 0)
            throw new Error(`No configured pair of an on-chain source has id ${missing.join(", ")}`);
        }
        for (const [i, id] of pairs.entries()) {
          ctx.log.info({ pair_id: id, pair: i + 1, pairs: pairs.length }, "Backfilling pair.");
          const result = await backfillPair({ ch: stores.ch, pg: stores.pg, log: ctx.log }, { id });
          process.stdout.write(`${JSON.stringify(result)}\n`);
        }
      } finally {
        await stores.close();
      }
    });

  const figures = program.command("figures").description("Token market figures and TVL");
  figures
    .command("backfill")
    .description(
      "Rebuild the facts behind token market figures (burned and locked amounts, pool reserves) from the stored normalized events, then recompute the figures (idempotent); prints one JSON result, progress on stderr",
    )
    .option(
      "--rebuild",
      "empty the facts first (after removing a burn address); run it while no figures processor runs",
    )
    .action(async (opts: { rebuild?: boolean }) => {
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "figures backfill" });
      try {
        if (!stores.pg || !stores.ch) throw new Error("figures backfill needs the databases (DATABASES=on)");
        const deps = { ch: stores.ch, pg: stores.pg, log: ctx.log };
        if (opts.rebuild) await truncateFacts(stores.ch);
        const facts = await backfillFigures(deps, factContext(ctx.config));
        const refreshed = await refreshFigures(deps, {
          now: Date.now(),
          maxPriceAgeMs: ctx.config.FIGURES_MAX_PRICE_AGE_MS,
        });
        process.stdout.write(`${JSON.stringify({ ...facts, ...refreshed })}\n`);
      } finally {
        await stores.close();
      }
    });

  const series = program
    .command("series")
    .description("Series (timeseries of the normalized events and balances)");
  series
    .command("backfill")
    .description(
      "Build series history from the stored normalized events (and, for token-holders, the stored raw blocks; stop the holders processor meanwhile), idempotent: facts, points at every scale, segments, archive pages; progress on stderr, one JSON result on stdout",
    )
    .option("--series <id...>", `series ids (default: all): ${TIMESERIES.map((d) => d.id).join(", ")}`)
    .action(async (opts: { series?: string[] }) => {
      const unknown = (opts.series ?? []).filter((id) => !TIMESERIES.some((d) => d.id === id));
      if (unknown.length > 0) throw new InvalidArgumentError(`Unknown series ${unknown.join(", ")}`);
      const defs = opts.series ? TIMESERIES.filter((d) => opts.series!.includes(d.id)) : TIMESERIES;
      const fromEvents = defs.filter((d) => (d.source ?? "events") === "events");
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "series backfill" });
      const pg = stores.pg;
      if (!stores.ch || !pg) {
        await stores.close();
        throw new Error("series backfill needs the databases (DATABASES=on)");
      }
      const deps = createSeriesDeps({ ch: stores.ch, config: ctx.config, log: ctx.log });
      try {
        const events =
          fromEvents.length > 0
            ? await backfillSeries(deps, fromEvents, (p) =>
                process.stderr.write(
                  `series backfill: day ${p.day}/${p.days}, ${p.events} events, ${p.facts} facts\n`,
                ),
              )
            : { series: [], events: 0, facts: 0, days: 0 };
        const result: Record<string, unknown> = { ...events };
        if (defs.some((d) => d.source === "balances")) {
          result.series = defs.map((d) => d.id);
          // The holders pass reads the crossings its previous batch wrote: never beside the holders processor.
          const lockName = processorLockName(CONSUMER_GROUPS.holders);
          const lock = await tryLock(pg, lockName);
          if (!lock)
            throw new Error(
              `the holders processor is running (it holds the lock ${lockName}): stop it, then run this backfill`,
            );
          try {
            result.holders = await backfillHolders(deps, (p) =>
              process.stderr.write(
                `series backfill: token-holders, block ${p.blocks}/${p.total}, ${p.changes} holder changes\n`,
              ),
            );
          } finally {
            await lock.release();
          }
        }
        process.stdout.write(`${JSON.stringify(result)}\n`);
      } finally {
        deps.objects.close();
        await stores.close();
      }
    });

  const wallets = program
    .command("exchange-wallets")
    .description("Exchange wallets (cex deposit / withdraw events); add and remove them through the API");
  wallets
    .command("backdate")
    .description(
      "Move active exchange wallets' start back in block time (default 0: all history); prints the changed wallets as JSON, then run `reprocess` over the range to re-normalize it",
    )
    .option("--address <address>", "one wallet")
    .option("--exchange <id>", "every wallet of one exchange")
    .option("--from <ms>", "block time from which they apply (Unix ms)", positiveInt("--from"), 0)
    .action(async (opts: { address?: string; exchange?: string; from: number }) => {
      if (!opts.address && !opts.exchange) {
        throw new InvalidArgumentError("give --address or --exchange (the wallets to backdate)");
      }
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "exchange-wallets" });
      try {
        if (!stores.pg) throw new Error("exchange-wallets needs the databases (DATABASES=on)");
        if (opts.address) validateWalletAddress(opts.address);
        const changed = await createExchangeWalletsRepo(stores.pg).backdate(
          { address: opts.address, exchange_id: opts.exchange },
          opts.from,
        );
        process.stdout.write(`${JSON.stringify({ backdated: changed, from: opts.from })}\n`);
        if (changed.length > 0) {
          const to = Math.max(...changed.map((w) => w.updated_at));
          ctx.log.info(
            { wallets: changed.length },
            `Now re-normalize the range: npm run cli -- reprocess --from ${opts.from} --to ${to}`,
          );
        } else {
          ctx.log.warn("No active wallet matched (or each already applies from that time).");
        }
      } finally {
        await stores.close();
      }
    });

  program
    .command("trade-feed-pause")
    .description(
      "Pause the trade watcher's feed left active by a watcher that stopped without pausing it (it holds the events watermark): writes what it recorded but did not write, then pauses it. Run it only where no watcher runs",
    )
    .action(async () => {
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "trade-feed-pause" });
      try {
        if (!stores.pg || !stores.ch) throw new Error("trade-feed-pause needs the databases (DATABASES=on)");
        const paused = await retireTradeFeed({
          pg: stores.pg,
          ch: stores.ch,
          log: ctx.log,
          metrics: ctx.metrics,
        });
        process.stdout.write(`${JSON.stringify({ paused })}\n`);
      } finally {
        await stores.close();
      }
    });

  program
    .command("exchanges")
    .description(
      "Poll the exchanges of EXCHANGE_SOURCES (markets, 1m candles backfilled from listing, spot prices, fills) and the EVM pools of EVM_RPC_URLS (swaps, reserves), and run the trade watcher: fills and swaps of pairs with enable_trades become events (one watcher per deployment)",
    )
    .action(async () => {
      const ctx = context();
      await runProcess("exchanges", ctx.log, async () => {
        const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "exchanges" });
        if (!stores.pg || !stores.ch) throw new Error("exchanges needs the databases (DATABASES=on)");
        const poller = await startMarkets(ctx, stores);
        if (!poller) ctx.log.warn("EXCHANGE_SOURCES and EVM_RPC_URLS are empty: no market source to poll.");
        return async () => {
          await poller?.stop();
          await stores.close();
        };
      });
    });

  program
    .command("config")
    .description("Print every configuration key with its default")
    .addOption(
      new Option("--format <format>", "output format").choices(["markdown", "env"]).default("markdown"),
    )
    .action((opts: { format: "markdown" | "env" }) => {
      process.stdout.write(describeConfig(opts.format));
    });

  installBotCommands(program);
  installPipelineCommands(program);
  return program;
}

/** The Telegram bot of the API's deps, or a ConfigError naming what is missing. */
function telegramOf(deps: ApiDeps): TelegramBot {
  if (!deps.config.TELEGRAM_BOT_TOKEN) throw new ConfigError("The bot needs TELEGRAM_BOT_TOKEN.");
  if (!deps.telegram) throw new ConfigError("The bot needs the database (DATABASES=on).");
  return deps.telegram;
}

/** Bot subcommands: set-webhook (register POST /telegram/webhook with Telegram), poll (long polling). */
function installBotCommands(program: Command): void {
  const bot = program.command("bot").description("The Telegram bot (TELEGRAM_BOT_TOKEN)");
  bot
    .command("set-webhook")
    .description(
      "Register TELEGRAM_WEBHOOK_URL (or --url) and TELEGRAM_WEBHOOK_SECRET with Telegram as the bot's webhook",
    )
    .option("--url <url>", "public https URL of POST /telegram/webhook (default TELEGRAM_WEBHOOK_URL)")
    .action(async (opts: { url?: string }) => {
      const ctx = context();
      const url = opts.url ?? ctx.config.TELEGRAM_WEBHOOK_URL;
      if (!url) throw new InvalidArgumentError("Give --url or set TELEGRAM_WEBHOOK_URL");
      if (!ctx.config.TELEGRAM_WEBHOOK_SECRET)
        throw new InvalidArgumentError("Set TELEGRAM_WEBHOOK_SECRET: the webhook refuses updates without it");
      const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "bot set-webhook" });
      try {
        await telegramOf(createApiDeps(ctx.config, stores, ctx.log, ctx.metrics)).setWebhook(url);
        process.stdout.write(`${JSON.stringify({ ok: true, url })}\n`);
      } finally {
        await stores.close();
      }
    });
  bot
    .command("poll")
    .description("Run the bot by long polling (getUpdates) instead of a webhook: local use, one process only")
    .action(async () => {
      const ctx = context();
      await runProcess("bot", ctx.log, async () => {
        const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "bot poll" });
        const telegram = telegramOf(createApiDeps(ctx.config, stores, ctx.log, ctx.metrics));
        await telegram.startPolling();
        return async () => {
          await telegram.stop();
          await stores.close();
        };
      });
    });
}

/** Pipeline subcommands: start (everything), ingest, process, devnet, reprocess. */
function installPipelineCommands(program: Command): void {
  program
    .command("start")
    .description(
      "Run everything in one process: ingest, every processor and the API (embedded stores by default)",
    )
    .option("--devnet", "follow a simulated Alephium network started in this process (offline demo)")
    .option(
      "--devnet-blocks <n>",
      "blocks the simulated network makes ahead at its first start (14400: two hours of chain time)",
      positiveInt("--devnet-blocks"),
      DEVNET_RUN_DEFAULTS.blocks,
    )
    .option(
      "--devnet-live <rate>",
      "blocks per second it produces afterwards",
      positiveInt("--devnet-live"),
      2,
    )
    .option(
      "--devnet-port <port>",
      "port of the simulated node and explorer (default: an ephemeral port)",
      positiveInt("--devnet-port"),
      0,
    )
    .option(
      "--telegram-port <port>",
      "port of the simulated Telegram Bot API with --devnet (default: an ephemeral port)",
      positiveInt("--telegram-port"),
      0,
    )
    .option(
      "--oidc-port <port>",
      "port of the local identity provider of the admin portal with --devnet (default: an ephemeral port)",
      positiveInt("--oidc-port"),
      0,
    )
    .action(
      async (opts: {
        devnet?: boolean;
        devnetBlocks: number;
        devnetLive: number;
        devnetPort: number;
        telegramPort: number;
        oidcPort: number;
      }) => {
        const base = context();
        await runProcess("start", base.log, async () => {
          let ctx = base;
          let devnet: RunningDevnet | null = null;
          let exchangeDouble: ExchangeDouble | null = null;
          let telegramDouble: TelegramDouble | null = null;
          let identityProvider: IdentityProvider | null = null;
          if (opts.devnet) {
            // The state file makes a restart continue the same chain (the stored cursors and hashes stay valid).
            devnet = await runDevnet(
              {
                port: opts.devnetPort,
                blocks: opts.devnetBlocks,
                live: opts.devnetLive,
                statePath: join(base.config.DATA_DIR, base.config.STAGE, "devnet.json"),
              },
              (line) => base.log.info(line),
            );
            const config: Config = {
              ...base.config,
              NODE_URL: devnet.nodeUrl,
              EXPLORER_URL: devnet.explorerUrl,
              INGEST_START_TS: base.config.INGEST_START_TS || devnet.chain.options.startTimestamp - 1,
            };
            // Unless EXCHANGE_SOURCES says otherwise, the demo's exchange is a double of Gate (read through ccxt).
            if (process.env.EXCHANGE_SOURCES === undefined) {
              // Its markets are anchored to the simulated network's creation, so a restart serves the same
              // candles and fills (same ids) as before and the pollers' cursors stay valid.
              exchangeDouble = await startExchangeDouble({
                seed: 1,
                pairs: defaultExchangePairs(devnet.state.createdAt),
              });
              config.EXCHANGE_SOURCES = "gate";
              config.EXCHANGE_API_URLS = JSON.stringify({ gate: exchangeDouble.url });
              if (process.env.EXCHANGE_BACKFILL_DAYS === undefined) config.EXCHANGE_BACKFILL_DAYS = 2;
              base.log.info({ url: exchangeDouble.url }, "Simulated exchange (Gate API v4 double) started.");
            }
            // Unless TELEGRAM_BOT_TOKEN says otherwise, the demo's bot talks to a Bot API double by long
            // polling and payments go to an address of the simulated network (README "Bot and payments").
            if (process.env.TELEGRAM_BOT_TOKEN === undefined) {
              telegramDouble = await startTelegramDouble({ port: opts.telegramPort });
              config.TELEGRAM_BOT_TOKEN = telegramDouble.token;
              config.TELEGRAM_API_ROOT = telegramDouble.url;
              config.TELEGRAM_MODE = "polling";
              if (!config.PAYMENT_ADDRESS) config.PAYMENT_ADDRESS = DEVNET_PAYMENT_ADDRESS;
              base.log.info(
                { url: telegramDouble.url, payment_address: config.PAYMENT_ADDRESS },
                "Simulated Telegram (Bot API double) started.",
              );
            }
            // Unless PORTAL_OIDC_ISSUER says otherwise, the portal signs in at a local identity provider
            // (oidc-provider) with two demo accounts, one allow-listed (docs/portal.md).
            if (process.env.PORTAL_OIDC_ISSUER === undefined) {
              const secret = randomBytes(24).toString("base64url");
              const api = `http://127.0.0.1:${config.PORT}`;
              const local = `http://localhost:${config.PORT}`;
              identityProvider = await startIdentityProvider({
                port: opts.oidcPort,
                clientId: config.PORTAL_OIDC_CLIENT_ID,
                clientSecret: secret,
                redirectUris: [api, local].flatMap((origin) => [
                  `${origin}/${config.STAGE}/portal/callback`,
                  `${origin}/portal/callback`,
                ]),
              });
              config.PORTAL_OIDC_ISSUER = identityProvider.issuer;
              config.PORTAL_OIDC_CLIENT_SECRET = secret;
              if (!config.PORTAL_ADMIN_EMAILS && !config.PORTAL_ADMIN_SUBJECTS)
                config.PORTAL_ADMIN_EMAILS = DEMO_ADMIN_EMAIL;
              base.log.info(
                {
                  portal: `${api}/${config.STAGE}/portal/`,
                  issuer: identityProvider.issuer,
                  accounts: DEMO_ACCOUNTS.map((a) => a.email),
                  password: DEMO_PASSWORD,
                },
                "Admin portal: sign in with the local identity provider's demo admin.",
              );
            }
            ctx = { ...base, config };
          }
          const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "start" });
          if (stores.pg) await ensureAdminKey(stores.pg, ctx.config, ctx.log);
          if (devnet && stores.pg) await registerDevnetDapps(stores.pg, devnet.chain);
          const reporter = createProgressReporter(ctx.log, { events: eventsWritten(ctx.metrics) });
          const pipelineDeps = stores.pg ? await createPipelineDeps(ctx, stores) : null;
          const pipeline = pipelineDeps
            ? await startPipeline(pipelineDeps, {
                processors: Object.keys(PROCESSORS) as ProcessorName[],
                ingest: true,
                onProgress: (p) => reporter.update(p),
              })
            : null;
          const jobWorker: JobWorker | null =
            pipelineDeps && ctx.config.JOBS_WORKERS ? await startJobWorker(pipelineDeps) : null;
          const exchanges = await startMarkets(ctx, stores);
          const demoPair = new AbortController();
          if (exchangeDouble && exchanges && stores.pg) {
            watchDevnetExchangePair(stores.pg, { signal: demoPair.signal })
              .then(
                (id) =>
                  id !== null && ctx.log.info({ pair_id: id }, "Demo exchange pair watched with its trades."),
              )
              .catch((error: unknown) =>
                ctx.log.warn({ err: error }, "Could not watch the demo exchange pair."),
              );
          }
          const apiDeps = createApiDeps(ctx.config, stores, ctx.log, ctx.metrics);
          const server = await startServer(apiDeps);
          // Long polling runs here when asked for (one process only); webhook mode is served by the API.
          const polling = ctx.config.TELEGRAM_MODE === "polling" ? apiDeps.telegram : null;
          await polling?.startPolling();
          return async () => {
            await polling?.stop();
            demoPair.abort();
            reporter.stop();
            await server.close();
            await exchanges?.stop();
            await exchangeDouble?.close();
            await telegramDouble?.close();
            await identityProvider?.close();
            await jobWorker?.stop();
            await pipeline?.stop();
            await stores.close();
            await devnet?.close();
          };
        });
      },
    );

  program
    .command("ingest")
    .description("Follow the node and publish blocks on the bus (distributed mode: one process)")
    .action(async () => {
      const ctx = context();
      await runProcess("ingest", ctx.log, async () => {
        const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "ingest" });
        const reporter = createProgressReporter(ctx.log);
        const pipeline = await startPipeline(await createPipelineDeps(ctx, stores), {
          processors: [],
          ingest: true,
          onProgress: (p) => reporter.update(p),
        });
        return async () => {
          reporter.stop();
          await pipeline.stop();
          await stores.close();
        };
      });
    });

  program
    .command("process")
    .description(
      "Run one processor as its own consumer group (distributed mode), or `jobs`: a job worker (reindex jobs and webhook deliveries)",
    )
    .addArgument(new Argument("<name>", "processor, or jobs").choices([...Object.keys(PROCESSORS), "jobs"]))
    .action(async (name: ProcessorName | "jobs") => {
      const ctx = context();
      if (name === "jobs") {
        await runProcess("jobs", ctx.log, async () => {
          const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "process jobs" });
          if (!stores.pg) {
            await stores.close();
            throw new Error("reindex jobs need the databases (DATABASES=on)");
          }
          const worker = await startJobWorker(await createPipelineDeps(ctx, stores));
          ctx.log.info(
            { concurrency: ctx.config.JOBS_CONCURRENCY, webhooks: ctx.config.WEBHOOK_CONCURRENCY },
            "Job worker started (reindex jobs and webhook deliveries).",
          );
          return async () => {
            await worker.stop();
            await stores.close();
          };
        });
        return;
      }
      await runProcess(name, ctx.log, async () => {
        const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "process" });
        const pipeline = await startPipeline(await createPipelineDeps(ctx, stores), {
          processors: [name],
          ingest: false,
        });
        return async () => {
          await pipeline.stop();
          await stores.close();
        };
      });
    });

  program
    .command("reprocess")
    .description(
      "Create a reindex job: publish the stored raw blocks of a time range again (a new decoder reaches history without the node). Follows the job with a progress bar on stderr and prints it as JSON on stdout when it ends; exits 1 unless it completed",
    )
    .requiredOption(
      "--from <ms>",
      "start of the block-time range, Unix ms (inclusive)",
      positiveInt("--from"),
    )
    .requiredOption("--to <ms>", "end of the block-time range, Unix ms (inclusive)", positiveInt("--to"))
    .option("--dapp <id>", "only blocks that mention a contract of this dapp")
    .option("--contract <address>", "only blocks that mention this contract", (value: string) => {
      if (!/^[1-9A-HJ-NP-Za-km-z]{20,100}$/.test(value))
        throw new InvalidArgumentError(`--contract must be a base58 contract address, got ${value}`);
      return value;
    })
    .option(
      "--wait",
      "run the job in this process (a worker and, on the in-process bus, the processors) instead of waiting for the workers of `start` or `process jobs`; always so on the embedded stores",
    )
    .option("--no-follow", "print the queued job as JSON and exit")
    .action(
      async (opts: {
        from: number;
        to: number;
        dapp?: string;
        contract?: string;
        wait?: boolean;
        follow: boolean;
      }) => {
        const ctx = context();
        const stores = await openStores(ctx.config, ctx.log, { migrate: true, command: "reprocess" });
        if (!stores.pg || !stores.ch) {
          await stores.close();
          throw new Error("reprocess needs the databases (DATABASES=on)");
        }
        const jobs = createJobsService(stores.pg, ctx.config, ctx.log);
        let worker: JobWorker | null = null;
        let pipeline: Awaited<ReturnType<typeof startPipeline>> | null = null;
        try {
          const job = await jobs.create({
            fromTs: opts.from,
            toTs: opts.to,
            dappId: opts.dapp ?? null,
            contractAddress: opts.contract ?? null,
            createdBy: "cli",
          });
          if (!opts.follow) {
            process.stdout.write(`${JSON.stringify(job)}\n`);
            return;
          }
          const deps = await createPipelineDeps(ctx, stores);
          // Embedded stores belong to this process alone: nobody else can work the queue, so it runs here.
          if (opts.wait || deps.bus.kind === "memory") {
            // The in-process bus has no consumers of its own: run the processors here, but the raw sink (raw blocks
            // are what is republished) and the registry (it asks the node, which reprocessing does without).
            const processors = (Object.keys(PROCESSORS) as ProcessorName[]).filter(
              (name) => name !== "raw-sink" && name !== "registry",
            );
            pipeline = await startPipeline(deps, {
              processors: deps.bus.kind === "memory" ? processors : [],
              ingest: false,
            });
            worker = await startJobWorker(deps);
          }
          const ended = await followJob(jobs, job.job_id);
          process.stdout.write(`${JSON.stringify(ended)}\n`);
          if (ended.state !== "completed") process.exitCode = 1;
        } finally {
          await worker?.stop();
          await pipeline?.stop();
          await jobs.close();
          await stores.close();
        }
      },
    );

  program
    .command("devnet")
    .description("Serve a simulated Alephium network (test double of the full node and explorer backend)")
    .option("--port <port>", "port", positiveInt("--port"), DEVNET_RUN_DEFAULTS.port)
    .option("--host <host>", "interface", DEVNET_RUN_DEFAULTS.host)
    .option(
      "--seed <n>",
      "seed: the same seed makes the same chain",
      positiveInt("--seed"),
      DEVNET_RUN_DEFAULTS.seed,
    )
    .option("--blocks <n>", "blocks made ahead", positiveInt("--blocks"), DEVNET_RUN_DEFAULTS.blocks)
    .option(
      "--live <rate>",
      "blocks per second afterwards (0 = none)",
      positiveInt("--live"),
      DEVNET_RUN_DEFAULTS.live,
    )
    .option(
      "--reorg-every <n>",
      "reorg a random chain every n blocks (0 = never)",
      positiveInt("--reorg-every"),
      0,
    )
    .option(
      "--state <file>",
      "state file: a restart continues the chain it describes (written at the first start)",
    )
    .action(
      async (
        opts: Pick<DevnetRunOptions, "port" | "host" | "seed" | "blocks" | "live" | "reorgEvery"> & {
          state?: string;
        },
      ) => {
        const ctx = context();
        await runProcess("devnet", ctx.log, async () => {
          const { state, ...rest } = opts;
          const devnet = await runDevnet({ ...rest, ...(state ? { statePath: state } : {}) }, (line) =>
            process.stdout.write(`${line}\n`),
          );
          return () => devnet.close();
        });
      },
    );
}

export { positiveInt };
