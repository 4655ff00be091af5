-- NFT metadata (issue 44): what a token URI or a collection URI answered, fetched off the request path by the job
-- worker (pipeline/jobs/nft-metadata.ts, lib/nfts/metadata.ts). One row per distinct URI, keyed by the SHA-256 of
-- the URI (a data: URI can be longer than a B-tree key may be). state: pending (not fetched yet), ok (the JSON's
-- name, description, image and attributes below), failed (an error, a timeout, not JSON, too large: retried at
-- next_try_at with exponential backoff), refused (a scheme or an address the fetcher refuses: tried again at the
-- longest backoff, in case an operator allows it). Times are Unix milliseconds.
CREATE TABLE IF NOT EXISTS nft_metadata (
  uri_sha256 text PRIMARY KEY,
  uri text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'ok', 'failed', 'refused')),
  name text,
  description text,
  image text,
  -- [{trait_key, value_text}] from the JSON's `attributes` (trait_type and value), in their order.
  attributes jsonb,
  error text,
  attempts integer NOT NULL DEFAULT 0,
  fetched_at bigint,
  next_try_at bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS nft_metadata_due_idx ON nft_metadata (next_try_at) WHERE next_try_at IS NOT NULL;

-- The URIs the registry already holds wait for their first fetch.
INSERT INTO nft_metadata (uri_sha256, uri, state, next_try_at, created_at, updated_at)
SELECT encode(sha256(convert_to(u.uri, 'UTF8')), 'hex'), u.uri, 'pending', 0,
  (extract(epoch FROM now()) * 1000)::bigint, (extract(epoch FROM now()) * 1000)::bigint
FROM (SELECT uri FROM nft_tokens WHERE uri IS NOT NULL UNION SELECT uri FROM nft_collections WHERE uri IS NOT NULL) u
ON CONFLICT (uri_sha256) DO NOTHING;
