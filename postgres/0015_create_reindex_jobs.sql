-- Reindex jobs (issue 23): what an admin asked to reprocess and how far it got. The queue itself is pg-boss's
-- (schema `pgboss`, created by pg-boss at start); this table is the jobs' own state, progress and resume point,
-- read by GET /system/jobs. A queue message claims its `chunk` only while the row is on it; each claim increments
-- `attempts`, the fencing token every later write of that handler checks, so a stale or duplicate worker cannot write.
CREATE TABLE IF NOT EXISTS reindex_jobs (
  job_id uuid PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
  from_ts bigint NOT NULL,
  to_ts bigint NOT NULL,
  dapp_id text,
  contract_address text,
  blocks_total bigint,
  blocks_done bigint NOT NULL DEFAULT 0,
  cursor_ts bigint,
  cursor_chain integer,
  cursor_height bigint,
  chunk integer NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  error text,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX IF NOT EXISTS reindex_jobs_created_idx ON reindex_jobs (created_at DESC, job_id DESC);
CREATE INDEX IF NOT EXISTS reindex_jobs_open_idx ON reindex_jobs (state) WHERE state IN ('queued', 'running');
