/**
 * Reorg notices for filtered readers: a poller, stream or webhook that filters by dapp, address, token,
 * category or sub kind gets the notices about the events its filters match.
 *
 * A notice (lib/events/notices.ts) names the events of one block: `retracted_ids` (a retraction) or `added_ids`
 * and `events` (a late block). Its own fields (`dapp_id` `alephium`, category `chain`) match few filters, so:
 *
 * - **The rule.** A notice carries the filter fields of the events it names: it reaches a filtered poll page
 *   when one of those events matches the page's filters as that event itself would, and then names only those
 *   events, and only those at or below the page's `after_id`: the events this reader may have received (a
 *   retraction) or passed without receiving (a late block; the ones above its cursor come in its next pages as
 *   ordinary events). A notice that names none of them is not served to it. Unfiltered readers, and filters
 *   that select notices themselves (`category` with `chain`, `sub_kind` with `retraction` or `late_block`)
 *   and match their other fields, get them whole, as before. (A filter `dapp_id=alephium` matches a notice's
 *   own dapp by coincidence: it gets the notice narrowed to its `alephium` events.)
 * - **Order and once.** The notice keeps its id, so it comes in id order after the events it corrects and once
 *   (a page ends at its last id, the next starts above it); the same page is the same notice on every replay,
 *   restart or API process: it depends only on the stored rows, the filters and the cursor.
 * - **Where the named events' fields come from.** A late block's payload holds its events; a retraction's
 *   retracted rows stay in `events` (main_chain false), read once by block hash and id. Both are kept per
 *   notice id in memory (a notice never changes).
 *
 * A narrowed notice carries its payload inline (`payload_ref` null) whatever PAYLOAD_HYDRATION says: it is not
 * the stored payload.
 */
import type { EventFilters, EventsReader, HeldEvent } from "./reader.ts";
import { heldEvents, resolveVersions } from "./reader.ts";
import { matches } from "./tail.ts";

/** What filters look at of an event a notice names. */
type Dims = Pick<HeldEvent, "id" | "dapp_id" | "category" | "sub_kind" | "from" | "to" | "token_address">;

interface NoticeDoc {
  id: string;
  dapp_id: string;
  category: HeldEvent["category"];
  sub_kind: HeldEvent["sub_kind"];
  payload: { retracted_ids?: string[]; added_ids?: string[]; events?: unknown[]; block_hash?: string };
  payload_ref: string | null;
  [field: string]: unknown;
}

/** A notice with the events it names. */
export interface NoticeScope {
  /** The notice as stored, its payload merged back. */
  notice: NoticeDoc;
  /** The named events in payload order; a late block's with their served documents. */
  named: { dims: Dims; doc?: unknown }[];
}

const dimsOf = (e: Partial<Dims> & { id: string }): Dims => ({
  id: e.id,
  dapp_id: e.dapp_id ?? "",
  category: e.category ?? ("" as Dims["category"]),
  sub_kind: e.sub_kind ?? ("" as Dims["sub_kind"]),
  from: e.from ?? "",
  to: e.to ?? "",
  token_address: e.token_address ?? "",
});

/** Whether a read filters at all (an unfiltered read gets every notice whole). */
export const isFiltered = (f: EventFilters) =>
  Boolean(f.dapp_id || f.address || f.token_address || f.category?.length || f.sub_kind?.length);

/** Whether filters select reorg notices themselves (category `chain`, or their sub kinds): those get them whole. */
export const selectsNotices = (f: EventFilters) =>
  Boolean(f.category?.includes("chain") || f.sub_kind?.some((s) => s === "retraction" || s === "late_block"));

/**
 * The notice as a reader with these filters and this cursor (`afterId`; undefined: no cursor, a list page) gets
 * it: naming only the events of its filters at or below its cursor, or null when that is none (pure).
 */
export function narrowNotice(
  scope: NoticeScope,
  filters: EventFilters,
  afterId: string | undefined,
): HeldEvent | null {
  const { notice } = scope;
  const kept = scope.named.filter(
    (n) => matches(n.dims, filters) && (afterId === undefined || n.dims.id <= afterId),
  );
  if (kept.length === 0) return null;
  const ids = kept.map((n) => n.dims.id);
  const payload =
    notice.sub_kind === "retraction"
      ? { ...notice.payload, retracted_ids: ids }
      : { ...notice.payload, added_ids: ids, events: kept.map((n) => n.doc) };
  const doc = JSON.stringify({ ...notice, payload, payload_ref: null });
  return {
    id: notice.id,
    tx_id: "",
    dapp_id: notice.dapp_id,
    category: notice.category,
    sub_kind: notice.sub_kind,
    from: "",
    to: "",
    with: "",
    token_address: "",
    payload_ref: null,
    doc,
  };
}

export interface NoticeScopes {
  /** The notice's scope (cached per id). */
  get(notice: HeldEvent): Promise<NoticeScope>;
}

/** Most scopes kept in memory (a deep reorg gives one notice per block; older ones are read again when asked). */
const KEPT = 2_000;

export function createNoticeScopes(reader: EventsReader): NoticeScopes {
  const cache = new Map<string, Promise<NoticeScope>>();

  async function load(held: HeldEvent): Promise<NoticeScope> {
    const notice = JSON.parse(held.doc) as NoticeDoc;
    if (held.payload_ref) {
      const text = (await reader.payloads([held.payload_ref])).get(held.payload_ref);
      if (text === undefined)
        throw new Error(`reorg notice ${held.id}: payload ${held.payload_ref} is missing`);
      notice.payload = JSON.parse(text) as NoticeDoc["payload"];
    }
    const p = notice.payload;
    if (notice.sub_kind !== "retraction") {
      const events = (p.events ?? []) as (Partial<Dims> & { id: string })[];
      return { notice, named: events.map((e) => ({ dims: dimsOf(e), doc: e })) };
    }
    // The retracted rows: every version of these ids in the retracted block; each one's newest names its fields.
    const ids = p.retracted_ids ?? [];
    const rows = await reader.blockRows(p.block_hash ?? "", ids);
    const byId = new Map(heldEvents([...resolveVersions(rows).values()]).map((e) => [e.id, e]));
    return { notice, named: ids.map((id) => ({ dims: dimsOf(byId.get(id) ?? { id }) })) };
  }

  return {
    get(held) {
      let scope = cache.get(held.id);
      if (!scope) {
        scope = load(held);
        scope.catch(() => cache.delete(held.id));
        if (cache.size >= KEPT) cache.delete(cache.keys().next().value as string);
        cache.set(held.id, scope);
      }
      return scope;
    },
  };
}
