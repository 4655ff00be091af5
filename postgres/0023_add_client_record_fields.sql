-- Fields of the AlphScan explorer's records (docs/api.md, "Records of the explorer client"): a chain's icon and
-- Wormhole chain id, a dapp's short name, and a label's icon hash and metadata. All nullable or defaulted, so
-- rows written before keep their meaning.
ALTER TABLE chains ADD COLUMN IF NOT EXISTS icon text;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS wormhole_id integer;
-- Wormhole's chain ids: 13 Alephium, 2 Ethereum, 4 BNB Smart Chain; icons from the Alephium token list.
UPDATE chains SET wormhole_id = 13, icon = 'https://raw.githubusercontent.com/alephium/token-list/master/logos/ALPH.png'
  WHERE id = 8738 AND wormhole_id IS NULL AND icon IS NULL;
UPDATE chains SET wormhole_id = 2, icon = 'https://raw.githubusercontent.com/alephium/token-list/master/logos/WETH.png'
  WHERE id = 1 AND wormhole_id IS NULL AND icon IS NULL;
UPDATE chains SET wormhole_id = 4, icon = 'https://raw.githubusercontent.com/alephium/token-list/master/logos/WBNB.png'
  WHERE id = 56 AND wormhole_id IS NULL AND icon IS NULL;

-- A short display name; null serves the dapp's name.
ALTER TABLE dapps ADD COLUMN IF NOT EXISTS short_name text;

-- icon_hash: a hash of the icon's content given by whoever set the icon (a cache key for clients), null when unknown.
-- metadata: { type, name, state, dapp_id } given with the label (dapp, dapp_name, dapp_icon are read from dapps).
ALTER TABLE address_labels ADD COLUMN IF NOT EXISTS icon_hash text;
ALTER TABLE address_labels ADD COLUMN IF NOT EXISTS metadata jsonb NOT NULL DEFAULT '{}'::jsonb;
