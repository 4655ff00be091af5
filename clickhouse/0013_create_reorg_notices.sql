-- Reorg notices: the events sink writes a `chain` event (chain_index 17) into `events` when a reorg reaches
-- events readers may already have served (lib/events/notices.ts). Each notice is recorded here under its
-- message's stable key before its row is written to `events`, so a re-delivered message finds it and writes
-- the same notice with the same id again.
CREATE TABLE IF NOT EXISTS reorg_notices
(
  block_hash String COMMENT 'Hash of the retracted (or late) block the notice is about',
  seq UInt64 COMMENT 'Sequence of the block or retraction message that produced the notice',
  kind LowCardinality(String) COMMENT 'retraction or late_block (the notice event''s sub_kind)',
  chain_index UInt8 COMMENT 'Chain of the block (0..15)',
  notice_id String COMMENT 'Id of the notice event in events (chain index 17)',
  version UInt64 COMMENT 'ReplacingMergeTree version: the message seq (a replay writes the same row)'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (block_hash, seq, kind)
COMMENT 'Reorg notices given to pollers, by the message that produced them (replays reuse the recorded id)';
