/**
 * Builds the admin portal's pages (portal/ → portal/dist) with Vite when its sources changed since the
 * last build: `npm run portal:build` (run by `npm run demo`, and by the portal's tests). The sources'
 * hash is kept in portal/dist/.source-hash, so an unchanged tree is not rebuilt. `--force` rebuilds.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../portal/", import.meta.url));
const DIST = join(ROOT, "dist");
const HASH_FILE = join(DIST, ".source-hash");

function files(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    })
    .sort();
}

/** Hash of everything the build reads: the portal's sources and the charting library's version. */
export function portalSourceHash(): string {
  const hash = createHash("sha256");
  const inputs = [
    join(ROOT, "index.html"),
    join(ROOT, "vite.config.ts"),
    ...files(join(ROOT, "src")),
    ...files(join(ROOT, "public")),
  ];
  for (const file of inputs) hash.update(file.slice(ROOT.length)).update(readFileSync(file));
  const charts = fileURLToPath(new URL("../node_modules/lightweight-charts/package.json", import.meta.url));
  if (existsSync(charts)) hash.update(readFileSync(charts));
  return hash.digest("hex");
}

const LOCK = join(ROOT, ".build-lock");

/** One build at a time (test files run in parallel): an exclusive lock file, waited for by polling. */
async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      closeSync(openSync(LOCK, "wx"));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // A lock older than two minutes was left by a killed build.
      const held = statSync(LOCK, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 120_000) rmSync(LOCK, { force: true });
      if (Date.now() > deadline) throw new Error(`portal build lock ${LOCK} held for two minutes`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

type BuildOptions = { force?: boolean; log?: (line: string) => void };

/** Builds portal/dist unless it is current; true when it built. */
export async function buildPortal(options: BuildOptions = {}): Promise<boolean> {
  return withLock(() => buildUnlocked(options));
}

async function buildUnlocked(options: BuildOptions): Promise<boolean> {
  const wanted = portalSourceHash();
  const current = existsSync(HASH_FILE) ? readFileSync(HASH_FILE, "utf8").trim() : "";
  if (!options.force && current === wanted && existsSync(join(DIST, "index.html"))) return false;
  const started = Date.now();
  options.log?.("Building the admin portal's pages (Vite) …");
  // Imported here: Vite is needed only when a build runs.
  const { build } = await import("vite");
  await build({ configFile: join(ROOT, "vite.config.ts"), logLevel: "warn" });
  writeFileSync(HASH_FILE, `${wanted}\n`);
  options.log?.(`Admin portal built into portal/dist in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  return true;
}

// Run as a script (not imported). Real paths: through a symlinked checkout (the quick-start test's copy of the
// project) the script's path in argv is the link's, its module URL the file's.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  if (process.argv.includes("--help")) {
    process.stdout.write(
      "Usage: npm run portal:build [-- --force]\nBuilds the admin portal's pages into portal/dist when its sources changed.\n",
    );
  } else {
    const built = await buildPortal({
      force: process.argv.includes("--force"),
      log: (l) => process.stdout.write(`${l}\n`),
    });
    if (!built) process.stdout.write("Admin portal pages are up to date (portal/dist).\n");
  }
}
