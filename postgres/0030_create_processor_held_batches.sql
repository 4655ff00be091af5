-- Rounds a recompute processor holds (issue 45, RECOMPUTE_COALESCE_MS; pipeline/held-batches.ts): on the embedded
-- pipeline, series-recompute and holders-recompute recompute small rounds together once their block span reaches
-- the window. A held round is written here before its delivery resolves (so the bus may move past it) and deleted
-- once the recompute that took it in has been written; a processor recomputes what it finds here when it starts,
-- so a process killed while holding loses nothing. messages: the round's messages as the bus carried them (base64
-- of each encoded value). span_lo/span_hi: the block times the round covers (ms).
CREATE TABLE IF NOT EXISTS processor_held_batches (
  id bigserial PRIMARY KEY,
  consumer_group text NOT NULL,
  span_lo bigint NOT NULL,
  span_hi bigint NOT NULL,
  messages jsonb NOT NULL,
  held_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS processor_held_batches_group_idx ON processor_held_batches (consumer_group, id);
