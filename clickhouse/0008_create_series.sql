-- Series (lib/series): timeseries built from the normalized events by the series processor.
--
-- series_facts is the base table: one row per (series instance, point key, event) a definition derives
-- from an event, keyed by natural keys (event id, block hash) with the block message's seq as version.
-- Replays write the same rows; a retracted block's facts come back with main_chain = false and a newer
-- seq. series_points is never summed on insert: every batch recomputes the buckets it touched from
-- series_facts FINAL (raw and 1m), and 1h / 1d from the finer points (distinct counts merge their
-- uniqExact states, so they stay exact). A bucket left without main-chain facts gets deleted = 1.
CREATE TABLE IF NOT EXISTS series_facts
(
  series_id LowCardinality(String) COMMENT 'Series definition id (lib/series/definitions)',
  instance_id String COMMENT 'Series instance: sha256 hex of the series id and its sorted dimensions',
  dimensions String COMMENT 'The instance''s dimensions as JSON (sorted keys)',
  key LowCardinality(String) COMMENT 'Point key of the series this fact counts towards',
  agg LowCardinality(String) COMMENT 'How the key aggregates: count, sum, distinct or last',
  ts UInt64 COMMENT 'Event (block) time in ms',
  fact_id String COMMENT 'Event id, then the fact''s position among those of the event',
  block_hash String COMMENT 'Block of the event',
  value String COMMENT 'Decimal text: 1 for count, the amount for sum, the value for last; empty for distinct',
  member String COMMENT 'What a distinct key counts (an address); empty otherwise',
  main_chain Bool COMMENT 'False once the block left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the block message seq',
  INDEX idx_block block_hash TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (instance_id, key, ts, fact_id, block_hash)
COMMENT 'Facts series points are computed from; query with FINAL and main_chain';

CREATE TABLE IF NOT EXISTS series_points
(
  instance_id String COMMENT 'Series instance id (64 hex)',
  scale LowCardinality(String) COMMENT 'Scale: 0 (raw: one point per distinct event time), 1m, 1h or 1d',
  t UInt64 COMMENT 'Bucket start in ms (raw scale: the event time)',
  key LowCardinality(String) COMMENT 'Point key',
  agg LowCardinality(String) COMMENT 'count, sum, distinct or last',
  value String COMMENT 'The point value as decimal text (exact: counts, U256 sums, distinct counts, raw prices)',
  state AggregateFunction(uniqExact, String) COMMENT 'uniqExact state of distinct keys (merged into coarser scales); empty otherwise',
  deleted UInt8 COMMENT '1 when the bucket has no main-chain fact any more',
  version UInt64 COMMENT 'Recompute version: newest fact seq * 1e6 + facts (raw, 1m); newest child version (1h, 1d)'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (instance_id, scale, t, key)
COMMENT 'Series points per instance, scale, bucket and key; query with FINAL and deleted = 0. Raw points of archived pages live in the object store (series_archive_pages)';

CREATE TABLE IF NOT EXISTS series_instances
(
  instance_id String COMMENT 'Series instance id (64 hex)',
  series_id LowCardinality(String) COMMENT 'Series definition id',
  dimensions String COMMENT 'Dimensions as JSON (sorted keys)',
  last_seen_at UInt64 COMMENT 'Time (ms) of the instance''s newest main-chain fact; 0 when none is left',
  version UInt64 COMMENT 'Newest fact seq seen when written'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY instance_id
COMMENT 'One row per series instance (series id + dimensions); query with FINAL';

CREATE TABLE IF NOT EXISTS series_instance_meta
(
  instance_id String COMMENT 'Series instance id',
  metadata String COMMENT 'Instance overrides as JSON, for example {"rawArchivePageDays": 7}',
  updated_at DateTime64(3, 'UTC') COMMENT 'When an admin last changed it'
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY instance_id
COMMENT 'Per-instance settings set by PATCH /series/instances/{instanceid}; query with FINAL';

-- Segments: each (instance, scale) splits its points into fixed time spans (SERIES_SEGMENT_POINTS buckets,
-- SERIES_RAW_SEGMENT_MS at raw scale). A span is sealed once a newer span holds a point; the newest span's
-- points are pending. Rows are recomputed from series_points (or from an archived page) when touched.
CREATE TABLE IF NOT EXISTS series_segments
(
  instance_id String COMMENT 'Series instance id',
  scale LowCardinality(String) COMMENT 'Scale of the segment',
  span_start UInt64 COMMENT 'Start of the segment''s time span (ms, aligned to its width from the epoch)',
  span_end UInt64 COMMENT 'End (exclusive) of the span',
  segment_id UUID COMMENT 'Deterministic id (from instance, scale, span start)',
  first_ts UInt64 COMMENT 'First point time in the segment',
  last_ts UInt64 COMMENT 'Last point time in the segment',
  point_count UInt32 COMMENT 'Points (distinct times) in the segment',
  storage_key String COMMENT 'Where its points are: clickhouse:series_points/<instance>/<scale>/<span start>, or the object key of the archive page',
  deleted UInt8 COMMENT '1 when the span is no longer a sealed segment (emptied, or pending again after a reorg)',
  version UInt64 COMMENT 'Newest point version seen when written'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (instance_id, scale, span_start)
COMMENT 'Sealed segments of series points; query with FINAL and deleted = 0';

CREATE TABLE IF NOT EXISTS series_archive_pages
(
  instance_id String COMMENT 'Series instance id',
  page_start UInt64 COMMENT 'Page start (ms, aligned to its width from the epoch)',
  page_end UInt64 COMMENT 'Page end (exclusive, ms)',
  storage_key String COMMENT 'Object key (series/<instance>/0/<page start>-<page end>.json)',
  point_count UInt32 COMMENT 'Raw points in the page',
  sha256 String COMMENT 'sha256 hex of the stored page bytes',
  version UInt64 COMMENT 'Newest fact seq of the page when written'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (instance_id, page_start)
COMMENT 'Raw-scale pages archived to the object store (their points left series_points); query with FINAL';
