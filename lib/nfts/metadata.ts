/**
 * NFT metadata: fetching a token URI or a collection URI and reading its JSON (`name`, `description`, `image`,
 * `attributes`), as the job worker does (pipeline/jobs/nft-metadata.ts); a route never waits on it.
 *
 * - `data:` URIs are decoded here (base64 or percent-encoded), nothing is fetched;
 * - `ipfs://<cid>/<path>` (and `ipfs://ipfs/<cid>`) is fetched as `<gateway><cid>/<path>` (NFT_METADATA_IPFS_GATEWAY);
 * - `http(s)://` is fetched with the webhooks' address policy (lib/webhooks/address.ts): every address the host
 *   resolves to must be public unless NFT_METADATA_ALLOWED_CIDRS allows it, the connection goes to exactly the
 *   addresses checked, and every redirect (at most NFT_METADATA_MAX_REDIRECTS) is checked again;
 * - the whole fetch, redirects included, has NFT_METADATA_TIMEOUT_MS; a body over NFT_METADATA_MAX_BYTES is cut off
 *   and the fetch failed; the answer must be a JSON object (an HTML, image or other media type is refused unread).
 * Outcomes: `ok` with the parsed metadata, `refused` (a scheme or an address the policy refuses: no request was
 * made), `failed` (anything else, with the reason).
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { type AddressPolicy, createAddressPolicy } from "../webhooks/address.ts";
import { pinned } from "../webhooks/deliver.ts";

export interface NftTrait {
  trait_key: string;
  value_text: string;
}

export interface NftMetadata {
  name: string | null;
  description: string | null;
  /** As the document writes it (ipfs:// included); {@link displayImage} maps it for showing. */
  image: string | null;
  attributes: NftTrait[];
}

export type FetchOutcome =
  | { state: "ok"; metadata: NftMetadata }
  | { state: "failed"; error: string }
  | { state: "refused"; error: string };

export interface FetcherOptions {
  /** `https://ipfs.io/ipfs/`: ends with `/`. */
  gateway: string;
  timeoutMs: number;
  maxBytes: number;
  maxRedirects: number;
  /** Address ranges allowed although private, loopback, link-local or reserved. */
  allowedCidrs: readonly string[];
}

export interface NftMetadataFetcher {
  fetch(uri: string): Promise<FetchOutcome>;
}

/** Lengths kept of the document's strings (longer ones are cut). */
const MAX_NAME = 500;
const MAX_DESCRIPTION = 10_000;
const MAX_IMAGE = 100_000;
const MAX_ATTRIBUTES = 100;
const MAX_TRAIT = 500;

/** Media types accepted as a JSON document (gateways often serve JSON as text/plain or octet-stream). */
const JSON_TYPES = /^(application\/(json|[\w.+-]+\+json|octet-stream)|text\/(plain|json))$/i;

/** The config keys' values as fetcher options. */
export function fetcherOptions(config: {
  NFT_METADATA_IPFS_GATEWAY: string;
  NFT_METADATA_TIMEOUT_MS: number;
  NFT_METADATA_MAX_BYTES: number;
  NFT_METADATA_MAX_REDIRECTS: number;
  NFT_METADATA_ALLOWED_CIDRS: readonly string[];
}): FetcherOptions {
  return {
    gateway: config.NFT_METADATA_IPFS_GATEWAY,
    timeoutMs: config.NFT_METADATA_TIMEOUT_MS,
    maxBytes: config.NFT_METADATA_MAX_BYTES,
    maxRedirects: config.NFT_METADATA_MAX_REDIRECTS,
    allowedCidrs: config.NFT_METADATA_ALLOWED_CIDRS,
  };
}

/** `ipfs://<cid>/<path>` (or `ipfs://ipfs/<cid>/<path>`) through the gateway; null when `uri` is not ipfs://. */
export function ipfsToGateway(uri: string, gateway: string): string | null {
  const m = /^ipfs:\/\/(?:ipfs\/)?(.+)$/i.exec(uri.trim());
  if (!m) return null;
  return `${gateway}${m[1]!.replace(/^\/+/, "")}`;
}

/**
 * An image as a page may show it: http(s) as is, ipfs:// through the gateway, a `data:image/…` URI as is; anything
 * else (javascript:, a relative path, another scheme) null.
 */
export function displayImage(image: string | null | undefined, gateway: string): string | null {
  if (!image) return null;
  const text = image.trim();
  if (/^https?:\/\//i.test(text)) return text;
  if (/^data:image\//i.test(text)) return text;
  return ipfsToGateway(text, gateway);
}

const cut = (value: unknown, max: number): string | null => {
  if (typeof value === "string") return value.length > max ? value.slice(0, max) : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return null;
};

/** The fields an NFT page shows, read from a metadata document (anything else in it is ignored). */
export function parseMetadata(doc: unknown): NftMetadata | string {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    return "the document is not a JSON object";
  const d = doc as Record<string, unknown>;
  const attributes: NftTrait[] = [];
  if (Array.isArray(d.attributes)) {
    for (const a of d.attributes.slice(0, MAX_ATTRIBUTES)) {
      if (typeof a !== "object" || a === null) continue;
      const t = a as Record<string, unknown>;
      const key = cut(t.trait_type ?? t.key ?? t.name, MAX_TRAIT);
      const value = cut(t.value, MAX_TRAIT);
      if (key !== null && value !== null) attributes.push({ trait_key: key, value_text: value });
    }
  }
  return {
    name: cut(d.name, MAX_NAME),
    description: cut(d.description, MAX_DESCRIPTION),
    image: typeof d.image === "string" ? cut(d.image, MAX_IMAGE) : cut(d.image_url, MAX_IMAGE),
    attributes,
  };
}

const stripNul = (text: string) => text.replaceAll("\u0000", "");

function parseJsonText(text: string): FetchOutcome {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { state: "failed", error: "not JSON" };
  }
  const parsed = parseMetadata(doc);
  if (typeof parsed === "string") return { state: "failed", error: parsed };
  // PostgreSQL text holds no NUL character.
  const clean = (s: string | null) => (s === null ? null : stripNul(s));
  return {
    state: "ok",
    metadata: {
      name: clean(parsed.name),
      description: clean(parsed.description),
      image: clean(parsed.image),
      attributes: parsed.attributes.map((a) => ({
        trait_key: stripNul(a.trait_key),
        value_text: stripNul(a.value_text),
      })),
    },
  };
}

/** A `data:` URI's JSON: `data:[<media type>][;base64],<data>`, the media type JSON or text (or none). */
export function decodeDataUri(uri: string, maxBytes: number): FetchOutcome {
  const comma = uri.indexOf(",");
  if (!/^data:/i.test(uri) || comma < 0) return { state: "failed", error: "malformed data: URI" };
  const params = uri.slice(5, comma).split(";");
  const base64 = params.at(-1)?.toLowerCase() === "base64";
  const mediaType = (params[0] ?? "").trim();
  if (mediaType !== "" && !mediaType.includes("=") && !JSON_TYPES.test(mediaType))
    return { state: "failed", error: `not JSON (media type ${mediaType.slice(0, 100)})` };
  const data = uri.slice(comma + 1);
  let bytes: Buffer;
  try {
    bytes = base64 ? Buffer.from(data, "base64") : Buffer.from(decodeURIComponent(data), "utf8");
  } catch {
    return { state: "failed", error: "malformed data: URI (bad percent-encoding)" };
  }
  if (bytes.length > maxBytes) return { state: "failed", error: `too large: over ${maxBytes} bytes` };
  return parseJsonText(bytes.toString("utf8"));
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

interface Hop {
  status: number;
  location?: string;
  body?: Buffer;
  contentType?: string;
}

export function createNftMetadataFetcher(
  options: FetcherOptions,
  deps: { policy?: AddressPolicy } = {},
): NftMetadataFetcher {
  const policy =
    deps.policy ??
    createAddressPolicy(options.allowedCidrs, {
      lookupTimeoutMs: Math.min(5_000, options.timeoutMs),
      subject: "NFT metadata fetches",
      allowKey: "NFT_METADATA_ALLOWED_CIDRS",
      code: "nft_metadata_refused",
    });

  /** One GET to the checked addresses; the body is read only for a 2xx JSON answer, up to the byte limit. */
  const get = (
    target: Awaited<ReturnType<AddressPolicy["resolve"]>>,
    signal: AbortSignal,
  ): Promise<Hop | string> =>
    new Promise((resolve) => {
      const send = target.url.protocol === "https:" ? httpsRequest : httpRequest;
      let settled = false;
      const finish = (result: Hop | string) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      };
      const r = send(
        target.url,
        {
          method: "GET",
          // A connection of its own, to exactly the addresses checked (no pooled socket of an earlier fetch).
          agent: false,
          lookup: pinned(target.addresses),
          headers: { accept: "application/json", "user-agent": "alephium-indexer-nft-metadata/1" },
        },
        (res: IncomingMessage) => {
          const status = res.statusCode ?? 0;
          const contentType = (res.headers["content-type"] ?? "").split(";")[0]!.trim();
          if (REDIRECTS.has(status)) {
            res.resume();
            return finish({ status, ...(res.headers.location ? { location: res.headers.location } : {}) });
          }
          if (status < 200 || status >= 300) {
            res.resume();
            return finish(`HTTP ${status}`);
          }
          if (contentType !== "" && !JSON_TYPES.test(contentType)) {
            res.destroy();
            return finish(`not JSON (content-type ${contentType.slice(0, 100)})`);
          }
          const declared = Number(res.headers["content-length"] ?? Number.NaN);
          if (declared > options.maxBytes) {
            res.destroy();
            return finish(`too large: ${declared} bytes, over ${options.maxBytes}`);
          }
          const chunks: Buffer[] = [];
          let read = 0;
          res.on("data", (chunk: Buffer) => {
            read += chunk.length;
            if (read > options.maxBytes) {
              res.destroy();
              finish(`too large: over ${options.maxBytes} bytes`);
              return;
            }
            chunks.push(chunk);
          });
          res.on("end", () => finish({ status, body: Buffer.concat(chunks), contentType }));
          res.on("error", (error) =>
            finish(`${(error as NodeJS.ErrnoException).code ?? "error"}: ${error.message}`),
          );
          res.on("close", () => finish("connection closed before the body ended"));
        },
      );
      const onAbort = () => {
        finish(`timeout: no complete answer within ${options.timeoutMs} ms`);
        r.destroy();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort);
      r.on("error", (error: NodeJS.ErrnoException) =>
        finish(`${error.code ?? "error"}: ${error.message}`.slice(0, 500)),
      );
      r.end();
    });

  const fetchHttp = async (first: string): Promise<FetchOutcome> => {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    try {
      let url = first;
      for (let hop = 0; ; hop++) {
        let target: Awaited<ReturnType<AddressPolicy["resolve"]>>;
        try {
          target = await policy.resolve(url, hop === 0 ? "uri" : "redirect");
        } catch (error) {
          const message = (error as Error).message.slice(0, 500);
          // A host that does not resolve (now) is a failure to retry; a scheme or an address is a refusal.
          return / does not resolve/.test(message)
            ? { state: "failed", error: message }
            : { state: "refused", error: message };
        }
        if (controller.signal.aborted)
          return { state: "failed", error: `timeout: no complete answer within ${options.timeoutMs} ms` };
        const answer = await get(target, controller.signal);
        if (typeof answer === "string") return { state: "failed", error: answer };
        if (answer.body) return parseJsonText(answer.body.toString("utf8"));
        if (!answer.location) return { state: "failed", error: `HTTP ${answer.status} without a Location` };
        if (hop >= options.maxRedirects)
          return { state: "failed", error: `more than ${options.maxRedirects} redirects` };
        url = new URL(answer.location, target.url).toString();
      }
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    async fetch(uri) {
      const text = uri.trim();
      if (/^data:/i.test(text)) return decodeDataUri(text, options.maxBytes);
      const viaGateway = ipfsToGateway(text, options.gateway);
      if (viaGateway) return fetchHttp(viaGateway);
      if (/^https?:\/\//i.test(text)) return fetchHttp(text);
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1];
      return {
        state: "refused",
        error: scheme ? `${scheme}: URIs are not fetched` : "not an absolute URI",
      };
    },
  };
}
