/** `devnet`: serve a simulated Alephium network. */
import type { Command } from "commander";
import { DEVNET_RUN_DEFAULTS, type DevnetRunOptions } from "../../devnet/run-options.ts";
import { runProcess } from "../../lib/run-process.ts";
import { context, positiveInt } from "./shared.ts";

export function installDevnetCommand(program: Command): void {
  program
    .command("devnet")
    .description("Serve a simulated Alephium network (test double of the full node and explorer backend)")
    .option("--port <port>", "port", positiveInt("--port"), DEVNET_RUN_DEFAULTS.port)
    .option("--host <host>", "interface", DEVNET_RUN_DEFAULTS.host)
    .option(
      "--seed <n>",
      "seed: the same seed makes the same chain",
      positiveInt("--seed"),
      DEVNET_RUN_DEFAULTS.seed,
    )
    .option("--blocks <n>", "blocks made ahead", positiveInt("--blocks"), DEVNET_RUN_DEFAULTS.blocks)
    .option(
      "--live <rate>",
      "blocks per second afterwards (0 = none)",
      positiveInt("--live"),
      DEVNET_RUN_DEFAULTS.live,
    )
    .option(
      "--reorg-every <n>",
      "reorg a random chain every n blocks (0 = never)",
      positiveInt("--reorg-every"),
      0,
    )
    .option(
      "--state <file>",
      "state file: a restart continues the chain it describes (written at the first start)",
    )
    .action(
      async (
        opts: Pick<DevnetRunOptions, "port" | "host" | "seed" | "blocks" | "live" | "reorgEvery"> & {
          state?: string;
        },
      ) => {
        const ctx = context();
        await runProcess("devnet", ctx.log, async () => {
          const { state, ...rest } = opts;
          const { runDevnet } = await import("../../devnet/main.ts");
          const devnet = await runDevnet({ ...rest, ...(state ? { statePath: state } : {}) }, (line) =>
            process.stdout.write(`${line}\n`),
          );
          return () => devnet.close();
        });
      },
    );
}
