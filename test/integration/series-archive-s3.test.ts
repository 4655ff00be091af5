// Test passes: embedded (it uses the in-process bus in every pass (see its notice)).
/**
 * The S3 path of the series archive against s3rver (a real S3 protocol server, in-process): the object
 * store's put/get/missing key, then a pipeline whose raw pages go to the bucket, served by the chart
 * route before and after the API and the series processor restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createObjectStore } from "../../lib/stores/object-store.ts";
import { createTestApp } from "../helpers/app.ts";
import { KAFKA_BROKERS, startTestPipeline, type TestPipeline } from "../helpers/pipeline.ts";
import { startS3, type TestS3 } from "../helpers/s3.ts";
import {
  type ChartPoint,
  HOUR,
  readAllPoints,
  SERIES_BLOCKS,
  SERIES_DEVNET,
  SERIES_TEST_ENV,
} from "../helpers/series.ts";

const CREDENTIALS = { region: "us-east-1", accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

// Over the kcat mock cluster's small batches (about five blocks, each costing the series processor about 9
// statements on the shared chDB session) the 28 hours of chain time it had then outlasted the drain timeout in CI,
// so this file uses the in-process bus in every pass (the PostgreSQL pass still runs it on PostgreSQL); series over
// Kafka: series-guarantees.test.ts's reorg case and replay-reorg.test.ts.
if (KAFKA_BROKERS)
  console.warn(
    "[notice] %s runs on the in-process bus in the Kafka pass (series over Kafka: series-guarantees reorg case)",
    "series-archive-s3.test.ts",
  );

describe("series archive on S3", () => {
  let s3: TestS3;
  let p: TestPipeline | undefined;
  beforeAll(async () => {
    s3 = await startS3();
  });
  afterAll(async () => {
    await p?.close();
    await s3?.close();
  });

  it("puts, gets and misses objects in a bucket it creates", async () => {
    const store = createObjectStore({
      dir: "",
      s3: { endpoint: s3.endpoint, bucket: "unit", ...CREDENTIALS },
    });
    const body = Buffer.from(JSON.stringify({ points: [{ t: 1, values: { a: "1" } }] }));
    await store.put("series/x/0/1-2.json", body);
    expect((await store.get("series/x/0/1-2.json"))?.equals(body)).toBe(true);
    expect(await store.get("series/x/0/missing.json")).toBeNull();
    expect(store.urlOf("series/x/0/1-2.json")).toBe("s3://unit/series/x/0/1-2.json");
    await expect(store.put("../escape", body)).rejects.toThrow(/Bad object key/);
    store.close();
  });

  it("archives raw pages to the bucket and serves them after restarts", async () => {
    const env = {
      ...SERIES_TEST_ENV,
      SERIES_S3_ENDPOINT: s3.endpoint,
      SERIES_S3_BUCKET: "series-archive",
      SERIES_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      SERIES_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    };
    // chain-blocks comes from the series processor alone (holders write only token-holders).
    p = await startTestPipeline({
      blocks: SERIES_BLOCKS,
      devnet: SERIES_DEVNET,
      env,
      kafka: false,
      processors: ["normalize", "series", "series-recompute"],
    });
    await p.catchUp();
    const pipeline = p;
    const headers = pipeline.api.auth(pipeline.api.userKey);
    const list = await pipeline.api.app.inject({ url: "/series/chain-blocks/instances", headers });
    const all = (list.json().instances as { instanceId: string; dimensions: Record<string, string> }[]).find(
      (i) => i.dimensions.chain_index === "all",
    )!;
    const detail = (
      await pipeline.api.app.inject({ url: `/series/instances/${all.instanceId}`, headers })
    ).json();
    expect(detail.archive.pages).toBeGreaterThanOrEqual(1);
    const until = detail.archive.archivedUntil as number;

    // The page is an object of the bucket, read by a client of its own.
    const seg = await pipeline.api.app.inject({
      url: `/series/instances/${all.instanceId}/bucket?scale=0&bucket_start_ts=${until - 2 * HOUR}`,
      headers: pipeline.api.auth(pipeline.api.adminKey),
    });
    const located = seg.json() as { key: string; pageUrl: string; segmentS3Keys: string[] };
    expect(located.segmentS3Keys).toEqual([located.key]);
    expect(located.pageUrl).toBe(`s3://series-archive/${located.key}`);
    const reader = createObjectStore({
      dir: "",
      s3: { endpoint: s3.endpoint, bucket: "series-archive", ...CREDENTIALS },
    });
    const page = JSON.parse((await reader.get(located.key))!.toString()) as { points: { t: number }[] };
    reader.close();
    expect(page.points.length).toBeGreaterThan(0);

    const before = await readAllPoints(pipeline.api, all.instanceId, "0");
    const archived = before.filter((x: ChartPoint) => x.kind === "archived");
    expect(archived.map((x) => x.t)).toEqual(before.filter((x) => x.t < until).map((x) => x.t));
    expect(archived.length).toBeGreaterThanOrEqual(page.points.length);

    // A new API process and a restarted processor: the same points, and new blocks keep coming.
    const again = await createTestApp({ stores: { pg: pipeline.pg, ch: pipeline.ch }, env });
    try {
      expect(await readAllPoints(again, all.instanceId, "0")).toEqual(before);
    } finally {
      await again.close();
    }
    await pipeline.restartProcessor("series");
    await pipeline.restartProcessor("series-recompute");
    pipeline.chain.advance(200);
    await pipeline.catchUp();
    const after = await readAllPoints(pipeline.api, all.instanceId, "0");
    expect(after.length).toBeGreaterThan(before.length);
    const d2 = (
      await pipeline.api.app.inject({ url: `/series/instances/${all.instanceId}`, headers })
    ).json();
    expect(d2.archive.pages).toBeGreaterThanOrEqual(detail.archive.pages);
  }, 300_000);
});
