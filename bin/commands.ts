/** Subcommands of the CLI; each loads the validated config, builds its deps and runs. */
import { Command, InvalidArgumentError, Option } from "commander";
import { createEventsRepo } from "../api/routes/events/repo.ts";
import { startServer } from "../api/server.ts";
import type { ApiDeps } from "../api/types.ts";
import { type Config, describeConfig, loadConfig } from "../lib/config.ts";
import { ConfigError } from "../lib/errors.ts";
import { createLogger, type Logger } from "../lib/logger.ts";
import { createMetrics, type Metrics } from "../lib/metrics.ts";
import { createKeysRepo } from "../lib/repos/keys.ts";
import { runProcess } from "../lib/run-process.ts";
import { openStores, type Stores } from "../lib/stores/index.ts";

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

export function apiDeps(ctx: ProcessContext, stores: Stores): ApiDeps {
  return {
    config: ctx.config,
    log: ctx.log,
    metrics: ctx.metrics,
    pg: stores.pg,
    ch: stores.ch,
    keys: stores.pg ? createKeysRepo(stores.pg) : null,
    events:
      stores.pg && stores.ch
        ? createEventsRepo({ ch: stores.ch, pg: stores.pg, hydration: ctx.config.PAYLOAD_HYDRATION })
        : null,
  };
}

const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new InvalidArgumentError(`${name} must be a whole number, got ${value}`);
  return n;
};

/** Hooks later features add their subcommands through (pipeline processes, devnet, registry). */
export type CommandInstaller = (program: Command) => void;
export const COMMAND_INSTALLERS: CommandInstaller[] = [];

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
        const stores = await openStores(ctx.config, ctx.log, { migrate: true });
        const server = await startServer(apiDeps(ctx, stores));
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
      const stores = await openStores(ctx.config, ctx.log, { migrate: true });
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
    .action(async (opts: { user: string; plan: string; level: "user" | "admin" }) => {
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { migrate: true });
      try {
        if (!stores.pg) throw new Error("keys create needs the database (DATABASES=on)");
        const created = await createKeysRepo(stores.pg).createKey({
          userId: opts.user,
          planId: opts.plan,
          level: opts.level,
        });
        process.stdout.write(
          `${JSON.stringify({ ...created, user_id: opts.user, plan_id: opts.plan, level: opts.level }, null, 2)}\n`,
        );
        process.stderr.write("Store the key now: it is not shown again and only its hash is kept.\n");
      } finally {
        await stores.close();
      }
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

  for (const install of COMMAND_INSTALLERS) install(program);
  return program;
}

export { positiveInt };
