/**
 * IP addresses, CIDR ranges and lists, IPv4 subnets and `host:port` endpoints: the one place that parses them, for
 * the config's validators, IP bans, webhook address policies and WireGuard.
 *
 * Ranges (`parseIpRange`) are parsed into bytes, masked to their network and written in one canonical form
 * (`203.0.113.0/24`, `2001:db8::/32`; a single address is /32 or /128), so that one range has one stored value.
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) is treated as the IPv4 address it carries, both in a range and in a client
 * address. Matching is done by `net.BlockList` (lib/bans/guard.ts, lib/webhooks/address.ts), never by string
 * prefixes.
 */
import { isIP, isIPv4, isIPv6 } from "node:net";

export type IpFamily = "ipv4" | "ipv6";

export interface IpRange {
  family: IpFamily;
  /** The network address, canonical (host bits cleared). */
  network: string;
  prefix: number;
  /** `network/prefix`, the stored value. */
  value: string;
}

function v4Bytes(address: string): number[] {
  return address.split(".").map(Number);
}

function v6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  let tail: number[] = [];
  // An embedded IPv4 tail (`::ffff:1.2.3.4`, `64:ff9b::192.0.2.1`) is two groups.
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    tail = v4Bytes(text.slice(lastColon + 1));
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const groups = (s: string) => (s === "" ? [] : s.split(":").map((g) => Number.parseInt(g, 16)));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const all = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function formatV6(bytes: number[]): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // RFC 5952: the longest run of two or more zero groups (the first on a tie) becomes `::`.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}

const isMapped = (b: number[]) => b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

function mask(bytes: number[], prefix: number): number[] {
  return bytes.map((b, i) => {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    return b & ((0xff << (8 - bits)) & 0xff);
  });
}

/**
 * Parses `address` or `address/prefix` into its canonical range, or returns a message saying what is
 * wrong. Host bits are cleared (`203.0.113.7/24` is `203.0.113.0/24`); an IPv4-mapped IPv6 range of
 * prefix 96 or more is the IPv4 range it maps.
 */
export function parseIpRange(text: string): IpRange | string {
  const trimmed = text.trim();
  const slash = trimmed.indexOf("/");
  const address = slash < 0 ? trimmed : trimmed.slice(0, slash);
  const prefixText = slash < 0 ? null : trimmed.slice(slash + 1);
  let family: IpFamily;
  if (isIPv4(address)) family = "ipv4";
  else if (isIPv6(address) && !address.includes("%")) family = "ipv6";
  else return `${JSON.stringify(text)} is not an IPv4 or IPv6 address or CIDR range`;
  const max = family === "ipv4" ? 32 : 128;
  if (prefixText !== null && !/^\d{1,3}$/.test(prefixText)) {
    return `${JSON.stringify(text)} has a bad prefix length (0-${max} after the /)`;
  }
  let prefix = prefixText === null ? max : Number(prefixText);
  if (prefix > max) return `${JSON.stringify(text)} has a prefix length past ${max}`;
  let bytes = family === "ipv4" ? v4Bytes(address) : v6Bytes(address);
  if (family === "ipv6" && isMapped(bytes) && prefix >= 96) {
    family = "ipv4";
    bytes = bytes.slice(12);
    prefix -= 96;
  }
  const net = mask(bytes, prefix);
  const network = family === "ipv4" ? net.join(".") : formatV6(net);
  return { family, network, prefix, value: `${network}/${prefix}` };
}

/** A client address as matched: its family, with an IPv4-mapped IPv6 address turned into IPv4. */
export function clientAddress(ip: string): { address: string; family: IpFamily } | null {
  if (isIPv4(ip)) return { address: ip, family: "ipv4" };
  if (!isIPv6(ip)) return null;
  const bytes = v6Bytes(ip.split("%")[0]!);
  if (isMapped(bytes)) return { address: bytes.slice(12).join("."), family: "ipv4" };
  return { address: ip.split("%")[0]!, family: "ipv6" };
}

/** An address or a CIDR range `parseIpRange` accepts (an item of `WEBHOOK_ALLOWED_CIDRS`). */
export function isIpRange(item: string): boolean {
  return typeof parseIpRange(item) !== "string";
}

/** A CIDR with a prefix, IPv4 or IPv6 (an item of `WG_ALLOWED_IPS`). */
export function isCidr(item: string): boolean {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(item);
  if (!match) return false;
  const family = isIP(match[1] ?? "");
  const prefix = Number(match[2]);
  return family !== 0 && prefix <= (family === 4 ? 32 : 128);
}

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `host:port` with a host name, an IPv4 address or a bracketed IPv6 address, and a port from 1 to 65535. */
export function isEndpoint(text: string): boolean {
  if (text === "") return true;
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(text);
  if (!match) return false;
  const host = match[1] ?? "";
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return false;
  return host.startsWith("[") ? isIPv6(host.slice(1, -1)) : isIPv4(host) || HOSTNAME.test(host);
}

/** An IPv4 address in dotted form → unsigned 32-bit integer; null when it is not one. */
export function parseIpv4(text: string): number | null {
  if (!isIPv4(text)) return null;
  return text.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

export function formatIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
}

export interface Subnet {
  /** Normalized `network/prefix` (host bits cleared). */
  cidr: string;
  prefix: number;
  network: number;
  /** The server's interface address: the first host address. */
  server: number;
  /** The first and last address a peer may get (the broadcast address is never handed out). */
  first: number;
  last: number;
}

/** Parses an IPv4 CIDR with a prefix from /8 to /30 (host bits are cleared); null when it is not one. */
export function parseSubnet(text: string): Subnet | null {
  const match = /^([0-9.]+)\/(\d{1,2})$/.exec(text.trim());
  if (!match) return null;
  const address = parseIpv4(match[1] ?? "");
  const prefix = Number(match[2]);
  if (address === null || prefix < 8 || prefix > 30) return null;
  const size = 2 ** (32 - prefix);
  const network = address - (address % size);
  return {
    cidr: `${formatIpv4(network)}/${prefix}`,
    prefix,
    network,
    server: network + 1,
    first: network + 2,
    last: network + size - 2,
  };
}

export const isPeerSubnet = (text: string): boolean => parseSubnet(text) !== null;
