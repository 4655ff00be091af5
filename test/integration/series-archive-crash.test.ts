// Test passes: embedded (it uses the in-process bus in every pass; the crash is in ClickHouse's deletes).
/**
 * Raw points left below an archive's end (lib/series/archive.ts `archiveRaw`): a series-recompute pass that dies
 * between an archive round's pages and their delete leaves the archived raw points in ClickHouse (readers already go
 * to the pages there). Its batch is handled again, and that pass deletes them. Here the first archive deletes of a
 * run fail as such a crash would (after the pages are stored); at the end no raw point is left below an archive's
 * end, and the series state equals a clean pass's over the same chain.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ProcessorName } from "../../pipeline/runtime.ts";
import { startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import {
  cleanSeriesState,
  SERIES_BLOCKS,
  SERIES_DEVNET,
  SERIES_TEST_ENV,
  seriesStateHash,
} from "../helpers/series.ts";
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

describe("series: raw points left below an archive's end", () => {
  let p: TestPipeline | undefined;
  afterAll(async () => p?.close());

  it("are deleted when the crashed pass's batch comes again, leaving the state of a clean pass", async () => {
    // 8.5 hours from 20:00 (helpers/series.ts): past the first day's page and the 3 hours' retention.
    p = await startTestPipeline({
      blocks: SERIES_BLOCKS,
      devnet: SERIES_DEVNET,
      env: envWith(),
      processors: PROCESSORS,
    });
    const pipeline = p;
    const realCommand = pipeline.deps.ch.command.bind(pipeline.deps.ch);
    let crashes = 3;
    pipeline.deps.ch.command = async (label, sql, params) => {
      if (label === "series_raw_archived_delete" && crashes > 0) {
        crashes--;
        throw new Error("injected crash after the archive pages, before their points' delete");
      }
      return realCommand(label, sql, params);
    };
    for (let i = 0; i < 100; i++) {
      try {
        if ((await pipeline.ingestor.runOnce()).caughtUp) break;
      } catch {
        // the injected crash (on the in-process bus it reaches the publisher): the round is handled again
      }
    }
    await pipeline.catchUp();
    expect(crashes).toBe(0);
    expect(await leftovers(pipeline.ch)).toBe(0);
    const state = await seriesStateHash(pipeline.ch);
    expect(state.pages!.rows).toBeGreaterThan(3);

    // A clean pass over the same chain, into fresh stores, on the in-process bus whichever bus the crashed run
    // used (the state does not depend on the bus, and over Kafka a second run costs CI as much again).
    const expected = await cleanSeriesState(pipeline, pipeline.ch.dataDir, {
      env: envWith(),
      processors: PROCESSORS,
      kafka: false,
    });
    expect(state).toEqual(expected);
  }, 300_000);
});
