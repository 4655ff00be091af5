/**
 * Address labels (Postgres `address_labels`, plus registered tokens' symbols as labels of their
 * contracts): every query on that table lives here, for the label routes and the events' label cache.
 */
import type { Pg } from "../stores/postgres.ts";

/** The label an event carries for one of its addresses. */
export interface AddressLabel {
  label: string;
  icon?: string;
  mapped_label: string;
  source: string;
}

/** What a label says about its address; `dapp`, `dapp_name` and `dapp_icon` are read from the dapp `dapp_id` names. */
export interface AddressLabelMetadata {
  type: string | null;
  name: string | null;
  state: string | null;
  dapp: string | null;
  dapp_id: string | null;
  dapp_name: string | null;
  dapp_icon: string | null;
}

/** The stored part of {@link AddressLabelMetadata}. */
export type AddressLabelMetadataInput = Partial<
  Pick<AddressLabelMetadata, "type" | "name" | "state" | "dapp_id">
>;

/** A stored label of one source. */
export interface AddressLabelRecord {
  address: string;
  label: string;
  icon: string | null;
  mapped_label: string;
  source: string;
  priority: number;
  /** Same as priority: lower first. */
  display_order: number;
  icon_hash: string | null;
  metadata: AddressLabelMetadata;
  created_at: string;
  updated_at: string;
}

export interface AddressLabelQuery {
  addresses?: string[];
  /** Case-insensitive substring of the label. */
  search?: string;
  source?: string;
  limit: number;
  offset: number;
}

export interface AddressLabelInput {
  address: string;
  source: string;
  label: string;
  icon: string | null;
  mapped_label: string;
  priority: number;
  icon_hash?: string | null;
  metadata?: AddressLabelMetadataInput;
}

export interface AddressLabelsRepo {
  list(query: AddressLabelQuery): Promise<AddressLabelRecord[]>;
  /**
   * Every label of one address, in display order: its stored labels, then a registered token's symbol (source
   * `token_registry`, display order 1000) when the address is that token's contract.
   */
  ofAddress(address: string): Promise<AddressLabelRecord[]>;
  /** Adds or replaces the label of (address, source). */
  upsert(input: AddressLabelInput): Promise<AddressLabelRecord>;
  /** Deletes the labels of an address (of one source, or of all); returns how many. */
  remove(address: string, source: string | null): Promise<number>;
  /** The primary label of each address that has one (lowest priority; a token symbol otherwise). */
  primary(addresses: readonly string[]): Promise<Record<string, AddressLabel>>;
  /** Moves whenever a statement could have changed a label (a trigger bumps it). */
  generation(): Promise<string>;
}

const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The record's columns over `l` (address_labels or the same columns) left-joined to its dapp `d`. */
const RECORD = `l.address, l.label, l.icon, l.mapped_label, l.source, l.priority, l.priority AS display_order,
  l.icon_hash, jsonb_build_object('type', l.metadata->>'type', 'name', l.metadata->>'name',
    'state', l.metadata->>'state', 'dapp', d.id, 'dapp_id', l.metadata->>'dapp_id', 'dapp_name', d.name,
    'dapp_icon', d.logo) AS metadata,
  ${ISO("l.created_at")} AS created_at, ${ISO("l.updated_at")} AS updated_at`;
const DAPP_JOIN = "LEFT JOIN dapps d ON d.id = l.metadata->>'dapp_id' AND NOT d.deleted";

export function createAddressLabelsRepo(pg: Pg): AddressLabelsRepo {
  return {
    async list(q) {
      const where: string[] = [];
      const params: (string | number | string[])[] = [];
      if (q.addresses) {
        params.push(q.addresses);
        where.push(`l.address = ANY($${params.length}::text[])`);
      }
      if (q.search) {
        params.push(`%${q.search.toLowerCase().replace(/[%_\\]/g, "\\$&")}%`);
        where.push(`lower(l.label) LIKE $${params.length}`);
      }
      if (q.source) {
        params.push(q.source);
        where.push(`l.source = $${params.length}`);
      }
      params.push(q.limit, q.offset);
      return pg.query<AddressLabelRecord>(
        "labels_list",
        `SELECT ${RECORD} FROM address_labels l ${DAPP_JOIN} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY l.address, l.priority, l.source LIMIT $${params.length - 1} OFFSET $${params.length}`,
        params,
      );
    },
    async ofAddress(address) {
      return pg.query<AddressLabelRecord>(
        "labels_of_address",
        `SELECT ${RECORD} FROM (
           SELECT address, label, icon, mapped_label, source, priority, icon_hash, metadata, created_at, updated_at
           FROM address_labels WHERE address = $1
           UNION ALL
           SELECT contract_address, symbol, logo_uri, COALESCE(name, symbol), 'token_registry', 1000, NULL,
             jsonb_build_object('type', 'token', 'name', name, 'dapp_id', dapp),
             to_timestamp(created_at / 1000.0), to_timestamp(updated_at / 1000.0)
           FROM tokens WHERE contract_address = $1 AND symbol IS NOT NULL AND NOT deleted AND registered
         ) AS l ${DAPP_JOIN} ORDER BY l.priority, l.source`,
        [address],
      );
    },
    async upsert(b) {
      const [row] = await pg.query<AddressLabelRecord>(
        "labels_upsert",
        `WITH l AS (
           INSERT INTO address_labels (address, source, label, icon, mapped_label, priority, icon_hash, metadata)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)
           ON CONFLICT (address, source) DO UPDATE SET label = EXCLUDED.label, icon = EXCLUDED.icon,
             mapped_label = EXCLUDED.mapped_label, priority = EXCLUDED.priority, icon_hash = EXCLUDED.icon_hash,
             metadata = EXCLUDED.metadata, updated_at = now()
           RETURNING *
         ) SELECT ${RECORD} FROM l ${DAPP_JOIN}`,
        [
          b.address,
          b.source,
          b.label,
          b.icon,
          b.mapped_label,
          b.priority,
          b.icon_hash ?? null,
          JSON.stringify(b.metadata ?? {}),
        ],
      );
      return row as AddressLabelRecord;
    },
    async remove(address, source) {
      const rows = await pg.query(
        "labels_delete",
        "DELETE FROM address_labels WHERE address = $1 AND ($2::text IS NULL OR source = $2) RETURNING address",
        [address, source],
      );
      return rows.length;
    },
    async primary(addresses) {
      const out: Record<string, AddressLabel> = {};
      if (addresses.length === 0) return out;
      const rows = await pg.query<{
        address: string;
        label: string;
        icon: string | null;
        mapped_label: string;
        source: string;
      }>(
        "labels_for_addresses",
        // Explicit labels first (by priority); a registered token's symbol labels its contract otherwise.
        `SELECT DISTINCT ON (address) address, label, icon, mapped_label, source FROM (
           SELECT address, label, icon, mapped_label, source, priority FROM address_labels WHERE address = ANY($1::text[])
           UNION ALL
           SELECT contract_address, symbol, logo_uri, COALESCE(name, symbol), 'token_registry', 1000
           FROM tokens WHERE contract_address = ANY($1::text[]) AND symbol IS NOT NULL AND NOT deleted AND registered
         ) AS l ORDER BY address, priority, source`,
        [[...addresses]],
      );
      for (const r of rows) {
        out[r.address] = {
          label: r.label,
          mapped_label: r.mapped_label,
          source: r.source,
          ...(r.icon ? { icon: r.icon } : {}),
        };
      }
      return out;
    },
    async generation() {
      const [row] = await pg.query<{ generation: string }>(
        "label_generation_read",
        "SELECT generation::text AS generation FROM label_generation",
      );
      return row?.generation ?? "";
    },
  };
}
