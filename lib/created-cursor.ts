/**
 * The paging cursor of lists ordered newest first by (created_at, uuid) (reindex jobs, webhooks): opaque base64url
 * of the last row's pair; a cursor this API did not issue is a 400 naming `cursor`.
 */
import { badRequest } from "./errors.ts";

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
