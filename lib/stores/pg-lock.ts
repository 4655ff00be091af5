/**
 * One process at a time: a PostgreSQL session advisory lock, named by a string (hashed into the second key
 * of `pg_try_advisory_lock(8738, hashtext(name))`), held by a connection of its own (not a pool slot) until
 * released or until that connection ends. With PGlite there is nothing to lock: the embedded stores belong
 * to one process (the data directory's lock refuses a second one).
 */
import pgLib from "pg";
import type { Logger } from "../logger.ts";
import { sleep } from "../retry.ts";
import type { Pg } from "./postgres.ts";

export interface SessionLock {
  release(): Promise<void>;
}

const NOTHING: SessionLock = { release: async () => undefined };

/** Tries once: the lock, or null when another session holds it. */
export async function tryLock(pg: Pg, name: string): Promise<SessionLock | null> {
  if (!pg.pool) return NOTHING;
  // A connection of its own, beside the pool (a lock held for a process's life would take a pool slot).
  const client = new pgLib.Client(pg.pool.options);
  client.on("error", () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_lock(8738, hashtext($1)) AS ok",
      [name],
    );
    if (!rows[0]?.ok) {
      await client.end();
      return null;
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      // Ending the session releases its advisory locks.
      await client.end().catch(() => undefined);
    },
  };
}

/** Waits for the lock (retrying every `pollMs`, saying so once); null when `signal` aborts first. */
export async function waitForLock(
  pg: Pg,
  name: string,
  options: { log: Logger; signal: AbortSignal; pollMs?: number },
): Promise<SessionLock | null> {
  for (let said = false; !options.signal.aborted; ) {
    const lock = await tryLock(pg, name);
    if (lock) {
      if (said) options.log.info({ lock: name }, "Lock acquired; starting.");
      return lock;
    }
    if (!said) {
      options.log.info({ lock: name }, "Another process holds this lock; waiting for it (standing by).");
      said = true;
    }
    await sleep(options.pollMs ?? 2_000, options.signal);
  }
  return null;
}
