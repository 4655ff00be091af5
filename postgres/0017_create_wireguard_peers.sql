-- WireGuard peers (README "WireGuard peers"): one row per client tunnel of a key's owner. The private key
-- is never stored: it is generated, written into the client's configuration and returned once.
-- address is the peer's own /32 inside WG_SUBNET, unique among the active (not revoked) peers.
CREATE TABLE IF NOT EXISTS wireguard_peers (
  peer_id text PRIMARY KEY,
  user_id text NOT NULL,
  name text NOT NULL,
  public_key text NOT NULL UNIQUE,
  address inet NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE UNIQUE INDEX IF NOT EXISTS wireguard_peers_active_address
  ON wireguard_peers (address) WHERE revoked_at IS NULL;

-- Highest address ever handed out (allocation goes on from it before reusing revoked addresses).
CREATE INDEX IF NOT EXISTS wireguard_peers_address ON wireguard_peers (address);

CREATE INDEX IF NOT EXISTS wireguard_peers_user ON wireguard_peers (user_id, created_at);

CREATE INDEX IF NOT EXISTS wireguard_peers_created ON wireguard_peers (created_at, peer_id);
