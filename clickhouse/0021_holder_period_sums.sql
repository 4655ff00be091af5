-- The net move of each (token, address) per period of 1,024 hours (about 43 days) of block time: the sum of its
-- hours (holder_hour_sums) in the period. A holders pass's opening balance was the sum of all of a pair's hours before
-- the hour of its earliest change: a miner's or an exchange's address, moved every hour and touched by every batch,
-- cost a read of every hour since its first (about 8,800 a year) at each batch, a read that grew with the chain's
-- history. It is now the sum of the pair's periods before that hour's period plus its hours from the period's start,
-- at most 1,023 hours, which the primary key reads from a constant bound (lib/series/holders.ts). A pass recomputes
-- the periods of the hours it touched from holder_hour_sums after writing them. The period width is part of the
-- stored rows: changing it needs a migration that rebuilds this table.
CREATE TABLE IF NOT EXISTS holder_period_sums
(
  token_id String COMMENT 'Token id, 64 hex; ALPH is 64 zeros',
  address String COMMENT 'Whose balance moves',
  period UInt64 COMMENT 'Start of the period of 1,024 hours of block time, ms (a multiple of 3,686,400,000)',
  net Int256 COMMENT 'Sum of holder_hour_sums.net over the period''s hours (main-chain moves, each capped at 2^250)',
  version UInt64 COMMENT 'Write clock of the holders pass (lib/series/writer.ts nextVersion); the newest sum wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (token_id, address, period)
COMMENT 'Net balance move per (token, address, 1,024-hour period), recomputed from holder_hour_sums; query with FINAL';

INSERT INTO holder_period_sums (token_id, address, period, net, version)
SELECT token_id, address, hour - hour % 3686400000 AS period, sum(net), 0
FROM holder_hour_sums FINAL
GROUP BY token_id, address, period;
