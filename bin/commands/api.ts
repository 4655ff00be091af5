/** `api`: serve the HTTP API. */
import type { Command } from "commander";
import { createApiDeps } from "../../api/deps.ts";
import { startServer } from "../../api/server.ts";
import { ensureAdminKey } from "../../lib/admin-key.ts";
import { prepareStores } from "../../lib/migrate.ts";
import { runProcess } from "../../lib/run-process.ts";
import { openStores } from "../../lib/stores/index.ts";
import { context } from "./shared.ts";

export function installApiCommand(program: Command): void {
  program
    .command("api")
    .description("Serve the HTTP API (applies pending migrations first)")
    .action(async () => {
      const ctx = context();
      await runProcess("api", ctx.log, async () => {
        const stores = await openStores(ctx.config, ctx.log, { command: "api" });
        await prepareStores(stores, ctx.log);
        if (stores.pg) await ensureAdminKey(stores.pg, ctx.config, ctx.log);
        const server = await startServer(createApiDeps(ctx.config, stores, ctx.log, ctx.metrics));
        return async () => {
          await server.close();
          await stores.close();
        };
      });
    });
}
