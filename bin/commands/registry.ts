/** `registry`: the token registry (seed). */
import type { Command } from "commander";
import { context, openPreparedStores } from "./shared.ts";

export function installRegistryCommand(program: Command): void {
  const registry = program.command("registry").description("Token registry");
  registry
    .command("seed")
    .description(
      "Seed tokens, bridged rows, dapps and categories from @alephium/token-list (idempotent; keeps admin edits)",
    )
    .action(async () => {
      const ctx = context();
      const { seedRegistry } = await import("../../lib/tokens/seed.ts");
      const stores = await openPreparedStores(ctx, "registry seed");
      try {
        if (!stores.pg) throw new Error("registry seed needs the database (DATABASES=on)");
        const report = await seedRegistry({ pg: stores.pg, log: ctx.log });
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      } finally {
        await stores.close();
      }
    });
}
