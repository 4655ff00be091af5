-- ZSTD for the hex columns of the holders' tables and of the series' block facts. Output keys and block hashes
-- are 64 hex characters of 32 random bytes: LZ4 (the default codec) has no entropy coding and kept them at about
-- half their size, ZSTD near the 32 bytes they hold. Over bench:pipeline's 4,000 devnet blocks (after merges):
-- holder_moves 10,476 KiB → 5,770, holder_outputs 6,903 → 3,854, holder_spends 4,770 → 2,350,
-- series_block_facts 4,719 → 2,743: 13 of the run's 48 MiB. These tables are written by every block and read by
-- the recomputes' ranges, not by API pages (the events' tables keep LZ4 on the columns pages read: ZSTD there cost
-- an address page 4 %, migration 0015). A codec change is metadata only: new parts are written with ZSTD, and
-- existing parts are recompressed as merges rewrite them.
ALTER TABLE holder_outputs
  MODIFY COLUMN key String CODEC(ZSTD(1)),
  MODIFY COLUMN address String CODEC(ZSTD(1)),
  MODIFY COLUMN block_hash String CODEC(ZSTD(1));

ALTER TABLE holder_spends
  MODIFY COLUMN key String CODEC(ZSTD(1)),
  MODIFY COLUMN block_hash String CODEC(ZSTD(1));

ALTER TABLE holder_moves
  MODIFY COLUMN key String CODEC(ZSTD(1)),
  MODIFY COLUMN block_hash String CODEC(ZSTD(1));

ALTER TABLE series_block_facts
  MODIFY COLUMN block_hash String CODEC(ZSTD(1));
