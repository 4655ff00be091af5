-- ALPH's supply as the figures processor last put it together (lib/figures/alph-supply.ts): one row, the
-- figures with the source of each, served by GET /token/alph/supply.
CREATE TABLE IF NOT EXISTS alph_supply (
  id smallint PRIMARY KEY CHECK (id = 1),
  figures jsonb NOT NULL,
  updated_at bigint NOT NULL
);

-- Where the pipeline stands (lib/pipeline-progress.ts), served from memory by /status and /metrics:
-- ingest's phase and what it still has to publish (one row), and the newest block each processor handled.
CREATE TABLE IF NOT EXISTS ingest_progress (
  id smallint PRIMARY KEY CHECK (id = 1),
  phase text NOT NULL CHECK (phase IN ('backfill', 'live')),
  start_ts bigint NOT NULL,
  cursor_ts bigint NOT NULL,
  published_ts bigint NOT NULL,
  tip_ts bigint NOT NULL,
  blocks_to_go bigint,
  blocks_per_s double precision,
  updated_at bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS processor_progress (
  processor text PRIMARY KEY,
  block_ts bigint NOT NULL,
  updated_at bigint NOT NULL
);
