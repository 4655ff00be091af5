/** Pure parts of ALPH's supply (lib/figures/alph-supply.ts) and of the pipeline progress view (lib/pipeline-progress.ts). */
import { describe, expect, it } from "vitest";
import { ALPH_MAX_SUPPLY, combineAlphSupply, parseExplorerSupply } from "../../lib/figures/alph-supply.ts";
import { type IngestProgressRow, progressView } from "../../lib/pipeline-progress.ts";

const explorer = { timestamp: 1_000, total: "1000", circulating: "700", reserved: "200", locked: "100" };

describe("ALPH's supply figures", () => {
  it("takes every figure from the explorer while the index lacks genesis", () => {
    expect(combineAlphSupply(explorer, null)).toEqual({
      maximum: { value: ALPH_MAX_SUPPLY, source: "protocol" },
      total: { value: "1000", source: "explorer" },
      circulating: { value: "700", source: "explorer" },
      reserved: { value: "200", source: "explorer" },
      locked: { value: "100", source: "explorer" },
    });
  });

  it("uses the index's total and computes circulating from it", () => {
    const s = combineAlphSupply(explorer, "1010");
    expect(s.total).toEqual({ value: "1010", source: "index" });
    expect(s.circulating).toEqual({ value: "710", source: "computed" });
    expect(s.reserved.source).toBe("explorer");
  });

  it("leaves the explorer's figures null without an explorer answer", () => {
    const s = combineAlphSupply(null, null);
    for (const f of [s.total, s.circulating, s.reserved, s.locked])
      expect(f).toEqual({ value: null, source: null });
    expect(combineAlphSupply(null, "5").circulating).toEqual({ value: null, source: null });
  });

  it("refuses a figure above the protocol's maximum, and a circulating figure above the total", () => {
    const above = (BigInt(ALPH_MAX_SUPPLY) + 1n).toString();
    const s = combineAlphSupply({ ...explorer, total: above, locked: above }, null);
    expect(s.total).toEqual({ value: null, source: null, refused: "exceeds_maximum" });
    expect(s.locked).toEqual({ value: null, source: null, refused: "exceeds_maximum" });
    expect(s.circulating).toEqual({ value: "700", source: "explorer" });
    expect(combineAlphSupply({ ...explorer, circulating: "1001" }, null).circulating).toEqual({
      value: null,
      source: null,
      refused: "exceeds_total",
    });
    // At the maximum and at the total, the figures stand.
    const at = combineAlphSupply({ ...explorer, total: ALPH_MAX_SUPPLY, circulating: ALPH_MAX_SUPPLY }, null);
    expect(at.total.value).toBe(ALPH_MAX_SUPPLY);
    expect(at.circulating.value).toBe(ALPH_MAX_SUPPLY);
  });

  it("accepts only a TokenSupply-shaped first item", () => {
    expect(parseExplorerSupply([{ ...explorer, maximum: ALPH_MAX_SUPPLY }])).toEqual(explorer);
    expect(parseExplorerSupply([])).toBeNull();
    expect(parseExplorerSupply([{ ...explorer, total: 1000 }])).toBeNull();
    expect(parseExplorerSupply([{ ...explorer, locked: "-1" }])).toBeNull();
  });
});

describe("progress view", () => {
  const ingest: IngestProgressRow = {
    phase: "backfill",
    start_ts: 0,
    cursor_ts: 10_000,
    published_ts: 12_000,
    tip_ts: 70_000,
    blocks_to_go: 300,
    blocks_per_s: 20,
    updated_at: 1,
  };

  it("derives time to go, ETA and each processor's lag", () => {
    const v = progressView({
      ingest,
      processors: [
        { processor: "normalize", block_ts: 12_000, updated_at: 1 },
        { processor: "series", block_ts: 9_000, updated_at: 1 },
      ],
    });
    expect(v).toMatchObject({ phase: "backfill", blocks_to_go: 300, time_to_go_ms: 60_000, eta_ms: 15_000 });
    expect(v.processors.map((p) => [p.name, p.lag_ms])).toEqual([
      ["normalize", 0],
      ["series", 3_000],
    ]);
  });

  it("has no ETA without a rate, zero with nothing to go, and is unknown before ingest saved anything", () => {
    expect(progressView({ ingest: { ...ingest, blocks_per_s: null }, processors: [] }).eta_ms).toBeNull();
    expect(
      progressView({ ingest: { ...ingest, phase: "live", blocks_to_go: 0 }, processors: [] }),
    ).toMatchObject({ eta_ms: 0, time_to_go_ms: 0 });
    const none = progressView({ ingest: null, processors: [{ processor: "x", block_ts: 5, updated_at: 1 }] });
    expect(none).toMatchObject({ phase: "unknown", blocks_to_go: null, eta_ms: null });
    expect(none.processors[0]?.lag_ms).toBeNull();
  });
});
