/**
 * A worker process runs several test files one after the other (vitest.config.ts: `isolate: false`). chDB allows
 * one open data directory per process, so a file that left its store open would make every later file of the
 * worker fail to open its own: after the file's own last hooks (a setup file's hooks are registered first, and
 * `afterAll` hooks run in reverse order), any chDB directory still open is closed and the file that left it fails,
 * named.
 */
import { afterAll } from "vitest";
import { closeOpenChdbDirectories } from "../../lib/stores/clickhouse.ts";

afterAll(() => {
  const left = closeOpenChdbDirectories();
  if (left.length > 0)
    throw new Error(`this file left chDB open (close its stores in its last hook): ${left.join(", ")}`);
});
