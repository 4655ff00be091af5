-- Code-hash guard (issue 42): the code hash an operator's decoder row was read from (registering a contract's new
-- layout after an upgrade), and the live code hash the normalizer learned from a block that migrated a contract
-- (a MyOnion MigrateApply carries the new bytecode). A known contract whose live hash differs from its expected one
-- has its events published generic with decode_error "code_hash_changed".
ALTER TABLE decoder_contracts ADD COLUMN IF NOT EXISTS code_hash text;
ALTER TABLE normalize_contract_dapps ADD COLUMN IF NOT EXISTS code_hash text;
-- The time (ms) of the block that migrated it: a reprocess still decodes the events of earlier blocks.
ALTER TABLE normalize_contract_dapps ADD COLUMN IF NOT EXISTS code_since_ts bigint;
