-- Rewrites of served history: the events sink writes a row here after it writes events (or a
-- retraction) for a block at or below its chain's durable position, that is rows a reader may already
-- have served: a replay, a reprocessing run, a reorg deeper than CONFIRMATIONS. API processes that
-- keep the newest events in memory (EVENTS_TAIL_CACHE) reload them when a rewrite reaches them.
CREATE TABLE IF NOT EXISTS event_rewrites
(
  written_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the sink wrote the rewritten rows',
  from_id String COMMENT 'Lowest event id the rewrite may have touched (its oldest block''s time)',
  to_id String COMMENT 'Event ids below this bound may have been touched (its newest block''s time + 1 ms)',
  blocks UInt32 COMMENT 'Number of rewritten blocks (retractions included)',
  seq UInt64 COMMENT 'Newest message sequence of the rewritten blocks'
)
ENGINE = MergeTree
ORDER BY written_at
COMMENT 'Rewrites of already-visible events (replays, reprocessing, deep reorgs), for in-memory readers to notice';
