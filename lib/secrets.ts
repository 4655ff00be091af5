/**
 * The secrets API processes must share: configured (DAPP_CURSOR_SECRET, PORTAL_SESSION_SECRET) or, when
 * empty, generated once and kept in Postgres (`shared_secrets`, postgres/0028) so every replica on the
 * same database signs and checks with the same key. Without a database an empty secret is random per
 * process (nothing that needs it is served then: the dapp routes and the portal need the database).
 */
import { randomBytes } from "node:crypto";
import type { Pg } from "./stores/postgres.ts";

export type SharedSecretName = "dapp_cursor" | "portal_session";

export interface SharedSecrets {
  /** Reads (or creates) the secrets not configured; idempotent, called when the app is built. */
  load(): Promise<void>;
  /** A secret, once loaded. */
  get(name: SharedSecretName): string;
}

/** The stored secret `name`, created by the first caller (concurrent callers all read the winner's). */
export async function storedSecret(pg: Pg, name: SharedSecretName): Promise<string> {
  await pg.query(
    "shared_secret_create",
    "INSERT INTO shared_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
    [name, randomBytes(32).toString("base64url")],
  );
  const [row] = await pg.query<{ value: string }>(
    "shared_secret_read",
    "SELECT value FROM shared_secrets WHERE name = $1",
    [name],
  );
  if (!row) throw new Error(`shared secret ${name} vanished after its insert`);
  return row.value;
}

export function createSharedSecrets(
  pg: Pg | null,
  configured: Record<SharedSecretName, string>,
): SharedSecrets {
  const values = new Map<SharedSecretName, string>();
  let loading: Promise<void> | null = null;
  return {
    load() {
      loading ??= (async () => {
        for (const name of Object.keys(configured) as SharedSecretName[]) {
          const given = configured[name];
          values.set(
            name,
            given || (pg ? await storedSecret(pg, name) : randomBytes(32).toString("base64url")),
          );
        }
      })().catch((error) => {
        loading = null;
        throw error;
      });
      return loading;
    },
    get(name) {
      const value = values.get(name);
      if (value === undefined) throw new Error(`shared secret ${name} read before SharedSecrets.load()`);
      return value;
    },
  };
}
