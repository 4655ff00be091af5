/**
 * `nextKey`: the opaque cursor of the dapp groups' lists. It carries the list it belongs to (route and a hash of
 * its filters), the snapshot it pages through (the events ceiling of its first page, so events that arrive
 * meanwhile neither shift nor repeat rows) and the sort key of the last row served; it is signed (HMAC-SHA256),
 * so a forged or edited cursor, one of another list, or one older than its time to live is refused with a 400
 * naming `nextKey`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { AppError } from "../errors.ts";

/** A sort key: the values of the last row's sort columns, in order (strings, or integers as strings). */
export type SortKey = readonly string[];

export interface CursorState {
  /** Events ceiling (an id bound, exclusive) of the snapshot the list pages through. */
  ceiling: string;
  /** Sort key of the last row served. */
  after: SortKey;
}

export interface Cursors {
  /** The cursor of the page after the one ending at `after`. */
  sign(list: string, filters: unknown, state: CursorState): string;
  /** The state of a cursor given with `list` and `filters`; throws a 400 naming `nextKey` when it is not one. */
  open(list: string, filters: unknown, nextKey: string): CursorState;
}

export interface CursorOptions {
  /** HMAC key; a random one per process when empty (cursors then do not outlive a restart). */
  /** The HMAC key, read at each use (shared by the API processes: lib/secrets.ts). */
  secret: () => string;
  /** How long a cursor is accepted (ms). */
  ttlMs: number;
  now?: () => number;
}

interface Signed {
  /** List (route) id. */
  l: string;
  /** Hash of the list's filters. */
  f: string;
  c: string;
  a: SortKey;
  /** Issued at (ms). */
  t: number;
}

const invalid = (reason: string) =>
  new AppError("invalid_cursor", `nextKey is not a cursor of this list: ${reason}`, {
    status: 400,
    details: { field: "nextKey", reason },
  });

/** A canonical hash of the filters (keys sorted, undefined dropped), so the same query gives the same hash. */
function filtersHash(filters: unknown): string {
  const canon = (v: unknown): unknown =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, x]) => x !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1))
            .map(([k, x]) => [k, canon(x)]),
        )
      : v;
  return createHmac("sha256", "filters")
    .update(JSON.stringify(canon(filters)))
    .digest("base64url")
    .slice(0, 16);
}

export function createCursors(options: CursorOptions): Cursors {
  const now = options.now ?? Date.now;
  const mac = (body: string) =>
    createHmac("sha256", Buffer.from(options.secret(), "utf8")).update(body).digest().subarray(0, 18);
  return {
    sign(list, filters, state) {
      const signed: Signed = { l: list, f: filtersHash(filters), c: state.ceiling, a: state.after, t: now() };
      const body = Buffer.from(JSON.stringify(signed)).toString("base64url");
      return `${body}.${mac(body).toString("base64url")}`;
    },
    open(list, filters, nextKey) {
      const [body, sig, extra] = nextKey.split(".");
      if (!body || !sig || extra !== undefined) throw invalid("malformed");
      const expected = mac(body);
      const given = Buffer.from(sig, "base64url");
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw invalid("bad signature");
      let signed: Signed;
      try {
        signed = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Signed;
      } catch {
        throw invalid("malformed");
      }
      if (signed.l !== list) throw invalid(`it belongs to another list (${signed.l})`);
      if (signed.f !== filtersHash(filters)) throw invalid("it was issued for other filters");
      if (!(now() - signed.t <= options.ttlMs)) throw invalid("expired, start again from the first page");
      return { ceiling: signed.c, after: signed.a };
    },
  };
}
