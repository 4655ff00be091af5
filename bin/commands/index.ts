/**
 * The command line: one module per top-level command (`bin/commands/<name>.ts`), each installing its command
 * on the program; `buildCli` installs them in the order `--help` lists them.
 */
import { Command } from "commander";
import { installApiCommand } from "./api.ts";
import { installBotCommands } from "./bot.ts";
import { installConfigCommand } from "./config.ts";
import { installDevnetCommand } from "./devnet.ts";
import { installExchangeWalletsCommand } from "./exchange-wallets.ts";
import { installFiguresCommand } from "./figures.ts";
import { installIngestCommand } from "./ingest.ts";
import { installKeysCommand } from "./keys.ts";
import { installMigrateCommand } from "./migrate.ts";
import { installPricesCommand } from "./prices.ts";
import { installProcessCommand } from "./process.ts";
import { installRegistryCommand } from "./registry.ts";
import { installReprocessCommand } from "./reprocess.ts";
import { installSeriesCommand } from "./series.ts";
import { installStartCommand } from "./start.ts";
import { installTradeFeedPauseCommand } from "./trade-feed-pause.ts";
import { installTradeWatcherCommand } from "./trade-watcher.ts";

export { context, type ProcessContext, positiveInt } from "./shared.ts";

export function buildCli(): Command {
  const program = new Command()
    .name("alephium-indexer")
    .description(
      "Alephium indexer and normalized-events API.\nConfiguration comes from environment variables; `config` lists them all.",
    )
    .showHelpAfterError();

  installApiCommand(program);
  installMigrateCommand(program);
  installKeysCommand(program);
  installRegistryCommand(program);
  installPricesCommand(program);
  installFiguresCommand(program);
  installSeriesCommand(program);
  installExchangeWalletsCommand(program);
  installTradeFeedPauseCommand(program);
  installTradeWatcherCommand(program);
  installConfigCommand(program);
  installBotCommands(program);
  installStartCommand(program);
  installIngestCommand(program);
  installProcessCommand(program);
  installReprocessCommand(program);
  installDevnetCommand(program);
  return program;
}
