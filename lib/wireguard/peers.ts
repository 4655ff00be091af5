/**
 * WireGuard peers (Postgres): a key owner's client tunnels, each with its public key and its own address in
 * WG_SUBNET. The private key is never stored. Addresses are allocated in a transaction that holds the
 * advisory lock `(8738, hashtext('wireguard_peers'))`, so concurrent creates, in one process or in
 * several API processes on one PostgreSQL, never pick the same address; the partial unique index on the
 * active peers' addresses is the last guard.
 */
import { randomUUID } from "node:crypto";
import { AppError, notFound } from "../errors.ts";
import { formatIpv4, parseIpv4, type Subnet } from "../net.ts";
import type { Pg } from "../stores/postgres.ts";

export interface WireGuardPeer {
  peer_id: string;
  user_id: string;
  name: string;
  public_key: string;
  /** The peer's tunnel address (its /32), e.g. `10.87.0.2`. */
  address: string;
  created_at: string;
  revoked_at: string | null;
}

export type PeerState = "active" | "revoked" | "all";

export interface WireGuardPeersRepo {
  /** Whether `userId` owns an API key that is not revoked. */
  ownerHasKey(userId: string): Promise<boolean>;
  /** Inserts a peer at the next free address of `subnet`; 409 `wireguard_subnet_full` when none is left. */
  create(input: { userId: string; name: string; publicKey: string; subnet: Subnet }): Promise<WireGuardPeer>;
  get(peerId: string): Promise<WireGuardPeer | null>;
  /** Newest first. */
  list(filter: {
    userId?: string;
    state: PeerState;
    limit: number;
    offset: number;
  }): Promise<{ peers: WireGuardPeer[]; total: number }>;
  /** Every active peer, by address (the server's [Peer] sections). */
  listActive(): Promise<WireGuardPeer[]>;
  /** Sets revoked_at (kept when already set); 404 for an unknown peer. */
  revoke(peerId: string): Promise<WireGuardPeer>;
}

const ISO = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const COLUMNS = `peer_id, user_id, name, public_key, host(address) AS address,
  ${ISO("created_at")} AS created_at, ${ISO("revoked_at")} AS revoked_at`;

const STATE_SQL: Record<PeerState, string> = {
  active: "revoked_at IS NULL",
  revoked: "revoked_at IS NOT NULL",
  all: "TRUE",
};

export function createWireGuardPeersRepo(pg: Pg): WireGuardPeersRepo {
  return {
    async ownerHasKey(userId) {
      const rows = await pg.query(
        "wg_owner",
        "SELECT 1 FROM api_keys WHERE user_id = $1 AND revoked_at IS NULL LIMIT 1",
        [userId],
      );
      return rows.length > 0;
    },

    async create({ userId, name, publicKey, subnet }) {
      const peerId = randomUUID();
      return pg.transaction(async (tx) => {
        // Held until commit: the next create (any process) reads this one's address.
        await tx.query("wg_lock", "SELECT pg_advisory_xact_lock(8738, hashtext('wireguard_peers'))");
        const first = formatIpv4(subnet.first);
        const last = formatIpv4(subnet.last);
        // New addresses first: after the highest one ever handed out (revoked peers count) ...
        const [top] = await tx.query<{ max: string | null }>(
          "wg_max_address",
          "SELECT host(max(address)) AS max FROM wireguard_peers WHERE address << $1::inet",
          [subnet.cidr],
        );
        const next = top?.max ? (parseIpv4(top.max) ?? subnet.last) + 1 : subnet.first;
        let address: string | null = next >= subnet.first && next <= subnet.last ? formatIpv4(next) : null;
        if (!address) {
          // ... then, once the subnet has been gone through, the lowest address no active peer holds.
          const [gap] = await tx.query<{ address: string }>(
            "wg_free_address",
            `SELECT host(c.a) AS address FROM (
               SELECT $1::inet AS a
               UNION ALL
               SELECT p.address + 1 FROM wireguard_peers p WHERE p.revoked_at IS NULL AND p.address << $3::inet
             ) c
             WHERE c.a >= $1::inet AND c.a <= $2::inet
               AND NOT EXISTS (SELECT 1 FROM wireguard_peers q WHERE q.revoked_at IS NULL AND q.address = c.a)
             ORDER BY c.a LIMIT 1`,
            [first, last, subnet.cidr],
          );
          address = gap?.address ?? null;
        }
        if (!address) {
          throw new AppError(
            "wireguard_subnet_full",
            `Every peer address of WG_SUBNET ${subnet.cidr} (${first} to ${last}) is held by an active peer; revoke a peer or configure a larger WG_SUBNET.`,
            { status: 409, details: { subnet: subnet.cidr, capacity: subnet.last - subnet.first + 1 } },
          );
        }
        const [row] = await tx.query<WireGuardPeer>(
          "wg_insert",
          `INSERT INTO wireguard_peers (peer_id, user_id, name, public_key, address)
           VALUES ($1, $2, $3, $4, $5::inet) RETURNING ${COLUMNS}`,
          [peerId, userId, name, publicKey, address],
        );
        return row as WireGuardPeer;
      });
    },

    async get(peerId) {
      const rows = await pg.query<WireGuardPeer>(
        "wg_get",
        `SELECT ${COLUMNS} FROM wireguard_peers WHERE peer_id = $1`,
        [peerId],
      );
      return rows[0] ?? null;
    },

    async list({ userId, state, limit, offset }) {
      const where = `${STATE_SQL[state]} AND ($1::text IS NULL OR user_id = $1)`;
      const [count] = await pg.query<{ n: string | number }>(
        "wg_count",
        `SELECT count(*) AS n FROM wireguard_peers WHERE ${where}`,
        [userId ?? null],
      );
      const peers = await pg.query<WireGuardPeer>(
        "wg_list",
        `SELECT ${COLUMNS} FROM wireguard_peers WHERE ${where}
         ORDER BY created_at DESC, peer_id DESC LIMIT $2 OFFSET $3`,
        [userId ?? null, limit, offset],
      );
      return { peers, total: Number(count?.n ?? 0) };
    },

    listActive: () =>
      pg.query<WireGuardPeer>(
        "wg_active",
        `SELECT ${COLUMNS} FROM wireguard_peers WHERE revoked_at IS NULL ORDER BY wireguard_peers.address`,
      ),

    async revoke(peerId) {
      const rows = await pg.query<WireGuardPeer>(
        "wg_revoke",
        `UPDATE wireguard_peers SET revoked_at = COALESCE(revoked_at, now()) WHERE peer_id = $1
         RETURNING ${COLUMNS}`,
        [peerId],
      );
      if (!rows[0]) throw notFound(`WireGuard peer ${peerId} not found`, { peer_id: peerId });
      return rows[0];
    },
  };
}
