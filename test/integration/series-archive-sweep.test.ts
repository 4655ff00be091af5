/**
 * Raw points left below an archive's end (lib/series/writer.ts `sweepArchivedRaw`): a series-recompute pass that
 * stops between an archive round's pages and its delete leaves the archived raw points in ClickHouse, and its retry
 * does not delete them (it archives from the archive's end on). Here every archive delete of the run is dropped, the
 * state a crash at each of them leaves; a restart of series-recompute then deletes exactly those points: every other
 * point, fact, segment, page and instance is as it was. (A clean pass's state, which dropping nothing gives, is
 * series-guarantees.test.ts's check.)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ProcessorName } from "../../pipeline/runtime.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { SERIES_DEVNET, SERIES_TEST_ENV, seriesStateHash } from "../helpers/series.ts";
import type { TestCh } from "../helpers/stores.ts";

const PROCESSORS: ProcessorName[] = ["normalize", "raw-sink", "registry", "series", "series-recompute"];
const envWith = () => ({
  ...SERIES_TEST_ENV,
  SERIES_ARCHIVE_DIR: mkdtempSync(join(tmpdir(), "series-sweep-")),
});

/** Live raw points at or after the start of an archived page of their instance, and before its archive's end. */
async function leftovers(ch: TestCh): Promise<number> {
  const [r] = await ch.ch.query<{ n: string }>(
    "t",
    `SELECT count() AS n FROM series_points AS p FINAL
     INNER JOIN (SELECT instance_id, max(page_end) AS until FROM series_archive_pages FINAL GROUP BY instance_id) AS a
       ON p.instance_id = a.instance_id
     WHERE p.scale = '0' AND p.deleted = 0 AND p.t < a.until`,
  );
  return Number(r?.n ?? 0);
}

/** Count and hash of the live points as `seriesStateHash` takes them; `keptOnly` leaves out the raw ones below an archive's end. */
async function pointsHash(ch: TestCh, keptOnly: boolean): Promise<{ rows: number; hash: string }> {
  const [r] = await ch.ch.query<{ rows: string; hash: string }>(
    "t",
    `SELECT count() AS rows, toString(sum(cityHash64(toString(tuple(*))))) AS hash FROM (
       SELECT * EXCEPT (version, state) FROM series_points FINAL WHERE deleted = 0
       ${
         keptOnly
           ? `AND (instance_id, scale, t) NOT IN (
                SELECT p.instance_id, p.scale, p.t FROM series_points AS p FINAL
                INNER JOIN (SELECT instance_id, max(page_end) AS until FROM series_archive_pages FINAL GROUP BY instance_id) AS a
                  ON p.instance_id = a.instance_id
                WHERE p.scale = '0' AND p.t < a.until)`
           : ""
       })`,
  );
  return { rows: Number(r?.rows ?? 0), hash: r?.hash ?? "" };
}

describe("series: raw points left below an archive's end", () => {
  let p: TestPipeline | undefined;
  afterAll(async () => p?.close());

  it("are deleted when series-recompute starts, and nothing else is", async () => {
    // 1,800 blocks, 15 minutes apart on each of the 16 chains: 28 hours, past a day's page and the 3 hours' retention.
    p = await startTestPipeline({
      blocks: 1800,
      devnet: SERIES_DEVNET,
      env: envWith(),
      processors: PROCESSORS,
    });
    const pipeline = p;
    const realCommand = pipeline.deps.ch.command.bind(pipeline.deps.ch);
    let dropped = 0;
    pipeline.deps.ch.command = async (label, sql, params) => {
      if (label === "series_raw_archived_delete") {
        dropped++;
        return;
      }
      return realCommand(label, sql, params);
    };
    await pipeline.catchUp();
    expect(dropped).toBeGreaterThan(0);
    expect(await leftovers(pipeline.ch)).toBeGreaterThan(0);
    const before = await seriesStateHash(pipeline.ch);
    expect(before.pages!.rows).toBeGreaterThan(3);
    // What the sweep must leave: every live point but the raw ones below their instance's archive end.
    const kept = await pointsHash(pipeline.ch, true);
    expect(kept.rows).toBeLessThan(before.points!.rows);

    pipeline.deps.ch.command = realCommand;
    await pipeline.restartProcessor("series-recompute");
    expect(await leftovers(pipeline.ch)).toBe(0);
    const after = await seriesStateHash(pipeline.ch);
    expect(after).toEqual({ ...before, points: kept });
    expect(await pointsHash(pipeline.ch, false)).toEqual(kept);
  }, 300_000);
});
