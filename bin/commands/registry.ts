/** `registry`: the token registry (seed). */
import type { Command } from "commander";
import { prepareStores } from "../../lib/migrate.ts";
import { openStores } from "../../lib/stores/index.ts";
import { seedRegistry } from "../../lib/tokens/seed.ts";
import { context } from "./shared.ts";

export function installRegistryCommand(program: Command): void {
  const registry = program.command("registry").description("Token registry");
  registry
    .command("seed")
    .description(
      "Seed tokens, bridged rows, dapps and categories from @alephium/token-list (idempotent; keeps admin edits)",
    )
    .action(async () => {
      const ctx = context();
      const stores = await openStores(ctx.config, ctx.log, { command: "registry seed" });
      await prepareStores(stores, ctx.log);
      try {
        if (!stores.pg) throw new Error("registry seed needs the database (DATABASES=on)");
        const report = await seedRegistry({ pg: stores.pg, log: ctx.log });
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } finally {
        await stores.close();
      }
    });
}
