/**
 * The embedded chDB's connection pool (lib/stores/clickhouse.ts): a chDB connection runs one statement at a time,
 * so a data directory gets CHDB_CONNECTIONS of them. Checked on chDB itself, without timing anything: a statement
 * sees another one running (in system.processes) only if the two run side by side; with one connection it never
 * does. Every connection has the session setting the inserts rely on; instances on one directory share the pool,
 * and closing one leaves the others working. Skipped on a ClickHouse server (TEST_CLICKHOUSE_URL), which has no pool.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type Ch, createClickHouse } from "../../lib/stores/clickhouse.ts";
import { quietLog, suffix } from "../helpers/stores.ts";

const server = Boolean(process.env.TEST_CLICKHOUSE_URL);
if (server)
  console.warn("[skip notice] chDB pool: TEST_CLICKHOUSE_URL is set (a server has no embedded pool)");

// One data directory for the whole file: chDB takes one per process.
const dataDir = mkdtempSync(join(tmpdir(), "chdb-pool-"));
const open = (connections?: number) =>
  createClickHouse({
    url: "",
    dataDir,
    connections,
    database: `pool_${suffix()}`,
    user: "",
    password: "",
    log: quietLog,
  });

/**
 * A statement that runs ~1.5 s (tagged so another can find it), and whether a statement sent meanwhile sees it in
 * system.processes: probes are sent until one does or the slow statement has ended (no timing assumed).
 */
async function sideBySide(ch: Ch, tag: string): Promise<boolean> {
  let done = false;
  const slow = ch
    .query("slow", `SELECT sleepEachRow(0.5), '${tag}' FROM numbers(3) SETTINGS max_block_size = 1`)
    .finally(() => {
      done = true;
    });
  let seen = false;
  while (!done && !seen) {
    const [probe] = await ch.query<{ n: string }>(
      "probe",
      `SELECT count() AS n FROM system.processes
       WHERE query LIKE '%sleepEachRow%${tag}%' AND query NOT LIKE '%system.processes%'`,
    );
    seen = Number(probe?.n) > 0;
  }
  await slow;
  return seen;
}

describe.skipIf(server)("chDB connection pool", () => {
  const opened: Ch[] = [];
  afterAll(async () => {
    for (const ch of opened) await ch.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("one connection: a statement waits for the one before it (the probe never sees it running)", async () => {
    const ch = await open(1);
    expect(await sideBySide(ch, "one")).toBe(false);
    await ch.close();
  });

  it("a pool: a statement runs while another is in flight, and instances on the directory share it", async () => {
    const a = await open(3);
    opened.push(a);
    expect(await sideBySide(a, "pool")).toBe(true);
    // A second instance on the directory uses the same connections (its own size is not taken).
    const b = await open(1);
    expect(await sideBySide(b, "shared")).toBe(true);
    await b.close();
    // Closing one instance leaves the pool to the other.
    const [one] = await a.query<{ x: number }>("after_close", "SELECT 1 AS x");
    expect(one?.x).toBe(1);
  });

  it("every connection has date_time_input_format = best_effort (inserts of ISO text land on any of them)", async () => {
    const ch = opened[0]!;
    const settings = await Promise.all(
      Array.from({ length: 6 }, () =>
        ch.query<{ value: string }>(
          "setting",
          "SELECT value FROM system.settings WHERE name = 'date_time_input_format'",
        ),
      ),
    );
    expect(settings.map((s) => s[0]?.value)).toEqual(Array(6).fill("best_effort"));
    await ch.command("t", "CREATE TABLE t (at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY at");
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        ch.insert("t_insert", "t", [{ at: `2026-11-26T10:0${i}:00.000Z` }]),
      ),
    );
    const [count] = await ch.query<{ n: string }>("t_count", "SELECT count() AS n FROM t");
    expect(Number(count?.n)).toBe(6);
  });
});
