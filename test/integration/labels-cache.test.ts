// Test passes: embedded (hand-made rows through the store and routes; PGlite runs the same SQL).
/**
 * Address labels kept in memory by the events' label cache: reused while `label_generation` stays, and
 * dropped when a statement that can change a label (address_labels, a registered token's symbol) bumps it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLabelCache, type LabelCache } from "../../lib/events/label-cache.ts";
import { createAddressLabelsRepo } from "../../lib/labels/repo.ts";
import { openTestPg, type TestPg } from "../helpers/stores.ts";

describe("address labels cache", () => {
  let pg: TestPg;
  let cache: LabelCache;
  let labelReads = 0;
  const CHECK_MS = 40;
  /** Asks until the cache answers `expected` (it checks the generation at most every CHECK_MS). */
  const eventually = (addresses: string[], expected: Record<string, unknown>) =>
    vi.waitFor(async () => expect(await cache.labels(addresses)).toEqual(expected), {
      timeout: 5_000,
      interval: 10,
    });

  beforeAll(async () => {
    pg = await openTestPg();
    const real = pg.pg.query.bind(pg.pg);
    pg.pg.query = (async (label: string, sql: string, params?: Parameters<typeof real>[2]) => {
      if (label === "labels_for_addresses") labelReads++;
      return real(label, sql, params);
    }) as typeof pg.pg.query;
    cache = createLabelCache(createAddressLabelsRepo(pg.pg), { checkMs: CHECK_MS });
  });
  afterAll(async () => {
    await pg?.close();
  });

  const generation = async () =>
    (await pg.pg.query<{ g: string }>("t", "SELECT generation::text AS g FROM label_generation"))[0]?.g;

  it("reuses labels and misses until a label statement bumps the generation", async () => {
    expect(await cache.labels(["1Alice", "1Bob"])).toEqual({});
    const reads = labelReads;
    expect(await cache.labels(["1Bob", "1Alice"])).toEqual({});
    expect(labelReads).toBe(reads);

    const before = await generation();
    await pg.pg.query(
      "t",
      "INSERT INTO address_labels (address, source, label, mapped_label) VALUES ('1Alice', 'test', 'Alice', 'Alice')",
    );
    expect(await generation()).not.toBe(before);
    await eventually(["1Alice", "1Bob"], {
      "1Alice": { label: "Alice", mapped_label: "Alice", source: "test" },
    });
    // One store read when the generation moved; the answer is kept again afterwards.
    expect(labelReads).toBe(reads + 1);
    await cache.labels(["1Alice", "1Bob"]);
    expect(labelReads).toBe(reads + 1);

    await pg.pg.query("t", "DELETE FROM address_labels WHERE address = '1Alice'");
    await eventually(["1Alice"], {});
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
