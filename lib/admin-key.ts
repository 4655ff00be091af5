/**
 * The first admin key. A deployment with no active admin key creates one when its API starts, prints
 * it once on stderr and saves it to `DATA_DIR/<stage>/admin-key` (mode 0600), so the operator can
 * call the admin routes (and create more keys through `POST /system/keys`) while the process runs;
 * `keys create` from the shell needs the stores to itself.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Config } from "./config.ts";
import { createKeysRepo } from "./keys/repo.ts";
import type { Logger } from "./logger.ts";
import type { Pg } from "./stores/postgres.ts";

export function adminKeyPath(config: Pick<Config, "DATA_DIR" | "STAGE">): string {
  return join(config.DATA_DIR, config.STAGE, "admin-key");
}

/** Creates the first admin key when there is no active one; returns the file it was saved to, or null. */
export async function ensureAdminKey(
  pg: Pg,
  config: Pick<Config, "DATA_DIR" | "STAGE">,
  log: Logger,
  stderr: NodeJS.WritableStream = process.stderr,
): Promise<string | null> {
  const path = adminKeyPath(config);
  const created = await pg.transaction(async (tx) => {
    // One creator when several API processes start on one PostgreSQL at once.
    await tx.query("admin_key_lock", "SELECT pg_advisory_xact_lock(8738001)");
    const active = await tx.query<{ n: number }>(
      "admin_key_count",
      `SELECT count(*)::int AS n FROM api_keys
       WHERE level = 'admin' AND revoked_at IS NULL AND (valid_until IS NULL OR valid_until > now())`,
    );
    if ((active[0]?.n ?? 0) > 0) return null;
    return createKeysRepo(tx).createKey({
      userId: "admin",
      planId: "enterprise",
      level: "admin",
      validUntil: null,
    });
  });
  if (!created) return null;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${created.key}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  stderr.write(
    `\nNo admin key existed: created one for user "admin" (shown once; only its hash is stored):\n\n  ${created.key}\n\nIt is also saved in ${path} (mode 0600). Use it in both X-API-Key and Authorization: Bearer.\n\n`,
  );
  log.info({ key_id: created.keyId, file: path }, "First admin key created.");
  return path;
}
