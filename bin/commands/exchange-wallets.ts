/** `exchange-wallets`: exchange wallets (backdate). */
import { type Command, InvalidArgumentError } from "commander";
import { context, openPreparedStores, positiveInt } from "./shared.ts";

export function installExchangeWalletsCommand(program: Command): void {
  const wallets = program
    .command("exchange-wallets")
    .description("Exchange wallets (cex deposit / withdraw events); add and remove them through the API");
  wallets
    .command("backdate")
    .description(
      "Move active exchange wallets' start back in block time (default 0: all history); prints the changed wallets as JSON, then run `reprocess` over the range to re-normalize it",
    )
    .option("--address <address>", "one wallet")
    .option("--exchange <id>", "every wallet of one exchange")
    .option("--from <ms>", "block time from which they apply (Unix ms)", positiveInt("--from"), 0)
    .action(async (opts: { address?: string; exchange?: string; from: number }) => {
      if (!opts.address && !opts.exchange) {
        throw new InvalidArgumentError("give --address or --exchange (the wallets to backdate)");
      }
      const ctx = context();
      const { createExchangeWalletsRepo, validateWalletAddress } = await import(
        "../../lib/labels/exchange-wallets.ts"
      );
      const stores = await openPreparedStores(ctx, "exchange-wallets");
      try {
        if (!stores.pg) throw new Error("exchange-wallets needs the databases (DATABASES=on)");
        if (opts.address) validateWalletAddress(opts.address);
        const changed = await createExchangeWalletsRepo(stores.pg).backdate(
          { address: opts.address, exchange_id: opts.exchange },
          opts.from,
        );
        process.stdout.write(`${JSON.stringify({ backdated: changed, from: opts.from })}\n`);
        if (changed.length > 0) {
          const to = Math.max(...changed.map((w) => w.updated_at));
          ctx.log.info(
            { wallets: changed.length },
            `Now re-normalize the range: npm run cli -- reprocess --from ${opts.from} --to ${to}`,
          );
        } else {
          ctx.log.warn("No active wallet matched (or each already applies from that time).");
        }
      } finally {
        await stores.close();
      }
    });
}
