-- Fencing of processors that keep a lock (issue 22): each time a replica takes a processor's advisory lock it
-- increments that lock's token here and keeps the new value; before every write it checks that the stored token is
-- still its own. A replica whose lock was lost (its lock connection ended) and taken by another sees a newer token
-- and fails its write instead of overwriting the new holder's state.
CREATE TABLE processor_fences (
  name text PRIMARY KEY,
  token bigint NOT NULL,
  taken_at timestamptz NOT NULL DEFAULT now()
);
