/**
 * Writes the configuration page and `.env.example` from the config schema:
 *   npm run docs:config   rewrites docs/configuration.md and .env.example
 *   npm run docs:check    fails (exit 1, naming `npm run docs:config`) while either differs from the schema; run by CI
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIG_PAGE, ENV_EXAMPLE, renderConfigurationPage, renderEnvExample } from "./config-page.ts";

const root = fileURLToPath(new URL("../", import.meta.url));
const files = [
  [CONFIG_PAGE, renderConfigurationPage()],
  [ENV_EXAMPLE, renderEnvExample()],
] as const;

const read = (path: string): string | null => {
  try {
    return readFileSync(join(root, path), "utf8");
  } catch {
    return null;
  }
};

if (process.argv.includes("--check")) {
  const stale = files.filter(([path, text]) => read(path) !== text).map(([path]) => path);
  if (stale.length > 0) {
    for (const path of stale) {
      process.stderr.write(
        `${path} is stale: it does not match the config schema (lib/config.ts). Run \`npm run docs:config\` and commit the result.\n`,
      );
    }
    process.exitCode = 1;
  } else process.stdout.write(`${files.map(([path]) => path).join(" and ")} match lib/config.ts.\n`);
} else {
  for (const [path, text] of files) {
    writeFileSync(join(root, path), text);
    process.stdout.write(`wrote ${path}\n`);
  }
}
