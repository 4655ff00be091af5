// Test passes: embedded (PGlite's own template and dump).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { migratePostgres, readMigrations } from "../../lib/migrate.ts";
import { buildOnce, isEmptyDir, pgliteTemplate, seedDataDir } from "../../lib/stores/pglite-template.ts";
import { createPostgres } from "../../lib/stores/postgres.ts";
import { openTestPg, quietLog } from "../helpers/stores.ts";

const root = mkdtempSync(join(tmpdir(), "pglite-template-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("PGlite's cached initdb template", () => {
  it("starts an empty data directory as a copy of the template, which then keeps what is written", async () => {
    const template = await pgliteTemplate();
    expect(template).not.toBeNull();
    expect(existsSync(join(template!, "PG_VERSION"))).toBe(true);

    const dataDir = join(root, "fresh");
    mkdirSync(dataDir);
    expect(await seedDataDir(dataDir)).toBe(true);
    expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true);
    // No copy left half-way beside it.
    expect(readdirSync(root).filter((f) => f.includes(".seeding-"))).toEqual([]);

    const db = await createPostgres({ url: "", dataDir, poolSize: 1, log: quietLog });
    await db.exec("create", "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('written after the copy')");
    await db.close();
    const again = await createPostgres({ url: "", dataDir, poolSize: 1, log: quietLog });
    expect(await again.query("read", "SELECT v FROM kept")).toEqual([{ v: "written after the copy" }]);
    await again.close();
    // The template itself is untouched by what a copy of it holds.
    const other = join(root, "other");
    expect(await seedDataDir(other)).toBe(true);
    const third = await createPostgres({ url: "", dataDir: other, poolSize: 1, log: quietLog });
    expect(
      await third.query("tables", "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'kept'"),
    ).toEqual([{ n: 0 }]);
    await third.close();
  });

  it("leaves a data directory that holds anything alone", async () => {
    const dataDir = join(root, "used");
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, "note.txt"), "mine");
    expect(isEmptyDir(dataDir)).toBe(false);
    expect(await seedDataDir(dataDir)).toBe(false);
    expect(readdirSync(dataDir)).toEqual(["note.txt"]);
  });

  it("puts one template in place when builders race, never remakes it, and reports a cache it cannot write", async () => {
    const target = join(root, "race");
    let made = 0;
    const make = async (dir: string) => {
      made += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
      writeFileSync(join(dir, "made"), String(made));
    };
    expect(await Promise.all([buildOnce(target, make), buildOnce(target, make)])).toEqual([true, true]);
    expect(existsSync(join(target, "made"))).toBe(true);
    // Neither builder's working directory is left behind.
    expect(readdirSync(root).filter((f) => f.startsWith("race.tmp-"))).toEqual([]);
    // Once in place, it is not made again.
    const before = made;
    expect(await buildOnce(target, make)).toBe(true);
    expect(made).toBe(before);

    // A target under a file cannot be made: false, nothing thrown (PGlite then runs initdb itself).
    writeFileSync(join(root, "a-file"), "");
    expect(await buildOnce(join(root, "a-file", "template"), make)).toBe(false);
  });

  it("gives the tests an in-memory store with every migration applied from the cached dump", async () => {
    const store = await openTestPg();
    try {
      expect(await migratePostgres(store.pg, quietLog)).toBe(0);
      const versions = await store.pg.query<{ version: number }>(
        "versions",
        "SELECT version FROM schema_migrations ORDER BY version",
      );
      expect(versions.map((v) => v.version)).toEqual(readMigrations("postgres").map((m) => m.version));
    } finally {
      await store.close();
    }
    // A store opened without migrations is empty.
    const bare = await openTestPg({ migrate: false });
    try {
      expect(
        await bare.pg.query("tables", "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'"),
      ).toEqual([{ n: 0 }]);
    } finally {
      await bare.close();
    }
  });
});
