/**
 * The code-hash guard's node check (lib/dapps/code-check.ts) over a registry (lib/dapps/code-hashes.ts): what each
 * answer of the node becomes, and what of a finished round still applies after blocks recorded a migration.
 */
import { describe, expect, it } from "vitest";
import { checkCodeHashes, stillNew } from "../../lib/dapps/code-check.ts";
import { createCodeHashBook } from "../../lib/dapps/code-hashes.ts";

const h = (c: string) => c.repeat(64);

describe("code-hash node check", () => {
  const registry = () =>
    createCodeHashBook(
      [
        { contract_address: "same", code_hash: h("a") },
        { contract_address: "upgraded", code_hash: h("b") },
        { contract_address: "migrated", code_hash: h("c") },
        { contract_address: "gone", code_hash: h("d") },
      ],
      [{ contract_address: "migrated", code_hash: h("e"), since_ts: 100, source: "migration" }],
    );
  const node: Record<string, string | null> = {
    same: h("a"),
    upgraded: h("f"),
    migrated: h("e"),
    gone: null,
    fresh: h("1"),
  };

  it("matches, records changes since the check's time, takes a first answer as the expected hash, skips the absent", async () => {
    const r = registry();
    const round = await checkCodeHashes(Object.keys(node), r, async (a) => node[a] ?? null, 5_000);
    expect(round.counts).toEqual({ match: 2, changed: 1, baseline: 1, absent: 1 });
    expect(round.changes).toEqual([
      { contract_address: "upgraded", code_hash: h("f"), since_ts: 5_000, source: "node" },
    ]);
    expect(round.baselines).toEqual([{ contract_address: "fresh", code_hash: h("1") }]);
    expect(round.error).toBeUndefined();
    // Applied, the upgraded contract's blocks after the check are refused, not those before it.
    r.add(round.changes);
    r.addExpected(round.baselines);
    expect(r.mismatchOf("upgraded", 5_000)).toBeUndefined();
    expect(r.mismatchOf("upgraded", 5_001)).toEqual({ expected: h("b"), live: h("f") });
    expect(r.expectedOf("fresh")).toBe(h("1"));
    // An operator's or the built-in list's hash is never replaced by a first answer.
    r.addExpected([{ contract_address: "same", code_hash: h("9") }]);
    expect(r.expectedOf("same")).toBe(h("a"));
    // The next round: the fresh contract's code has changed since its first answer.
    const next = await checkCodeHashes(["fresh"], r, async () => h("2"), 9_000);
    expect(next.changes).toEqual([
      { contract_address: "fresh", code_hash: h("2"), since_ts: 9_000, source: "node" },
    ]);
  });

  it("stops at the node's first failure and keeps what it read", async () => {
    const round = await checkCodeHashes(
      ["upgraded", "same", "fresh"],
      registry(),
      async (a) => {
        if (a === "same") throw new Error("HTTP 503");
        return node[a] ?? null;
      },
      1,
    );
    expect(round.changes.map((c) => c.contract_address)).toEqual(["upgraded"]);
    expect(round.baselines).toEqual([]);
    expect(String(round.error)).toContain("503");
  });

  it("drops from a finished round what blocks recorded meanwhile", async () => {
    const r = registry();
    const round = await checkCodeHashes(["upgraded", "fresh"], r, async (a) => node[a] ?? null, 5_000);
    // A block migrated the contract to the same code, and another replica saved the first answer.
    r.add([{ contract_address: "upgraded", code_hash: h("f"), since_ts: 4_000, source: "migration" }]);
    r.addExpected([{ contract_address: "fresh", code_hash: h("1") }]);
    const left = stillNew(round, r);
    expect(left.changes).toEqual([]);
    expect(left.baselines).toEqual([]);
    // A block's migration keeps its own time.
    expect(r.mismatchOf("upgraded", 4_001)).toEqual({ expected: h("b"), live: h("f") });
  });
});
