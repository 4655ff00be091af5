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

/** A stored label of one source. */
export interface AddressLabelRecord {
  address: string;
  label: string;
  icon: string | null;
  mapped_label: string;
  source: string;
  priority: number;
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
}

export interface AddressLabelsRepo {
  list(query: AddressLabelQuery): Promise<AddressLabelRecord[]>;
  /** Adds or replaces the label of (address, source). */
  upsert(input: AddressLabelInput): Promise<AddressLabelRecord>;
  /** Deletes the labels of an address (of one source, or of all); returns how many. */
  remove(address: string, source: string | null): Promise<number>;
  /** The primary label of each address that has one (lowest priority; a token symbol otherwise). */
  primary(addresses: readonly string[]): Promise<Record<string, AddressLabel>>;
  /** Moves whenever a statement could have changed a label (a trigger bumps it). */
  generation(): Promise<string>;
}

const RECORD = `address, label, icon, mapped_label, source, priority,
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;

export function createAddressLabelsRepo(pg: Pg): AddressLabelsRepo {
  return {
    async list(q) {
      const where: string[] = [];
      const params: (string | number | string[])[] = [];
      if (q.addresses) {
        params.push(q.addresses);
        where.push(`address = ANY($${params.length}::text[])`);
      }
      if (q.search) {
        params.push(`%${q.search.toLowerCase().replace(/[%_\\]/g, "\\$&")}%`);
        where.push(`lower(label) LIKE $${params.length}`);
      }
      if (q.source) {
        params.push(q.source);
        where.push(`source = $${params.length}`);
      }
      params.push(q.limit, q.offset);
      return pg.query<AddressLabelRecord>(
        "labels_list",
        `SELECT ${RECORD} FROM address_labels ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY address, priority, source LIMIT $${params.length - 1} OFFSET $${params.length}`,
        params,
      );
    },
    async upsert(b) {
      const [row] = await pg.query<AddressLabelRecord>(
        "labels_upsert",
        `INSERT INTO address_labels (address, source, label, icon, mapped_label, priority) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (address, source) DO UPDATE SET label = EXCLUDED.label, icon = EXCLUDED.icon,
           mapped_label = EXCLUDED.mapped_label, priority = EXCLUDED.priority, updated_at = now()
         RETURNING ${RECORD}`,
        [b.address, b.source, b.label, b.icon, b.mapped_label, b.priority],
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
