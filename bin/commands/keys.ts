/** `keys`: manage API keys from the shell. */
import { type Command, InvalidArgumentError, Option } from "commander";
import { context, openPreparedStores } from "./shared.ts";

export function installKeysCommand(program: Command): void {
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
      const stores = await openPreparedStores(ctx, "keys create");
      try {
        const { createKeysRepo } = await import("../../lib/keys/repo.ts");
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
}
