/** `migrate`: apply pending migrations and exit. */
import type { Command } from "commander";
import { context, openPreparedStores } from "./shared.ts";

export function installMigrateCommand(program: Command): void {
  program
    .command("migrate")
    .description("Apply pending PostgreSQL and ClickHouse migrations, then exit")
    .action(async () => {
      const ctx = context();
      const stores = await openPreparedStores(ctx, "migrate");
      await stores.close();
      ctx.log.info("Migrations are up to date.");
    });
}
