-- Series rows are versioned by the series processor's write clock (lib/series/writer.ts): wall-clock
-- ms × 1e6, one more per write, never below a version already stored. A recompute reads everything
-- stored before it, so its rows must win; versions derived from the facts' seqs did not always (over
-- Kafka a retraction can carry a smaller seq than another chain's block in the same bucket).
ALTER TABLE series_points MODIFY COLUMN version UInt64 COMMENT 'Write clock of the recompute that wrote the point (lib/series/writer.ts)';
ALTER TABLE series_instances MODIFY COLUMN version UInt64 COMMENT 'Write clock of the recompute that wrote the row';
ALTER TABLE series_segments MODIFY COLUMN version UInt64 COMMENT 'Write clock of the recompute that wrote the row';
ALTER TABLE series_archive_pages MODIFY COLUMN version UInt64 COMMENT 'Write clock of the archive write that stored the page';
