-- Elexium-style pools: the stable flag their factory's creation event announced (null when the factory has
-- none), kept so a restarted normalizer labels the pool's swaps and liquidity events as before.
ALTER TABLE dex_pools ADD COLUMN IF NOT EXISTS stable boolean;
