/**
 * One process at a time: a PostgreSQL session advisory lock, named by a string (hashed into the second key
 * of `pg_try_advisory_lock(8738, hashtext(name))`), held by a connection of its own (not a pool slot) until
 * released or until that connection ends. With PGlite there is nothing to lock: the embedded stores belong
 * to one process (the data directory's lock refuses a second one).
 *
 * A lock can be lost without its holder knowing (its connection cut, the server ending the session): another
 * process then takes it while the first still runs. So every lock carries a fencing token: taking the lock
 * increments `processor_fences.token` for its name (in the lock's own session, while holding it) and the holder
 * keeps the new value; `check()` reads the stored token (through the pool, not the lock's connection) and fails
 * with `fenced` when another holder has taken a newer one (or at once when this holder saw its lock's session
 * end). A holder checks before each write, so a process that lost its lock cannot write after the new holder took
 * it over.
 *
 * The same name can also be held shared (`waitForSharedLock`): any number of processes at once (the replicas of a
 * group), which only keeps an exclusive holder (a command such as `series backfill`) apart, both ways.
 */
import pgLib from "pg";
import { AppError } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { sleep } from "../retry.ts";
import type { Ch } from "./clickhouse.ts";
import type { ObjectStore } from "./object-store.ts";
import type { Pg } from "./postgres.ts";

export interface SessionLock {
  /** The fencing token this holder took (0 on PGlite, where there is nothing to fence). */
  readonly token: number;
  /** Resolves while this holder's token is the newest one; throws `fenced` (not retryable) otherwise. */
  check(): Promise<void>;
  release(): Promise<void>;
}

const NOTHING: SessionLock = { token: 0, check: async () => undefined, release: async () => undefined };

/** The error of a write by a holder whose lock was taken over. */
export const fencedError = (name: string, token: number, current: number | null) =>
  new AppError(
    "fenced",
    `The lock ${name} was taken over (token ${current ?? "none"}, this process holds ${token}): write refused`,
    { details: { lock: name, token, current } },
  );

export const isFenced = (error: unknown) => error instanceof AppError && error.code === "fenced";

/**
 * A connection of its own for a lock, beside the pool (a lock held for a process's life would take a pool slot);
 * `lost()` says its session ended (cut, or ended by the server): the lock is gone, whoever takes it next.
 */
async function lockSession(pool: pgLib.Pool): Promise<{ client: pgLib.Client; lost: () => boolean }> {
  const client = new pgLib.Client(pool.options);
  let lost = false;
  client.on("error", () => {
    lost = true;
  });
  client.on("end", () => {
    lost = true;
  });
  await client.connect();
  return { client, lost: () => lost };
}

/** Tries once: the lock, or null when another session holds it. */
export async function tryLock(pg: Pg, name: string): Promise<SessionLock | null> {
  if (!pg.pool) return NOTHING;
  const { client, lost } = await lockSession(pg.pool);
  let token: number;
  try {
    const { rows } = await client.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_lock(8738, hashtext($1)) AS ok",
      [name],
    );
    if (!rows[0]?.ok) {
      await client.end();
      return null;
    }
    // Taken while holding the lock: no other holder can increment it at the same time.
    const fence = await client.query<{ token: string }>(
      `INSERT INTO processor_fences (name, token) VALUES ($1, 1)
       ON CONFLICT (name) DO UPDATE SET token = processor_fences.token + 1, taken_at = now()
       RETURNING token`,
      [name],
    );
    token = Number(fence.rows[0]?.token);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  let released = false;
  return {
    token,
    async check() {
      // Known lost: no write until the lock is taken again (with a new token).
      if (lost()) throw fencedError(name, token, null);
      const rows = await pg.query<{ token: string }>(
        "fence_check",
        "SELECT token FROM processor_fences WHERE name = $1",
        [name],
      );
      const current = rows[0] ? Number(rows[0].token) : null;
      if (released || current !== token) throw fencedError(name, token, current);
    },
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
      if (said) options.log.info({ lock: name, token: lock.token }, "Lock acquired; starting.");
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

/**
 * A shared hold of a lock name (`pg_try_advisory_lock_shared`, on a connection of its own): any number of processes
 * hold it at once, and `tryLock` of the same name (exclusive) fails while one does; waits (retrying every `pollMs`,
 * saying so once) while an exclusive holder has it. Null when `signal` aborts first. Its `check` fails with
 * `fenced` once the hold's session ended (no read: shared holders do not exclude each other, only the exclusive
 * one), so a holder that lost it stops writing and takes it again. Nothing to hold on PGlite.
 */
export async function waitForSharedLock(
  pg: Pg,
  name: string,
  options: { log: Logger; signal: AbortSignal; pollMs?: number },
): Promise<SessionLock | null> {
  if (!pg.pool) return NOTHING;
  for (let said = false; !options.signal.aborted; ) {
    const { client, lost } = await lockSession(pg.pool);
    let ok = false;
    try {
      const { rows } = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_lock_shared(8738, hashtext($1)) AS ok",
        [name],
      );
      ok = Boolean(rows[0]?.ok);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (ok) {
      if (said) options.log.info({ lock: name }, "Shared lock acquired; starting.");
      let released = false;
      return {
        token: 0,
        async check() {
          if (lost() || released) throw fencedError(name, 0, null);
        },
        async release() {
          if (released) return;
          released = true;
          await client.end().catch(() => undefined);
        },
      };
    }
    await client.end().catch(() => undefined);
    if (!said) {
      options.log.info(
        { lock: name },
        "A command holds this lock exclusively; waiting for it (standing by).",
      );
      said = true;
    }
    await sleep(options.pollMs ?? 2_000, options.signal);
  }
  return null;
}

/**
 * The ClickHouse handle of a lock holder: every write (`insert`, `command`) first checks the lock's fencing
 * token, so a holder whose lock was taken over fails its next write instead of overwriting the new holder's.
 * Reads are not checked. What stays open: a write already sent when the takeover happens (ClickHouse has no
 * conditional insert), at most one statement per replica.
 */
export function fencedClickHouse(ch: Ch, lock: SessionLock): Ch {
  return {
    get kind() {
      return ch.kind;
    },
    get database() {
      return ch.database;
    },
    query: (label, sql, params) => ch.query(label, sql, params),
    queryRaw: (label, sql, options) => ch.queryRaw(label, sql, options),
    async command(label, sql, params) {
      await lock.check();
      await ch.command(label, sql, params);
    },
    async insert(label, table, rows) {
      await lock.check();
      await ch.insert(label, table, rows);
    },
    close: () => ch.close(),
  };
}

/** The object store of a lock holder: `put` checks the fencing token first (reads are not checked). */
export function fencedObjectStore(objects: ObjectStore, check: () => Promise<void>): ObjectStore {
  return {
    kind: objects.kind,
    urlOf: (key) => objects.urlOf(key),
    get: (key) => objects.get(key),
    async put(key, body, contentType) {
      await check();
      await objects.put(key, body, contentType);
    },
    close: () => objects.close(),
  };
}
