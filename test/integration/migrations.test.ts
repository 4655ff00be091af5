import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateClickHouse, migratePostgres, readMigrations } from "../../lib/migrate.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

describe("migrations", () => {
  let pg: TestPg;
  let ch: TestCh;
  beforeAll(async () => {
    pg = await openTestPg({ migrate: false });
    ch = await openTestCh({ migrate: false });
  });
  afterAll(async () => {
    await pg?.close();
    await ch?.close();
  });

  it(`apply on ${process.env.TEST_POSTGRES_URL ? "PostgreSQL" : "PGlite"} from empty, then re-run as a no-op`, async () => {
    const all = readMigrations("postgres");
    expect(await migratePostgres(pg.pg, quietLog)).toBe(all.length);
    expect(await migratePostgres(pg.pg, quietLog)).toBe(0);
    const versions = await pg.pg.query<{ version: number }>(
      "t",
      "SELECT version FROM schema_migrations ORDER BY version",
    );
    expect(versions.map((v) => v.version)).toEqual(all.map((m) => m.version));
    const plans = await pg.pg.query<{ plan_id: string }>(
      "t",
      "SELECT plan_id FROM api_plans ORDER BY plan_id",
    );
    expect(plans.map((p) => p.plan_id)).toEqual(expect.arrayContaining(["enterprise", "free", "pro"]));
  });

  it("apply on chDB from empty, then re-run as a no-op", async () => {
    const all = readMigrations("clickhouse");
    expect(await migrateClickHouse(ch.ch, quietLog)).toBe(all.length);
    expect(await migrateClickHouse(ch.ch, quietLog)).toBe(0);
    const tables = await ch.ch.query<{ name: string }>(
      "t",
      "SELECT name FROM system.tables WHERE database = currentDatabase()",
    );
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["events", "schema_migrations"]));
  });

  it("refuses an applied migration whose file changed", async () => {
    const changed = readMigrations("postgres").map((m, i) => (i === 0 ? { ...m, checksum: "edited" } : m));
    await expect(migratePostgres(pg.pg, quietLog, changed)).rejects.toThrow(
      /was changed after it was applied/,
    );
  });

  it("fails loudly naming the file when a statement fails", async () => {
    const broken = [...readMigrations("clickhouse")];
    broken.push({
      version: broken.length + 1,
      name: "broken_thing",
      sql: "CREATE TABLE nope (",
      checksum: "x",
    });
    await expect(migrateClickHouse(ch.ch, quietLog, broken)).rejects.toThrow(/broken_thing failed/);
  });

  it("every ClickHouse column a data engineer queries has a COMMENT", async () => {
    const cols = await ch.ch.query<{ table: string; name: string; comment: string }>(
      "t",
      "SELECT table, name, comment FROM system.columns WHERE database = currentDatabase() AND table != 'schema_migrations'",
    );
    expect(cols.length).toBeGreaterThan(0);
    expect(cols.filter((c) => c.comment === "").map((c) => `${c.table}.${c.name}`)).toEqual([]);
  });
});
