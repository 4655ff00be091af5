-- Token holders (the `token-holders` series): the holders processor (pipeline/processors/holders.ts) keeps
-- every output and spend of the blocks topic by output key, and the balance moves they make per
-- (token, address) in time order: + the amount of each output at its block's time, − the amount of each
-- spent output at the spending block's time. A balance at time t is the sum of a pair's main-chain moves up
-- to t; the moments it crosses zero (a holder gained or lost) are kept per (token, address) and summed per
-- token into the series facts. Retractions flip main_chain with a newer version, like raw_blocks.
CREATE TABLE IF NOT EXISTS holder_outputs
(
  key String COMMENT 'Output key (the outputRef.key spends name), hex',
  token_id String COMMENT 'Token id, 64 hex; ALPH is 64 zeros',
  address String COMMENT 'Owner of the output: an asset or contract address',
  amount UInt256 COMMENT 'Amount of the token in the output (smallest unit)',
  block_hash String COMMENT 'Block of the transaction that created the output',
  ts UInt64 COMMENT 'Block time in ms',
  main_chain Bool COMMENT 'False once the block left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the block message seq',
  INDEX idx_block block_hash TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (key, token_id, block_hash)
COMMENT 'Outputs by key, a row per token (ALPH included): who a spend takes from; query with FINAL';

CREATE TABLE IF NOT EXISTS holder_spends
(
  key String COMMENT 'Key of the spent output (asset inputs and contract inputs)',
  block_hash String COMMENT 'Block of the spending transaction',
  ts UInt64 COMMENT 'Block time in ms',
  main_chain Bool COMMENT 'False once the block left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the block message seq',
  INDEX idx_block block_hash TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (key, block_hash)
COMMENT 'Spent outputs by key and spending block (an output may arrive after its spend, from another chain); query with FINAL';

CREATE TABLE IF NOT EXISTS holder_moves
(
  token_id String COMMENT 'Token id, 64 hex; ALPH is 64 zeros',
  address String COMMENT 'Whose balance moves',
  ts UInt64 COMMENT 'Block time in ms of the output (kind output) or of the spend (kind spend)',
  key String COMMENT 'Output key',
  kind Enum8('output' = 1, 'spend' = 2) COMMENT 'output: + amount; spend: − amount',
  block_hash String COMMENT 'Block of the output (kind output) or of the spend (kind spend)',
  amount UInt256 COMMENT 'Amount of the token in the output (smallest unit)',
  main_chain Bool COMMENT 'False once block_hash left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the seq of the message that wrote or retracted block_hash',
  INDEX idx_block block_hash TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (token_id, address, ts, key, kind, block_hash)
COMMENT 'Balance moves per (token, address) in time order; query with FINAL and main_chain';

CREATE TABLE IF NOT EXISTS holder_changes
(
  token_id String COMMENT 'Token id, 64 hex; ALPH is 64 zeros',
  address String COMMENT 'The holder',
  ts UInt64 COMMENT 'Block time in ms of the balance change that crossed zero',
  change Int8 COMMENT '+1: the balance became positive (holder gained); -1: it became zero (holder lost); 0: no longer a crossing',
  version UInt64 COMMENT 'Write clock of the holders pass that computed it (lib/series/writer.ts nextVersion)',
  INDEX idx_address address TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (token_id, ts, address)
COMMENT 'Zero crossings of each (token, address) balance over the main chain; query with FINAL and change != 0';
