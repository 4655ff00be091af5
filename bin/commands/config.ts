/** `config`: print every configuration key with its default. */
import { type Command, Option } from "commander";
import { describeConfig } from "../../lib/config.ts";

export function installConfigCommand(program: Command): void {
  program
    .command("config")
    .description("Print every configuration key with its default")
    .addOption(
      new Option("--format <format>", "output format").choices(["markdown", "env"]).default("markdown"),
    )
    .action((opts: { format: "markdown" | "env" }) => {
      process.stdout.write(describeConfig(opts.format));
    });
}
