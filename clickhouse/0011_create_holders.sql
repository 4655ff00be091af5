-- Token holders (the `token-holders` series): the holders processor (pipeline/processors/holders.ts) keeps
-- every output and spend of the blocks topic, so the balance of any (token, address) at any time is the sum
-- of its main-chain outputs minus those spent by main-chain blocks before then. The moments a balance
-- crosses zero (a holder gained or lost) are kept per (token, address) and summed per token into the
-- series facts. Retractions flip main_chain with a newer version, like raw_blocks.
CREATE TABLE IF NOT EXISTS holder_outputs
(
  token_id String COMMENT 'Token id, 64 hex; ALPH is 64 zeros',
  address String COMMENT 'Owner of the output: an asset or contract address',
  key String COMMENT 'Output key (the outputRef.key spends name), hex',
  block_hash String COMMENT 'Block of the transaction that created the output',
  ts UInt64 COMMENT 'Block time in ms',
  amount UInt256 COMMENT 'Amount of the token in the output (smallest unit)',
  main_chain Bool COMMENT 'False once the block left the main chain',
  version UInt64 COMMENT 'ReplacingMergeTree version: the block message seq',
  INDEX idx_key key TYPE bloom_filter(0.001) GRANULARITY 1,
  INDEX idx_block block_hash TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (token_id, address, key, block_hash)
COMMENT 'Outputs per token and owner (ALPH and each token of an output are rows); query with FINAL and main_chain';

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
COMMENT 'Spent outputs by key and spending block; query with FINAL and main_chain';

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
