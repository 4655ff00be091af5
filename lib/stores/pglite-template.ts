/**
 * PGlite's first start on an empty data directory runs initdb: synchronous WebAssembly on the main thread, 2 s on an
 * idle 2-core machine and 8–23 s on a busy one, before anything else of the process can run. The cluster initdb makes
 * is the same for every data directory of one PGlite version, so it is made once and kept in the install's cache
 * (`node_modules/.cache/alephium-indexer/`, gone with `node_modules`), and a new data directory starts as a copy of
 * it (about 0.1–0.3 s). Where the cache cannot be written, PGlite runs initdb itself as before.
 *
 * The template is made in a directory of its own and renamed into place, so processes starting together (test
 * files, two commands) never see half of one; a copy is taken only of a template that PGlite shut down cleanly.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { tempNameBeside } from "./temp-name.ts";

/** The version of the PGlite package in use (a template belongs to one version). */
export function pgliteVersion(): string {
  let dir = dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"));
  while (!existsSync(join(dir, "package.json")) && dirname(dir) !== dir) dir = dirname(dir);
  return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
}

/** Where the templates live: the project's `node_modules/.cache`, or the system's temporary directory without one. */
export function templateCacheDir(): string {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  const modules = join(root, "node_modules");
  return existsSync(modules)
    ? join(modules, ".cache", "alephium-indexer")
    : join(tmpdir(), "alephium-indexer-cache");
}

/** True when `dir` holds nothing (or does not exist): a data directory PGlite would run initdb in. */
export function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

/**
 * Runs `make(tmp)` in a fresh directory beside `target`, then renames it to `target`; when another process got there
 * first, its template is kept and this one removed. Returns false when the cache cannot be written.
 */
export async function buildOnce(target: string, make: (dir: string) => Promise<void>): Promise<boolean> {
  if (existsSync(target)) return true;
  // Unique per call, not only per process and millisecond: two builds in one process share neither directory.
  const tmp = tempNameBeside(target, "tmp");
  try {
    mkdirSync(tmp, { recursive: true });
    await make(tmp);
    try {
      renameSync(tmp, target);
    } catch (error) {
      // Another process renamed its own template into place first: use that one.
      if (!existsSync(target)) throw error;
    }
    return true;
  } catch {
    return false;
  } finally {
    removeQuietly(tmp);
  }
}

function removeQuietly(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // Under a path that is not a directory: there is nothing to remove.
  }
}

/** Where this PGlite version's template is kept (its cluster in `data/` under it). */
export function templateDir(): string {
  return join(templateCacheDir(), `pglite-${pgliteVersion()}`);
}

/** The initdb'd cluster of this PGlite version, made on first use; null when it cannot be cached. */
export async function pgliteTemplate(): Promise<string | null> {
  const target = templateDir();
  const ok = await buildOnce(target, async (dir) => {
    const data = join(dir, "data");
    const db = new PGlite(data);
    await db.waitReady;
    await db.close();
  });
  // A template someone emptied or cut short is not copied: PGlite then runs initdb itself.
  const data = join(target, "data");
  return ok && existsSync(join(data, "PG_VERSION")) ? data : null;
}

/**
 * Starts an empty data directory as a copy of the template (making the template first if this machine has none).
 * Returns whether it did; a directory that already holds anything is left alone.
 */
export async function seedDataDir(dataDir: string): Promise<boolean> {
  if (!isEmptyDir(dataDir)) return false;
  const template = await pgliteTemplate();
  if (!template) return false;
  // Copied beside it, then renamed over the empty directory: a start killed mid-copy leaves no half cluster.
  const tmp = tempNameBeside(dataDir, "seeding");
  try {
    cpSync(template, tmp, { recursive: true });
    renameSync(tmp, dataDir);
    return true;
  } catch {
    return false;
  } finally {
    removeQuietly(tmp);
  }
}
