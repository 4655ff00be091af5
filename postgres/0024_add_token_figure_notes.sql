-- Why each null market figure of a token is null (lib/figures/compute.ts tokenFigures): an object from the figure's
-- API name (circulatingSupply, circulatingSupplyUsd, priceUsd, tvlUsd) to a reason code, written by the figures
-- processor with the figures, served as `unknownFigures` (docs/prices.md, Token market figures and TVL).
ALTER TABLE tokens ADD COLUMN IF NOT EXISTS figure_notes jsonb NOT NULL DEFAULT '{}'::jsonb;
