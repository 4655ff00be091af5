-- Raw blocks as the node served them: lets a new decoder reprocess history without the node.
CREATE TABLE IF NOT EXISTS raw_blocks
(
  chain_index UInt8 COMMENT 'Alephium chain index = fromGroup * 4 + toGroup',
  height UInt32 COMMENT 'Height on its chain',
  hash String COMMENT 'Block hash (64 hex)',
  timestamp DateTime64(3, 'UTC') COMMENT 'Block timestamp',
  main_chain Bool COMMENT 'False once the block left the main chain',
  tx_count UInt32 DEFAULT JSONLength(block_json, 'transactions') COMMENT 'Number of transactions (coinbase included)',
  event_count UInt32 DEFAULT JSONLength(events_json) COMMENT 'Number of contract events (system events included)',
  block_json String COMMENT 'The node BlockEntry JSON, verbatim' CODEC(ZSTD(3)),
  events_json String COMMENT 'The node ContractEventByBlockHash[] JSON, verbatim' CODEC(ZSTD(3)),
  version UInt64 COMMENT 'Publish sequence of the message; the newest statement about a block wins'
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (chain_index, height, hash)
COMMENT 'Every block ingest published (main chain and retracted), for reprocessing';

-- Durable position of the events sink per chain, written after the events it describes.
CREATE TABLE IF NOT EXISTS chain_progress
(
  chain_index UInt8 COMMENT 'Alephium chain index',
  height UInt32 COMMENT 'Highest block height whose events are durably written',
  block_hash String COMMENT 'Hash of that block',
  block_ts DateTime64(3, 'UTC') COMMENT 'Timestamp of that block; the minimum over the 16 chains is the poll watermark',
  updated_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'When the sink wrote this position',
  version UInt64 COMMENT 'Block timestamp in ms: the newest position wins'
)
ENGINE = ReplacingMergeTree(version)
ORDER BY chain_index
COMMENT 'Per-chain durable position of the events sink; events are served up to the low watermark';
