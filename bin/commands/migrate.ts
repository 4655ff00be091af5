/** `migrate`: apply pending migrations and exit. */
import type { Command } from "commander";
import { prepareStores } from "../../lib/migrate.ts";
import { openStores } from "../../lib/stores/index.ts";
import { context } from "./shared.ts";

export function installMigrateCommand(program: Command): void {
  program
    .command("migrate")
    .description("Apply pending PostgreSQL and ClickHouse migrations, then exit")
    .action(async () => {
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { command: "migrate" });
      await prepareStores(stores, ctx.log);
      await stores.close();
      ctx.log.info("Migrations are up to date.");
    });
}
