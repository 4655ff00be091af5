/**
 * Generates `src/schema.ts`, the types of the typed client, from the API's own OpenAPI document: the
 * app is built without databases (as `npm run lint:openapi` does), its document read in process (no
 * network, no server), and openapi-typescript turns it into `paths`, `components` and `operations`.
 *
 *   npm run client:generate   writes src/schema.ts
 *   npm run client:check      regenerates and fails (exit 1) when the result differs from the committed
 *                             src/schema.ts, naming the command to run and leaving the fresh file in a
 *                             temporary directory (CI)
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";
import { type BuildOptions, buildApp } from "../../../api/app.ts";
import { createApiDeps } from "../../../api/deps.ts";
import { loadConfig } from "../../../lib/config.ts";
import { createLogger } from "../../../lib/logger.ts";

/** The committed types file. */
export const SCHEMA_FILE = join(dirname(fileURLToPath(import.meta.url)), "..", "src", "schema.ts");

const HEADER = `${COMMENT_HEADER.trimEnd()}
/* Generated from the API's OpenAPI document by \`npm run client:generate\` (clients/typescript/scripts/generate.ts). */

`;

/** The OpenAPI document of the app as built (extra route groups: tests of the stale check). */
export async function openApiDocument(options: BuildOptions = {}): Promise<Record<string, unknown>> {
  const config = loadConfig({ DATABASES: "off", LOG_LEVEL: "silent" });
  const app = await buildApp(
    createApiDeps(config, { pg: null, ch: null }, createLogger({ level: "silent" })),
    options,
  );
  try {
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
  }
}

/** The text of `src/schema.ts` for the app as built. */
export async function generateSchema(options: BuildOptions = {}): Promise<string> {
  const doc = await openApiDocument(options);
  const ast = await openapiTS(doc as never, {
    silent: true,
    alphabetize: true,
    // A parameter or body field with a default may be left out: only what the document requires is required.
    defaultNonNullable: false,
  });
  return `${HEADER}${astToString(ast)}`;
}

/** Null when `generated` equals the committed file, else the first differing line (1-based) and both texts. */
export function staleness(
  generated: string,
  committed: string | null,
): { line: number; expected: string; found: string } | null {
  if (committed === generated) return null;
  const a = generated.split("\n");
  const b = (committed ?? "").split("\n");
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return {
    line: i + 1,
    expected: a[i] ?? "<end of file>",
    found: committed === null ? "<no file>" : (b[i] ?? "<end of file>"),
  };
}

async function main(args: string[]) {
  const generated = await generateSchema();
  const shown = relative(process.cwd(), SCHEMA_FILE);
  if (!args.includes("--check")) {
    writeFileSync(SCHEMA_FILE, generated);
    process.stdout.write(`${shown} written (${generated.split("\n").length} lines).\n`);
    return;
  }
  let committed: string | null = null;
  try {
    committed = readFileSync(SCHEMA_FILE, "utf8");
  } catch {
    committed = null;
  }
  const diff = staleness(generated, committed);
  if (!diff) {
    process.stdout.write(`${shown} is current with the API's OpenAPI document.\n`);
    return;
  }
  // The fresh file is left for a look (a diff with the committed one); only when stale.
  const fresh = join(mkdtempSync(join(tmpdir(), "client-schema-")), "schema.ts");
  writeFileSync(fresh, generated);
  process.stderr.write(
    [
      `${shown} is stale: it does not match the API's OpenAPI document (a route schema changed).`,
      `First difference at line ${diff.line}:`,
      `  committed: ${diff.found}`,
      `  generated: ${diff.expected}`,
      `Freshly generated file: ${fresh}`,
      "Run `npm run client:generate` and commit clients/typescript/src/schema.ts.",
      "",
    ].join("\n"),
  );
  process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv.slice(2));
}
