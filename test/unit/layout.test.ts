/**
 * The layout's one-way dependencies (docs/architecture.md): `lib/` is shared by every process and imports none of
 * the parts built on it (`pipeline/`, `api/`, `bin/`, `devnet/`); `pipeline/` does not import the API or the CLI;
 * the API imports neither the pipeline, the CLI nor the simulated network. And no file imports itself back through
 * others (an import cycle), type-only imports included: madge's rule (`madge --circular`), found here from the
 * same import statements because madge's TypeScript parser does not run beside the project's TypeScript 7.
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

/** The files a file's relative imports (static, dynamic and re-exports) reach, relative to the root. */
function importedFiles(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g))
    out.push(relative(root, resolve(file, "..", m[1] as string)));
  return out;
}

/**
 * What a module's start loads: the files and packages its static value imports reach, transitively (`import type`
 * and dynamic `import()` left out: the first is erased, the second loads when it runs).
 */
function staticallyLoaded(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(
      /^(?:import|export)\s+(?!type\s)[^;]*?\sfrom\s*["']([^"']+)["']|^import\s+["']([^"']+)["']/gms,
    )) {
      const spec = (m[1] ?? m[2]) as string;
      if (spec.startsWith(".")) visit(resolve(file, "..", spec));
      else packages.add(spec);
    }
  };
  visit(join(root, entry));
  return { files: [...files].map((f) => relative(root, f)), packages: [...packages].sort() };
}

/** The top-level folders a file's relative imports reach. */
const importedFolders = (file: string): string[] => importedFiles(file).map((t) => t.split("/")[0] as string);

const forbidden: Record<string, string[]> = {
  lib: ["pipeline", "api", "bin", "devnet"],
  pipeline: ["api", "bin"],
  api: ["pipeline", "bin", "devnet"],
};

/** Every import cycle among `files` (relative paths), each once, as the path around it. */
function importCycles(files: string[], importsOf: (file: string) => string[]): string[][] {
  const known = new Set(files);
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (f: string) => {
    state.set(f, "open");
    stack.push(f);
    for (const t of importsOf(f)) {
      if (!known.has(t)) continue;
      if (state.get(t) === "open") cycles.push([...stack.slice(stack.indexOf(t)), t]);
      else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of files) if (!state.has(f)) visit(f);
  return cycles;
}

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

  it("has no import cycle in the sources", () => {
    const files = ["api", "lib", "pipeline", "bin", "devnet", "scripts", "bench"].flatMap((d) =>
      sources(d).map((f) => relative(root, f)),
    );
    expect(files.length).toBeGreaterThan(200);
    const cycles = importCycles(files, (f) => importedFiles(join(root, f)));
    expect(cycles.map((c) => c.join(" → "))).toEqual([]);
  });

  it("starts the CLI without its commands' dependencies (each command loads them when it runs)", () => {
    // `--help`, option parsing and every command's start load the command line alone: the stores, the pipeline, the
    // API and their packages (ccxt, grammy, pg-boss, @alephium/web3, chDB, PGlite …) cost 3 s of CPU per process.
    const loaded = staticallyLoaded("bin/cli.ts");
    expect(loaded.files).toContain("bin/commands/start.ts");
    expect(loaded.packages.filter((p) => !p.startsWith("node:"))).toEqual([
      "commander",
      "pino",
      "prom-client",
    ]);
    const heavy = loaded.files.filter((f) =>
      /^(api|pipeline\/(?!processor-names)|lib\/stores)\b|devnet\/main/.test(f),
    );
    expect(heavy).toEqual([]);
  });

  it("finds a cycle, type-only imports included", () => {
    const graph: Record<string, string[]> = { a: ["b"], b: ["c"], c: ["a"], d: ["a"], e: ["e"] };
    expect(importCycles(Object.keys(graph), (f) => graph[f] ?? [])).toEqual([
      ["a", "b", "c", "a"],
      ["e", "e"],
    ]);
  });
});
