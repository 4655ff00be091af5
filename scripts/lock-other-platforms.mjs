#!/usr/bin/env node
/**
 * Adds lockfile entries for the platform binaries a registry mirror does not serve (biome's and
 * chdb's packages for other systems). npm writes only what it could fetch, then `npm ci` refuses the
 * lockfile ("Missing: @biomejs/cli-darwin-arm64@ from lock file"). Each added entry carries the
 * version its parent pins and the `os`/`cpu`/`libc` its name states, so npm skips it on other
 * platforms and fetches it from the public registry on its own. Run after `npm install` changes
 * the lockfile; it changes nothing when every entry is there.
 */
import { readFileSync, writeFileSync } from "node:fs";

const path = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(path, "utf8"));
const OS = { darwin: "darwin", linux: "linux", win32: "win32", android: "android" };
const CPU = { x64: "x64", arm64: "arm64" };

function platformOf(name) {
  const parts = name.split("/").pop().split("-");
  const os = parts.find((p) => p in OS);
  const cpu = parts.find((p) => p in CPU);
  if (!os || !cpu) return null;
  const libc = parts.includes("musl") ? "musl" : parts.includes("gnu") && os === "linux" ? "glibc" : null;
  return { os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
}

let added = 0;
for (const [key, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const at = `${key ? `${key}/` : ""}node_modules/${dep}`;
    const top = `node_modules/${dep}`;
    if (lock.packages[at] || lock.packages[top]) continue;
    const platform = platformOf(dep);
    if (!platform) throw new Error(`${dep} (optional dependency of ${key}) is missing and names no platform`);
    lock.packages[top] = { version, optional: true, ...platform };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
process.stderr.write(`lockfile: ${added} platform entries added\n`);
