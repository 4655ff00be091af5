/**
 * Address labels kept in memory by the events repository: reused while `label_generation` stays, and
 * dropped when a statement that can change a label (address_labels, a registered token's symbol) bumps it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventsRepo, type EventsRepo } from "../../api/routes/events/repo.ts";
import { openTestCh, openTestPg, type TestCh, type TestPg } from "../helpers/stores.ts";

describe("address labels cache", () => {
  let pg: TestPg;
  let ch: TestCh;
  let repo: EventsRepo;
  let labelReads = 0;
  const CHECK_MS = 40;
  const pause = () => new Promise((r) => setTimeout(r, CHECK_MS + 10));

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    const real = pg.pg.query.bind(pg.pg);
    pg.pg.query = (async (label: string, sql: string, params?: Parameters<typeof real>[2]) => {
      if (label === "labels_for_addresses") labelReads++;
      return real(label, sql, params);
    }) as typeof pg.pg.query;
    repo = createEventsRepo({ ch: ch.ch, pg: pg.pg, hydration: true, pageCacheMs: CHECK_MS });
  });
  afterAll(async () => {
    await ch?.close();
    await pg?.close();
  });

  const generation = async () =>
    (await pg.pg.query<{ g: string }>("t", "SELECT generation::text AS g FROM label_generation"))[0]?.g;

  it("reuses labels and misses until a label statement bumps the generation", async () => {
    expect(await repo.labels(["1Alice", "1Bob"])).toEqual({});
    const reads = labelReads;
    expect(await repo.labels(["1Bob", "1Alice"])).toEqual({});
    expect(labelReads).toBe(reads);

    const before = await generation();
    await pg.pg.query(
      "t",
      "INSERT INTO address_labels (address, source, label, mapped_label) VALUES ('1Alice', 'test', 'Alice', 'Alice')",
    );
    expect(await generation()).not.toBe(before);
    await pause();
    expect(await repo.labels(["1Alice", "1Bob"])).toEqual({
      "1Alice": { label: "Alice", mapped_label: "Alice", source: "test" },
    });
    expect(labelReads).toBe(reads + 1);

    await pg.pg.query("t", "DELETE FROM address_labels WHERE address = '1Alice'");
    await pause();
    expect(await repo.labels(["1Alice"])).toEqual({});
  });

  it("bumps the generation when a token's label fields change, not for other columns", async () => {
    const id = "a".repeat(64);
    const before = await generation();
    await pg.pg.query(
      "t",
      `INSERT INTO tokens (id, contract_address, symbol, name, registered, source, created_at, updated_at)
       VALUES ($1, '1Tok', 'TOK', 'Token', true, 'test', 0, 0)`,
      [id],
    );
    const afterInsert = await generation();
    expect(afterInsert).not.toBe(before);
    await pg.pg.query("t", "UPDATE tokens SET symbol = 'NEW' WHERE id = $1", [id]);
    const afterSymbol = await generation();
    expect(afterSymbol).not.toBe(afterInsert);
    await pg.pg.query("t", "UPDATE tokens SET updated_at = 1 WHERE id = $1", [id]);
    expect(await generation()).toBe(afterSymbol);
  });
});
