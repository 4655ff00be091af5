/** `api`: serve the HTTP API. */
import type { Command } from "commander";
import { runProcess } from "../../lib/run-process.ts";
import { context, openPreparedStores } from "./shared.ts";

export function installApiCommand(program: Command): void {
  program
    .command("api")
    .description("Serve the HTTP API (applies pending migrations first)")
    .action(async () => {
      const ctx = context();
      await runProcess("api", ctx.log, async () => {
        const [{ createApiDeps }, { startServer }, { ensureAdminKey }] = await Promise.all([
          import("../../api/deps.ts"),
          import("../../api/server.ts"),
          import("../../lib/admin-key.ts"),
        ]);
        const stores = await openPreparedStores(ctx, "api");
        if (stores.pg) await ensureAdminKey(stores.pg, ctx.config, ctx.log);
        const server = await startServer(createApiDeps(ctx.config, stores, ctx.log, ctx.metrics));
        return async () => {
          await server.close();
          await stores.close();
        };
      });
    });
}
