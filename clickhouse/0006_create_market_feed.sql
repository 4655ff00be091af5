-- Position of the market-events feed (the trade watcher): every market event with an id at or
-- below `position` is durably in `events`, and no later one can get such an id. While the feed is
-- active the poll watermark is min(the 16 chains, position); a paused feed (stopped cleanly, or
-- never started) does not hold the watermark.
CREATE TABLE IF NOT EXISTS market_feed_progress
(
  feed LowCardinality(String) COMMENT 'Feed name (trades)',
  position DateTime64(3, 'UTC') COMMENT 'Every market event id up to this time is written; later ids are assigned above it',
  active Bool COMMENT 'False once the watcher stopped cleanly: the watermark then ignores the feed',
  updated_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the watcher wrote this row',
  version UInt64 COMMENT 'Write sequence of the watcher: the newest row wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY feed
COMMENT 'Durable position of the trade watcher''s events feed (see lib/market/feed.ts)';
