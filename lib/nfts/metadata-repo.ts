/**
 * The NFT metadata cache (`nft_metadata`, postgres/0029): one row per distinct token or collection URI, keyed by the
 * URI's SHA-256. The registry enqueues a URI when it stores one ({@link enqueueNftMetadata}); the job worker claims
 * due rows (`next_try_at` passed; a claim pushes it past the fetch's lease, so another worker process skips the row
 * and a worker that dies mid-fetch leaves it due again later) and records each outcome: `ok` is kept (no refetch),
 * `failed` is tried again after NFT_METADATA_RETRY_BASE_S doubled per earlier attempt (at most
 * NFT_METADATA_RETRY_MAX_S), `refused` after NFT_METADATA_RETRY_MAX_S.
 */
import { createHash } from "node:crypto";
import type { PgQueryable } from "../stores/postgres.ts";
import { num } from "../tokens/repo-shared.ts";
import type { FetchOutcome, NftTrait } from "./metadata.ts";

export type NftMetadataState = "pending" | "ok" | "failed" | "refused";

export interface NftMetadataRow {
  uri: string;
  state: NftMetadataState;
  name: string | null;
  description: string | null;
  image: string | null;
  attributes: NftTrait[] | null;
  error: string | null;
  attempts: number;
  fetched_at: number | null;
  next_try_at: number | null;
}

export interface ClaimedUri {
  uri_sha256: string;
  uri: string;
  attempts: number;
}

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/** The key of a URI's row: SHA-256 of its UTF-8 bytes, hex (PostgreSQL: `encode(sha256(convert_to(uri, 'UTF8')), 'hex')`). */
export const uriKey = (uri: string): string => createHash("sha256").update(uri, "utf8").digest("hex");

/** Wait before the next fetch of a URI that failed `attempts` times (this one included): base·2^(attempts−1), capped. */
export function retryDelayMs(attempts: number, backoff: Backoff): number {
  const exp = Math.min(Math.max(attempts - 1, 0), 40);
  return Math.min(backoff.baseMs * 2 ** exp, backoff.maxMs);
}

/** Adds `pending` rows (due at once) for URIs without one; a URI already known keeps its row. */
export async function enqueueNftMetadata(
  pg: PgQueryable,
  uris: Iterable<string | null | undefined>,
): Promise<void> {
  const unique = [...new Set([...uris].filter((u): u is string => typeof u === "string" && u !== ""))];
  if (unique.length === 0) return;
  const t = Date.now();
  await pg.query(
    "nft_metadata_enqueue",
    `INSERT INTO nft_metadata (uri_sha256, uri, state, next_try_at, created_at, updated_at)
     SELECT x.k, x.u, 'pending', $2, $2, $2 FROM jsonb_to_recordset($1::jsonb) AS x(k text, u text)
     ON CONFLICT (uri_sha256) DO NOTHING`,
    [JSON.stringify(unique.map((u) => ({ k: uriKey(u), u }))), t],
  );
}

const toRow = (r: Record<string, unknown>): NftMetadataRow => ({
  uri: String(r.uri),
  state: r.state as NftMetadataState,
  name: (r.name as string | null) ?? null,
  description: (r.description as string | null) ?? null,
  image: (r.image as string | null) ?? null,
  attributes:
    typeof r.attributes === "string"
      ? (JSON.parse(r.attributes) as NftTrait[])
      : ((r.attributes as NftTrait[] | null) ?? null),
  error: (r.error as string | null) ?? null,
  attempts: Number(r.attempts ?? 0),
  fetched_at: num(r.fetched_at),
  next_try_at: num(r.next_try_at),
});

export interface NftMetadataRepo {
  /** The cached rows of these URIs, by URI (a URI without a row is absent). */
  get(uris: Iterable<string | null | undefined>): Promise<Map<string, NftMetadataRow>>;
  /** Claims up to `limit` due URIs, oldest due first, moving their `next_try_at` to `now + leaseMs`. */
  claimDue(limit: number, now: number, leaseMs: number): Promise<ClaimedUri[]>;
  /** Records a fetch's outcome for a claimed URI. */
  record(claimed: ClaimedUri, outcome: FetchOutcome, now: number, backoff: Backoff): Promise<void>;
  /** URIs due at `now` (pending or to retry). */
  dueCount(now: number): Promise<number>;
}

export function createNftMetadataRepo(pg: PgQueryable): NftMetadataRepo {
  return {
    async get(uris) {
      const unique = [...new Set([...uris].filter((u): u is string => typeof u === "string" && u !== ""))];
      const out = new Map<string, NftMetadataRow>();
      if (unique.length === 0) return out;
      const rows = await pg.query<Record<string, unknown>>(
        "nft_metadata_get",
        "SELECT * FROM nft_metadata WHERE uri_sha256 = ANY($1::text[])",
        [unique.map(uriKey)],
      );
      for (const r of rows) out.set(String(r.uri), toRow(r));
      return out;
    },

    async claimDue(limit, now, leaseMs) {
      const rows = await pg.query<{ uri_sha256: string; uri: string; attempts: unknown }>(
        "nft_metadata_claim",
        `UPDATE nft_metadata m SET next_try_at = $2 + $3, updated_at = $2
         WHERE m.uri_sha256 IN (
           SELECT uri_sha256 FROM nft_metadata WHERE next_try_at <= $2
           ORDER BY next_try_at, uri_sha256 LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING m.uri_sha256, m.uri, m.attempts`,
        [limit, now, leaseMs],
      );
      return rows.map((r) => ({ uri_sha256: r.uri_sha256, uri: r.uri, attempts: Number(r.attempts) }));
    },

    async record(claimed, outcome, now, backoff) {
      const attempts = claimed.attempts + 1;
      if (outcome.state === "ok") {
        const m = outcome.metadata;
        await pg.query(
          "nft_metadata_ok",
          `UPDATE nft_metadata SET state = 'ok', name = $2, description = $3, image = $4, attributes = $5::jsonb,
             error = NULL, attempts = $6, fetched_at = $7, next_try_at = NULL, updated_at = $7
           WHERE uri_sha256 = $1`,
          [claimed.uri_sha256, m.name, m.description, m.image, JSON.stringify(m.attributes), attempts, now],
        );
        return;
      }
      const wait = outcome.state === "refused" ? backoff.maxMs : retryDelayMs(attempts, backoff);
      await pg.query(
        "nft_metadata_not_ok",
        `UPDATE nft_metadata SET state = $2, error = $3, attempts = $4, fetched_at = $5, next_try_at = $6,
           updated_at = $5
         WHERE uri_sha256 = $1`,
        [claimed.uri_sha256, outcome.state, outcome.error.slice(0, 1_000), attempts, now, now + wait],
      );
    },

    async dueCount(now) {
      const rows = await pg.query<{ n: unknown }>(
        "nft_metadata_due",
        "SELECT count(*)::int AS n FROM nft_metadata WHERE next_try_at <= $1",
        [now],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
