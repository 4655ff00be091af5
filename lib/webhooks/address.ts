/**
 * Where a webhook may point: http(s) URLs whose host resolves only to public addresses. Every address the host
 * resolves to (`dns.lookup`, all of them) is checked; one loopback, private (RFC 1918, 100.64.0.0/10 shared, fc00::/7
 * unique local), link-local, unspecified, multicast or reserved address refuses the URL, unless it falls in a range an
 * operator allows (WEBHOOK_ALLOWED_CIDRS). IPv4-mapped IPv6 addresses are checked as the IPv4 address they carry.
 * Checked when a webhook is created and again before every delivery, which then connects to exactly the addresses
 * checked (no second lookup a DNS change could answer differently). NFT metadata fetches (lib/nfts/metadata.ts) use
 * the same policy with their own allow-list (NFT_METADATA_ALLOWED_CIDRS) and wording.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { AppError } from "../errors.ts";
import { clientAddress, parseIpRange } from "../net.ts";

/** Ranges refused by default, with the word the refusal uses. */
const REFUSED: readonly (readonly [string, string])[] = [
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "private (shared address space)"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.0.0.0/24", "reserved"],
  ["192.168.0.0/16", "private"],
  ["198.18.0.0/15", "reserved (benchmarking)"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"],
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["fc00::/7", "private (unique local)"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "reserved (site-local)"],
  ["ff00::/8", "multicast"],
];

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export interface AddressPolicy {
  /** Why an address is refused ("loopback", "private" …), or null when deliveries may go to it. */
  refusal(address: string): string | null;
  /**
   * The URL parsed, and every address its host resolves to; a refused scheme, host or address throws a 400 that
   * names `field` (`url`), or, at delivery time, an error whose message says why.
   */
  resolve(url: string, field?: string): Promise<{ url: URL; addresses: ResolvedAddress[] }>;
}

function rangeList(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const text of ranges) {
    const r = parseIpRange(text);
    if (typeof r === "string") throw new Error(r);
    list.addSubnet(r.network, r.prefix, r.family);
  }
  return list;
}

export interface AddressPolicyOptions {
  lookupTimeoutMs?: number;
  /** What goes to the URL, in a refusal's sentence (default `webhooks`). */
  subject?: string;
  /** The config key whose ranges are allowed, in a refusal's sentence (default `WEBHOOK_ALLOWED_CIDRS`). */
  allowKey?: string;
  /** The Problem code of a refusal (default `webhook_url_refused`). */
  code?: string;
}

export function createAddressPolicy(
  allowedCidrs: readonly string[],
  options: AddressPolicyOptions = {},
): AddressPolicy {
  const refused = REFUSED.map(([range, kind]) => ({ list: rangeList([range]), kind }));
  const allowed = rangeList(allowedCidrs);
  const timeoutMs = options.lookupTimeoutMs ?? 5_000;
  const subject = options.subject ?? "webhooks";
  const allowKey = options.allowKey ?? "WEBHOOK_ALLOWED_CIDRS";
  const code = options.code ?? "webhook_url_refused";
  const refusedUrl = (field: string, message: string, details: Record<string, unknown> = {}) =>
    new AppError(code, message, { status: 400, details: { field, ...details } });

  const refusal = (address: string): string | null => {
    const a = clientAddress(address);
    if (!a) return "not an IP address";
    if (allowed.check(a.address, a.family)) return null;
    for (const r of refused) if (r.list.check(a.address, a.family)) return r.kind;
    return null;
  };

  return {
    refusal,
    async resolve(text, field = "url") {
      let url: URL;
      try {
        url = new URL(text);
      } catch {
        throw refusedUrl(field, `${field} ${JSON.stringify(text.slice(0, 200))} is not an absolute URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        throw refusedUrl(field, `${field} must be an http:// or https:// URL, not ${url.protocol}`);
      }
      const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
      let addresses: ResolvedAddress[];
      if (isIP(host)) addresses = [{ address: host, family: isIP(host) as 4 | 6 }];
      else {
        let timer: NodeJS.Timeout | undefined;
        try {
          const found = await Promise.race([
            lookup(host, { all: true, verbatim: true }),
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
            }),
          ]);
          addresses = found.map((f) => ({ address: f.address, family: f.family as 4 | 6 }));
        } catch (error) {
          const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
          throw refusedUrl(field, `${field} host ${host} does not resolve (${why})`, { host });
        } finally {
          clearTimeout(timer);
        }
        if (addresses.length === 0)
          throw refusedUrl(field, `${field} host ${host} does not resolve`, { host });
      }
      for (const a of addresses) {
        const why = refusal(a.address);
        if (why) {
          throw refusedUrl(
            field,
            `${field} host ${host} resolves to ${a.address}, a ${why} address; ${subject} go to public addresses only (an operator allows ranges with ${allowKey})`,
            { host, address: a.address },
          );
        }
      }
      return { url, addresses };
    },
  };
}
