/**
 * The layout's one-way dependencies (docs/architecture.md): `lib/` is shared by every process and imports none of
 * the parts built on it (`pipeline/`, `api/`, `bin/`, `devnet/`); `pipeline/` does not import the API or the CLI.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

/** The top-level folders a file's relative imports reach. */
function importedFolders(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = relative(root, resolve(file, "..", m[1] as string));
    out.push(target.split("/")[0] as string);
  }
  return out;
}

const forbidden: Record<string, string[]> = {
  lib: ["pipeline", "api", "bin", "devnet"],
  pipeline: ["api", "bin"],
};

describe("layout", () => {
  for (const [dir, banned] of Object.entries(forbidden))
    it(`${dir}/ imports nothing from ${banned.join(", ")}`, () => {
      const files = sources(dir);
      expect(files.length).toBeGreaterThan(10);
      const offending = files.flatMap((f) =>
        importedFolders(f)
          .filter((folder) => banned.includes(folder))
          .map((folder) => `${relative(root, f)} → ${folder}/`),
      );
      expect(offending).toEqual([]);
    });
});
