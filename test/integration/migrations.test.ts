// Test passes: embedded and server (the migrations applied on a PostgreSQL server).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventsReader, type StoredRow } from "../../lib/events/reader.ts";
import { migrateClickHouse, migratePostgres, readMigrations, splitStatements } from "../../lib/migrate.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

/** A row of `events` as the writer stores it; the document names the row's transaction, block and version. */
function row(
  id: string,
  tx: string,
  from: string,
  to: string,
  token: string,
  at: { block?: string; version?: number; main?: boolean } = {},
) {
  const block = at.block ?? "b".repeat(64);
  const version = at.version ?? 1;
  return {
    id,
    chain_index: 0,
    block_hash: block,
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
    main_chain: at.main ?? true,
    doc:
      at.block === undefined && at.version === undefined
        ? `{"id":"${id}"}`
        : `{"id":"${id}","tx_id":"${tx}","b":"${block[0]}","v":${version}}`,
    version,
  };
}

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
      await other.ch.insert("t", "events", [
        row("1752573600000-00-0000000001-00000-0000", "a".repeat(64), "1A", "1B", ""),
      ]);
      // Up to 0014: 0015 replaces event_lookup.
      const era = all.filter((m) => m.version < 15);
      expect(await migrateClickHouse(other.ch, quietLog, era)).toBe(era.length - 2);
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

  it("0015 replaces event_lookup: a store with 0003-era rows answers address, token and tx reads the same", async () => {
    const other = await openTestCh({ migrate: false, dataDir: ch.dataDir });
    try {
      const all = readMigrations("clickhouse");
      await migrateClickHouse(
        other.ch,
        quietLog,
        all.filter((m) => m.version < 15),
      );
      const id = (n: number) =>
        `17525736000${String(n).padStart(2, "0")}-00-00000000${String(n).padStart(2, "0")}-00000-0000`;
      const [t1, t2, t3] = ["1".repeat(64), "2".repeat(64), "3".repeat(64)];
      const [b1, b2, b3] = ["b".repeat(64), "c".repeat(64), "d".repeat(64)];
      // Written as the 0014-era writer did: rows into `events` (event_lookup_mv copies them), and a
      // rewrite's dropped keys retracted in event_lookup itself. Nothing is merged.
      await other.ch.insert("t", "events", [
        row(id(1), t1, "1A", "1B", "tokX", { block: b1 }),
        row(id(2), t1, "1A", "1C", "", { block: b1 }),
        row(id(4), t1, "1A", "", "", { block: b1 }),
        row(id(3), t2, "1A", "1B", "tokX", { block: b2, version: 2 }),
      ]);
      await other.ch.insert("t", "events", [
        // A replay: the same rows again.
        row(id(1), t1, "1A", "1B", "tokX", { block: b1 }),
        // A rewrite of b1 at version 3: event 2 now goes to 1D, event 4 is dropped.
        row(id(2), t1, "1A", "1D", "", { block: b1, version: 3 }),
        row(id(4), t1, "1A", "", "", { block: b1, version: 3, main: false }),
        // b2 orphaned (version 5); its sibling b3 gives the same id to another transaction.
        row(id(3), t2, "1A", "1B", "tokX", { block: b2, version: 5, main: false }),
        row(id(3), t3, "1A", "1E", "", { block: b3, version: 6 }),
      ]);
      await other.ch.command(
        "t",
        `INSERT INTO event_lookup (kind, key, id, block_hash, dapp_id, category, sub_kind, token_address, main_chain, version, payload_ref, doc)
         VALUES ('address', '1C', {id:String}, {b:String}, 'alephium', 'transfer', 'send', '', false, 3, NULL, '{}')`,
        { id: id(2), b: b1 },
      );
      const addresses = ["1A", "1B", "1C", "1D", "1E"];
      const txs = [t1, t2, t3];
      // Before: what the 0014-era reader served (the newest row of each key, id and block, main chain only).
      const old = async (kind: string, key: string) =>
        (
          await other.ch.query<{ id: string; doc: string }>(
            "t",
            `SELECT id, doc FROM event_lookup FINAL WHERE kind = {kind:String} AND key = {key:String} AND main_chain
             ORDER BY id`,
            { kind, key },
          )
        ).map((r) => `${r.id} ${r.doc}`);
      const before = new Map<string, string[]>();
      for (const a of addresses) before.set(`address ${a}`, await old("address", a));
      before.set("token tokX", await old("token", "tokX"));
      for (const t of txs) before.set(`tx ${t}`, await old("tx", t));

      const rest = all.filter((m) => m.version >= 15);
      expect(await migrateClickHouse(other.ch, quietLog, all)).toBe(rest.length);
      const tables = await other.ch.query<{ name: string }>(
        "t",
        "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'event%' ORDER BY name",
      );
      expect(tables.map((t) => t.name)).toEqual(
        expect.arrayContaining([
          "event_ids_by_tx",
          "event_ids_by_tx_mv",
          "events_by_key",
          "events_by_key_mv",
        ]),
      );
      expect(tables.map((t) => t.name)).not.toContain("event_lookup");
      expect(tables.map((t) => t.name)).not.toContain("event_lookup_mv");

      const reader = createEventsReader(other.ch);
      const served = (rows: StoredRow[]) => rows.map((r) => `${r.id} ${r.doc}`).sort();
      const reads = async () => {
        const out = new Map<string, string[]>();
        for (const a of addresses)
          out.set(`address ${a}`, served(await reader.page({ address: a }, { limit: 50, poll: false }, "9")));
        out.set(
          "token tokX",
          served(await reader.page({ token_address: "tokX" }, { limit: 50, poll: false }, "9")),
        );
        for (const t of txs) out.set(`tx ${t}`, served(await reader.byTransactions([t])));
        return out;
      };
      const doc = (n: number, tx: string, block: string, version: number) =>
        `${id(n)} {"id":"${id(n)}","tx_id":"${tx}","b":"${block[0]}","v":${version}}`;
      // The answers, spelled out: the rewrite's newest document, no dropped, moved or orphaned row.
      expect(Object.fromEntries(before)).toEqual({
        "address 1A": [doc(1, t1, b1, 1), doc(2, t1, b1, 3), doc(3, t3, b3, 6)],
        "address 1B": [doc(1, t1, b1, 1)],
        "address 1C": [],
        "address 1D": [doc(2, t1, b1, 3)],
        "address 1E": [doc(3, t3, b3, 6)],
        "token tokX": [doc(1, t1, b1, 1)],
        [`tx ${t1}`]: [doc(1, t1, b1, 1), doc(2, t1, b1, 3)],
        [`tx ${t2}`]: [],
        [`tx ${t3}`]: [doc(3, t3, b3, 6)],
      });
      expect(Object.fromEntries(await reads())).toEqual(Object.fromEntries(before));

      // Re-running 0015 changes no answer; later rows reach the new tables through their views.
      for (const m of rest)
        for (const statement of splitStatements(m.sql)) await other.ch.command("t", statement);
      expect(Object.fromEntries(await reads())).toEqual(Object.fromEntries(before));
      await other.ch.insert("t", "events", [row(id(5), t2, "1C", "1A", "tokX", { block: b3, version: 7 })]);
      const later = await reads();
      expect(later.get("address 1C")).toEqual([doc(5, t2, b3, 7)]);
      expect(later.get("token tokX")).toEqual([doc(1, t1, b1, 1), doc(5, t2, b3, 7)]);
      expect(later.get(`tx ${t2}`)).toEqual([doc(5, t2, b3, 7)]);
    } finally {
      await other.close();
    }
  });

  it("0019 keeps what the single holders writer left pending, per token", async () => {
    const other = await openTestCh({ migrate: false, dataDir: ch.dataDir });
    try {
      const all = readMigrations("clickhouse");
      const before = all.filter((m) => m.version < 19);
      await migrateClickHouse(other.ch, quietLog, before);
      // A pass that died left three moments of two tokens; an older, finished set is replaced by it (FINAL).
      await other.ch.insert("t", "holder_pending_moments", [
        { slot: 0, tokens: ["a"], times: [5], version: 1 },
        { slot: 0, tokens: ["t1", "t2", "t1"], times: [1000, 2000, 3000], version: 7 },
      ]);
      expect(await migrateClickHouse(other.ch, quietLog, all)).toBe(all.length - before.length);
      const rows = await other.ch.query<{ token_id: string; times: string[]; version: string }>(
        "t",
        `SELECT token_id, arrayMap(t -> toString(t), arraySort(times)) AS times, toString(version) AS version
         FROM holder_pending_token_moments FINAL ORDER BY token_id`,
      );
      expect(rows).toEqual([
        { token_id: "t1", times: ["1000", "3000"], version: "7" },
        { token_id: "t2", times: ["2000"], version: "7" },
      ]);
    } finally {
      await other.close();
    }
  });

  it("0020 moves the holders' and block facts' hex columns to ZSTD, keeping the rows written before it", async () => {
    const other = await openTestCh({ migrate: false, dataDir: ch.dataDir });
    try {
      const all = readMigrations("clickhouse");
      const before = all.filter((m) => m.version < 20);
      await migrateClickHouse(other.ch, quietLog, before);
      const hex = (n: number, c: string) => `${c}${n.toString(16)}`.padEnd(64, c);
      const output = (n: number) => ({
        key: hex(n, "a"),
        token_id: "0".repeat(64),
        address: `1Addr${n}`,
        amount: String(1000 + n),
        block_hash: hex(n % 3, "b"),
        ts: 1752573600000 + n,
        main_chain: true,
        version: 1,
      });
      // Outputs before the migration (their moves through holder_output_moves_mv), and after it.
      await other.ch.insert("t", "holder_outputs", [0, 1, 2, 3].map(output));
      const codecs = async () =>
        other.ch.query<{ column: string; codec: string }>(
          "t",
          `SELECT concat(table, '.', name) AS column, compression_codec AS codec FROM system.columns
           WHERE database = currentDatabase() AND compression_codec != ''
             AND table IN ('holder_outputs', 'holder_spends', 'holder_moves', 'series_block_facts')
           ORDER BY column`,
        );
      expect(await codecs()).toEqual([]);
      expect(await migrateClickHouse(other.ch, quietLog, all)).toBe(all.length - before.length);
      const zstd = "CODEC(ZSTD(1))";
      expect(await codecs()).toEqual(
        [
          "holder_moves.block_hash",
          "holder_moves.key",
          "holder_outputs.address",
          "holder_outputs.block_hash",
          "holder_outputs.key",
          "holder_spends.block_hash",
          "holder_spends.key",
          "series_block_facts.block_hash",
        ].map((column) => ({ column, codec: zstd })),
      );
      await other.ch.insert("t", "holder_outputs", [4, 5].map(output));
      await other.ch.command("t", "OPTIMIZE TABLE holder_outputs FINAL");
      await other.ch.command("t", "OPTIMIZE TABLE holder_moves FINAL");
      const outputs = await other.ch.query<ReturnType<typeof output>>(
        "t",
        `SELECT key, token_id, address, toString(amount) AS amount, block_hash, ts, main_chain, version
         FROM holder_outputs FINAL ORDER BY key`,
      );
      const norm = (r: ReturnType<typeof output>) => ({
        ...r,
        ts: Number(r.ts),
        version: Number(r.version),
        main_chain: Boolean(r.main_chain),
      });
      expect(outputs.map(norm)).toEqual([0, 1, 2, 3, 4, 5].map(output));
      const moves = await other.ch.query<{ key: string; block_hash: string; amount: string }>(
        "t",
        "SELECT key, block_hash, toString(amount) AS amount FROM holder_moves FINAL WHERE kind = 'output' ORDER BY key",
      );
      expect(moves).toEqual(
        [0, 1, 2, 3, 4, 5].map((n) => ({
          key: output(n).key,
          block_hash: output(n).block_hash,
          amount: output(n).amount,
        })),
      );
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
