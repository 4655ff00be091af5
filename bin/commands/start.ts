/** `start`: everything in one process (ingest, every processor, the API; `--devnet` for the offline demo). */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { Command } from "commander";
import type { ExchangeDouble } from "../../devnet/exchange.ts";
import type { IdentityProvider } from "../../devnet/identity-provider.ts";
import type { RunningDevnet } from "../../devnet/main.ts";
import type { TelegramDouble } from "../../devnet/telegram.ts";
import type { Config } from "../../lib/config.ts";
import { runProcess } from "../../lib/run-process.ts";
import type { JobWorker } from "../../pipeline/jobs/worker.ts";
import { PROCESSOR_NAMES } from "../../pipeline/processor-names.ts";
import {
  context,
  eventsWritten,
  openPreparedStores,
  positiveInt,
  startProcessTradeWatcher,
} from "./shared.ts";

/**
 * The demo's live reorgs: by default one every 60 blocks (half a minute at 2 blocks/s: DEVNET_REORG_EVERY), 1 to 4
 * blocks deep, so that about every other one is deeper than CONFIRMATIONS (2) and shows as a reorg notice, about
 * one a minute.
 */
const DEMO_REORG_DEPTH = 4;
/** Written into the demo's WireGuard client configurations; nothing listens there. */
const DEMO_WG_ENDPOINT = "wg.demo.invalid:51820";

export function installStartCommand(program: Command): void {
  program
    .command("start")
    .description(
      "Run everything in one process: ingest, every processor and the API (embedded stores by default)",
    )
    .option("--devnet", "follow a simulated Alephium network started in this process (offline demo)")
    .option(
      "--devnet-blocks <n>",
      "blocks the simulated network makes ahead at its first start (default: DEVNET_BLOCKS, 14400: two hours of chain time)",
      positiveInt("--devnet-blocks"),
    )
    .option(
      "--devnet-live <rate>",
      "blocks per second it produces afterwards",
      positiveInt("--devnet-live"),
      2,
    )
    .option(
      "--devnet-reorg-every <n>",
      "with --devnet, reorg a random chain (depth 1..4: the deeper ones, past CONFIRMATIONS 2, reach the events as reorg notices) every n live blocks; 0 = never (default: DEVNET_REORG_EVERY, 60)",
      positiveInt("--devnet-reorg-every"),
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
        devnetBlocks?: number;
        devnetLive: number;
        devnetReorgEvery?: number;
        devnetPort: number;
        telegramPort: number;
        oidcPort: number;
      }) => {
        const base = context();
        await runProcess("start", base.log, async () => {
          // Everything this process runs is loaded before any of it starts, as with static imports: a module
          // evaluated later (ccxt's takes about a second) would hold the event loop while ingest and the API run.
          // (The trade watcher's and the demo's registration modules are loaded here for that reason alone: the
          // `import()` further down finds them loaded.)
          const [
            { createApiDeps },
            { startServer },
            { ensureAdminKey },
            { createProgressReporter },
            { startJobWorker },
            { createPipelineDeps, startPipeline },
          ] = await Promise.all([
            import("../../api/deps.ts"),
            import("../../api/server.ts"),
            import("../../lib/admin-key.ts"),
            import("../../pipeline/ingest/progress.ts"),
            import("../../pipeline/jobs/worker.ts"),
            import("../../pipeline/runtime.ts"),
            import("../../pipeline/trade-watcher/watcher.ts"),
          ]);
          let ctx = base;
          let devnet: RunningDevnet | null = null;
          let exchangeDouble: ExchangeDouble | null = null;
          let telegramDouble: TelegramDouble | null = null;
          let identityProvider: IdentityProvider | null = null;
          if (opts.devnet) {
            // The simulated network and the demo's doubles are loaded only for the demo.
            const [
              { defaultExchangePairs, startExchangeDouble },
              { DEMO_ACCOUNTS, DEMO_ADMIN_EMAIL, DEMO_PASSWORD, startIdentityProvider },
              { runDevnet },
              { DEVNET_PAYMENT_ADDRESS, startTelegramDouble },
              { generateKeyPair },
            ] = await Promise.all([
              import("../../devnet/exchange.ts"),
              import("../../devnet/identity-provider.ts"),
              import("../../devnet/main.ts"),
              import("../../devnet/telegram.ts"),
              import("../../lib/wireguard/keys.ts"),
              import("../../devnet/register.ts"),
              import("../../devnet/labels.ts"),
            ]);
            // The state file makes a restart continue the same chain (the stored cursors and hashes stay valid).
            devnet = await runDevnet(
              {
                port: opts.devnetPort,
                blocks: opts.devnetBlocks ?? base.config.DEVNET_BLOCKS,
                live: opts.devnetLive,
                reorgEvery: opts.devnetReorgEvery ?? base.config.DEVNET_REORG_EVERY,
                reorgDepth: DEMO_REORG_DEPTH,
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
            if (!base.isSet("EXCHANGE_SOURCES")) {
              // Its markets are anchored to the simulated network's creation, so a restart serves the same
              // candles and fills (same ids) as before and the pollers' cursors stay valid.
              exchangeDouble = await startExchangeDouble({
                seed: 1,
                pairs: defaultExchangePairs(devnet.state.createdAt),
              });
              config.EXCHANGE_SOURCES = ["gate"];
              config.EXCHANGE_API_URLS = { gate: exchangeDouble.url };
              if (!base.isSet("EXCHANGE_BACKFILL_DAYS")) config.EXCHANGE_BACKFILL_DAYS = 2;
              base.log.info({ url: exchangeDouble.url }, "Simulated exchange (Gate API v4 double) started.");
            }
            // Unless TELEGRAM_BOT_TOKEN says otherwise, the demo's bot talks to a Bot API double by long
            // polling and payments go to an address of the simulated network (README "Bot and payments").
            if (!base.isSet("TELEGRAM_BOT_TOKEN")) {
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
            if (!base.isSet("PORTAL_OIDC_ISSUER")) {
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
              if (config.PORTAL_ADMIN_EMAILS.length === 0 && config.PORTAL_ADMIN_SUBJECTS.length === 0)
                config.PORTAL_ADMIN_EMAILS = [DEMO_ADMIN_EMAIL];
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
            // Unless WG_SERVER_PUBLIC_KEY says otherwise, WireGuard peers can be created against a demo-only
            // server key made at each start (its private half is thrown away: no tunnel ever runs in the demo).
            if (!base.isSet("WG_SERVER_PUBLIC_KEY")) {
              config.WG_SERVER_PUBLIC_KEY = generateKeyPair().publicKey;
              if (!base.isSet("WG_ENDPOINT")) config.WG_ENDPOINT = DEMO_WG_ENDPOINT;
              base.log.info(
                { server_public_key: config.WG_SERVER_PUBLIC_KEY, endpoint: config.WG_ENDPOINT },
                "WireGuard: demo-only server key made for this start (no tunnel runs; peers' configurations are examples).",
              );
            }
            ctx = { ...base, config };
          }
          const stores = await openPreparedStores(ctx, "start");
          if (stores.pg) await ensureAdminKey(stores.pg, ctx.config, ctx.log);
          if (devnet && stores.pg) {
            const [{ registerDevnetDapps }, { labelDevnetContracts }] = await Promise.all([
              import("../../devnet/register.ts"),
              import("../../devnet/labels.ts"),
            ]);
            await registerDevnetDapps(stores.pg, devnet.chain);
            await labelDevnetContracts(stores.pg, devnet.chain);
          }
          const reporter = createProgressReporter(ctx.log, { events: eventsWritten(ctx.metrics) });
          const pipelineDeps = stores.pg ? await createPipelineDeps(ctx, stores) : null;
          const pipeline = pipelineDeps
            ? await startPipeline(pipelineDeps, {
                processors: [...PROCESSOR_NAMES],
                ingest: true,
                onProgress: (p) => reporter.update(p),
              })
            : null;
          const jobWorker: JobWorker | null =
            pipelineDeps && ctx.config.JOBS_WORKERS ? await startJobWorker(pipelineDeps) : null;
          const tradeWatcher = await startProcessTradeWatcher(ctx, stores);
          const demoPair = new AbortController();
          if (exchangeDouble && tradeWatcher && stores.pg) {
            const { watchDevnetExchangePair } = await import("../../devnet/register.ts");
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
            await tradeWatcher?.stop();
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
}
