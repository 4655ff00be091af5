-- The net move of each (token, address) per hour of block time: the sum of its main-chain moves in the hour, each
-- amount capped at 2^250 as the crossings sum them (lib/series/holders.ts). A holders pass recomputes the hours its
-- moves (and flips) touched from holder_moves, then reads a touched pair's opening balance as the sum of its hours
-- before the hour of its earliest change plus the moves since that hour's start. Before, the opening balance was a
-- range read of all the pair's moves, so a pool or an exchange wallet with millions of moves cost a scan of them at
-- every batch that moved it (docs/known-gaps.md, Series). The hour width is part of the stored rows: changing it
-- needs a migration that rebuilds this table.
CREATE TABLE IF NOT EXISTS holder_hour_sums
(
  token_id String COMMENT 'Token id, 64 hex; ALPH is 64 zeros',
  address String COMMENT 'Whose balance moves',
  hour UInt64 COMMENT 'Start of the hour of block time, ms (a multiple of 3,600,000)',
  net Int256 COMMENT 'Sum of the main-chain moves in the hour: + outputs, − spends, each capped at 2^250',
  version UInt64 COMMENT 'Write clock of the holders pass (lib/series/writer.ts nextVersion); the newest sum wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (token_id, address, hour)
COMMENT 'Net balance move per (token, address, hour), recomputed from holder_moves; query with FINAL';

-- The hours of the moves stored before this migration (version 0: any pass's recompute replaces them).
INSERT INTO holder_hour_sums (token_id, address, hour, net, version)
SELECT token_id, address, ts - ts % 3600000 AS hour,
  sumIf(if(kind = 'output', 1, -1) * toInt256(least(amount,
    toUInt256('1809251394333065553493296640760748560207343510400633813116524750123642650624'))), main_chain),
  0
FROM holder_moves FINAL
GROUP BY token_id, address, hour;
