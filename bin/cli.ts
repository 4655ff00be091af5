#!/usr/bin/env node
/**
 * The one command line of the project. Every process (API, ingest, each processor, the simulated
 * network) starts from here with the same configuration (environment variables; see `config`).
 */
import { type Command, InvalidArgumentError } from "commander";
import { buildCli } from "./commands/index.ts";

const program: Command = buildCli();
program.parseAsync(process.argv).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`error: ${message}\n`);
  process.exit(error instanceof InvalidArgumentError ? 2 : 1);
});
