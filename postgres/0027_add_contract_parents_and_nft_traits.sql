-- The AlphScan client's contract and NFT records (issue 44): the contract that created each contract (its
-- ContractCreated system event's parent; null for a contract deployed by a script or seen before this column), so
-- a contract's children can be listed, and an NFT's traits (the token URI's attributes, [{trait_key, value_text}])
-- with a collection's collection URI state.
ALTER TABLE contracts ADD COLUMN IF NOT EXISTS parent_address text;
CREATE INDEX IF NOT EXISTS contracts_parent_idx ON contracts (parent_address, address) WHERE parent_address IS NOT NULL;
ALTER TABLE nft_tokens ADD COLUMN IF NOT EXISTS traits jsonb;
