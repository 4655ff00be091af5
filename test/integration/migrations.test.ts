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

  it("0003 copies events written before it into event_lookup, and its view copies later ones", async () => {
    const other = await openTestCh({ migrate: false, dataDir: ch.dataDir });
    try {
      const all = readMigrations("clickhouse");
      await migrateClickHouse(
        other.ch,
        quietLog,
        all.filter((m) => m.version < 3),
      );
      const row = (id: string, tx: string, from: string, to: string, token: string) => ({
        id,
        chain_index: 0,
        block_hash: "b".repeat(64),
        block_height: 1,
        timestamp: 1752573600000,
        tx_id: tx,
        tx_index: 0,
        event_index: 0,
        dapp_id: "alephium",
        category: "transfer",
        sub_kind: "send",
        type: "alph",
        is_main: true,
        from,
        to,
        with: "",
        token_address: token,
        token_id: "0".repeat(64),
        amount: "1",
        contract_address: "",
        contract_event_index: null,
        payload: "{}",
        payload_ref: null,
        main_chain: true,
        doc: `{"id":"${id}"}`,
        version: 1,
      });
      await other.ch.insert("t", "events", [
        row("1752573600000-00-0000000001-00000-0000", "a".repeat(64), "1A", "1B", ""),
      ]);
      expect(await migrateClickHouse(other.ch, quietLog, all)).toBe(all.length - 2);
      // from == to is one address row, not two.
      await other.ch.insert("t", "events", [
        row("1752573600001-00-0000000002-00000-0000", "c".repeat(64), "1C", "1C", "tokX"),
      ]);
      const rows = await other.ch.query<{ kind: string; key: string; id: string; doc: string }>(
        "t",
        "SELECT kind, key, id, doc FROM event_lookup ORDER BY id, kind, key",
      );
      expect(rows.map((r) => `${r.id.slice(-21, -11)} ${r.kind} ${r.key}`)).toEqual([
        `0000000001 address 1A`,
        `0000000001 address 1B`,
        `0000000001 tx ${"a".repeat(64)}`,
        `0000000002 address 1C`,
        `0000000002 token tokX`,
        `0000000002 tx ${"c".repeat(64)}`,
      ]);
      expect(rows[0]?.doc).toBe('{"id":"1752573600000-00-0000000001-00000-0000"}');
    } finally {
      await other.close();
    }
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
      `SELECT table, name, comment FROM system.columns WHERE database = currentDatabase()
         AND table IN (SELECT name FROM system.tables WHERE database = currentDatabase()
                       AND engine != 'MaterializedView' AND name != 'schema_migrations')`,
    );
    expect(cols.length).toBeGreaterThan(0);
    expect(cols.filter((c) => c.comment === "").map((c) => `${c.table}.${c.name}`)).toEqual([]);
  });
});
