-- The moments (token, block time) a holders pass is finishing: written before its zero crossings (holder_changes),
-- emptied after the facts and points of those moments are written from the stored crossings. A pass that dies in
-- between leaves them here, and the next pass (whatever blocks it holds) finishes them first, so the facts of a
-- dead pass are always taken back or confirmed by the stored crossings (lib/series/holders.ts). One row: the
-- holders processor has one writer at a time (its fenced lock).
CREATE TABLE IF NOT EXISTS holder_pending_moments
(
  slot UInt8 COMMENT 'Always 0: the one pending set',
  tokens Array(String) COMMENT 'Token ids of the pending moments (ALPH is 64 zeros)',
  times Array(UInt64) COMMENT 'Block times in ms of the pending moments, beside tokens',
  version UInt64 COMMENT 'Write clock of the holders pass (lib/series/writer.ts nextVersion); the newest set wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY slot
COMMENT 'The holders pass''s unfinished moments (empty after every completed pass); query with FINAL';
