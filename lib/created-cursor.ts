/**
 * Lists ordered newest first by (created_at, uuid) (reindex jobs, webhooks): one page query and its opaque
 * cursor, base64url of the last row's pair. A cursor this API did not issue is a 400 naming `cursor`.
 */
import { badRequest } from "./errors.ts";
import type { Pg } from "./stores/postgres.ts";

export function encodeCreatedCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString("base64url");
}

export function decodeCreatedCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === "string" &&
      !Number.isNaN(Date.parse(v[0])) &&
      typeof v[1] === "string" &&
      /^[0-9a-f-]{36}$/.test(v[1])
    ) {
      return [v[0], v[1]];
    }
  } catch {
    // falls through to the 400
  }
  throw badRequest(`cursor ${JSON.stringify(cursor.slice(0, 80))} is not one this API issued`, {
    field: "cursor",
  });
}

export interface CreatedPageQuery<Row, Item> {
  /** The statement's name (metrics and logs). */
  name: string;
  table: string;
  columns: string;
  /** The uuid column that breaks ties of `created_at`. */
  idColumn: string;
  /** Filters, each with `$?` where its one value goes. */
  filters: [clause: string, value: string | number][];
  limit: number;
  cursor?: string | undefined;
  toItem: (row: Row) => Item;
  /** The item's `created_at` (ISO text) and id, for the next cursor. */
  key: (item: Item) => [string, string];
}

/** One page newest first after `cursor`, and the cursor of the next page (null on the last). */
export async function createdPage<Row, Item>(
  pg: Pg,
  q: CreatedPageQuery<Row, Item>,
): Promise<{ items: Item[]; next: string | null }> {
  const where: string[] = [];
  const params: (string | number)[] = [];
  for (const [clause, value] of q.filters) {
    params.push(value);
    where.push(clause.replace("$?", `$${params.length}`));
  }
  if (q.cursor) {
    const [at, id] = decodeCreatedCursor(q.cursor);
    params.push(at, id);
    where.push(`(created_at, ${q.idColumn}) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(q.limit + 1);
  const rows = await pg.query<Row>(
    q.name,
    `SELECT ${q.columns} FROM ${q.table} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, ${q.idColumn} DESC LIMIT $${params.length}`,
    params,
  );
  const items = rows.slice(0, q.limit).map(q.toItem);
  const last = items.at(-1);
  return { items, next: rows.length > q.limit && last ? encodeCreatedCursor(...q.key(last)) : null };
}
