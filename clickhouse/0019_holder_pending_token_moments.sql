-- The moments (token, block time) a holders-recompute pass is finishing, one row per token: written before its zero
-- crossings (holder_changes), emptied after the facts and points of those moments are written from the stored
-- crossings. A pass that dies in between leaves them here, and the next pass that touches the token (the replay of
-- its batch does: the holders-touched topic is keyed by token, so the token's partition is handed again to
-- whichever replica owns it) finishes them first (lib/series/holders.ts). Per token, because replicas of
-- holders-recompute each own the tokens of their partitions; holder_pending_moments (0017) was one set for the one
-- holders writer.
CREATE TABLE IF NOT EXISTS holder_pending_token_moments
(
  token_id String COMMENT 'Token id, 64 hex; ALPH is 64 zeros',
  times Array(UInt64) COMMENT 'Block times in ms of the token''s pending moments; empty once finished',
  version UInt64 COMMENT 'Write clock of the pass (lib/series/writer.ts nextVersion); the newest set wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY token_id
COMMENT 'Unfinished moments per token of the holders-recompute passes; query with FINAL';

-- What a pass of the single holders writer left unfinished before this migration, per token (the next pass that
-- touches the token finishes it).
INSERT INTO holder_pending_token_moments (token_id, times, version)
SELECT p.1 AS token_id, groupArray(p.2) AS times, any(version) AS version
FROM (SELECT arrayJoin(arrayZip(tokens, times)) AS p, version FROM holder_pending_moments FINAL WHERE slot = 0)
GROUP BY token_id;
