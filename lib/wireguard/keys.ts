/**
 * WireGuard without the kernel: X25519 key pairs from Node's crypto, peers' addresses in the subnet (lib/net.ts), and the
 * `wg-quick` texts the API hands out (a client's configuration, the server's [Peer] sections for
 * `wg syncconf`). Pure functions; the peers themselves live in Postgres (lib/wireguard/peers.ts).
 */
import { generateKeyPairSync } from "node:crypto";
import { type Config, WG_KEY_SOURCE } from "../config.ts";
import { formatIpv4, parseSubnet, type Subnet } from "../net.ts";

/** A WireGuard key as `wg` prints it: standard base64 of 32 bytes (the last character before `=` has 2 zero bits). */
export const WG_KEY = new RegExp(`^${WG_KEY_SOURCE}$`);

/** A new X25519 key pair as WireGuard writes keys (standard base64 of the raw 32 bytes). */
export function generateKeyPair(): { privateKey: string; publicKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync("x25519");
  const d = Buffer.from(String(privateKey.export({ format: "jwk" }).d), "base64url");
  // Clamped as `wg genkey` writes it; X25519 clamps the scalar anyway, so the public key is unchanged.
  d[0] = (d[0] ?? 0) & 248;
  d[31] = ((d[31] ?? 0) & 127) | 64;
  return {
    privateKey: d.toString("base64"),
    publicKey: Buffer.from(String(publicKey.export({ format: "jwk" }).x), "base64url").toString("base64"),
  };
}

/** What the server's configuration gives the texts; `missing` names the config keys peer creation needs. */
export interface WireGuardSettings {
  serverPublicKey: string;
  endpoint: string;
  subnet: Subnet;
  dns: string[];
  allowedIps: string[];
  keepalive: number;
  missing: string[];
}

export function wireguardSettings(config: Config): WireGuardSettings {
  // loadConfig validated WG_SUBNET; the fallback only serves a hand-built Config.
  const subnet = parseSubnet(config.WG_SUBNET) ?? (parseSubnet("10.87.0.0/24") as Subnet);
  const missing = [
    ...(config.WG_SERVER_PUBLIC_KEY ? [] : ["WG_SERVER_PUBLIC_KEY"]),
    ...(config.WG_ENDPOINT ? [] : ["WG_ENDPOINT"]),
  ];
  return {
    serverPublicKey: config.WG_SERVER_PUBLIC_KEY,
    endpoint: config.WG_ENDPOINT,
    subnet,
    dns: config.WG_DNS,
    allowedIps: config.WG_ALLOWED_IPS.length > 0 ? config.WG_ALLOWED_IPS : [subnet.cidr],
    keepalive: config.WG_PERSISTENT_KEEPALIVE,
    missing,
  };
}

/** A value written into a `#` comment: one line, no control characters. */
const comment = (text: string): string => text.replace(/[\p{Cc}\u2028\u2029]/gu, "?");

export interface PeerForText {
  peer_id: string;
  user_id: string;
  name: string;
  public_key: string;
  address: string;
  created_at: string;
}

/** The client's `wg-quick` configuration (`/etc/wireguard/<name>.conf`, or imported into a WireGuard app). */
export function renderClientConfig(peer: PeerForText, privateKey: string, s: WireGuardSettings): string {
  return [
    `# WireGuard peer ${peer.peer_id} "${comment(peer.name)}" of ${comment(peer.user_id)}, created ${peer.created_at}`,
    "[Interface]",
    `PrivateKey = ${privateKey}`,
    `Address = ${peer.address}/32`,
    ...(s.dns.length > 0 ? [`DNS = ${s.dns.join(", ")}`] : []),
    "",
    "[Peer]",
    `PublicKey = ${s.serverPublicKey}`,
    `Endpoint = ${s.endpoint}`,
    `AllowedIPs = ${s.allowedIps.join(", ")}`,
    ...(s.keepalive > 0 ? [`PersistentKeepalive = ${s.keepalive}`] : []),
    "",
  ].join("\n");
}

/**
 * The server's [Peer] sections, one per active peer (each allowed its own /32), after a comment header.
 * Appended to an [Interface]-only configuration, `wg syncconf` applies them (docs/wireguard.md).
 */
export function renderServerPeers(peers: PeerForText[], s: WireGuardSettings, now = new Date()): string {
  const head = [
    `# Active WireGuard peers: ${peers.length}, as of ${now.toISOString()}.`,
    `# The server's [Interface] holds Address = ${formatIpv4(s.subnet.server)}/${s.subnet.prefix}; apply with`,
    "#   wg syncconf wg0 <(wg-quick strip wg0; cat this-file)",
    "",
  ];
  const sections = peers.flatMap((p) => [
    "[Peer]",
    `# ${p.peer_id} "${comment(p.name)}" of ${comment(p.user_id)}, created ${p.created_at}`,
    `PublicKey = ${p.public_key}`,
    `AllowedIPs = ${p.address}/32`,
    "",
  ]);
  return [...head, ...sections].join("\n");
}
