/**
 * Held rounds of a recompute processor (RECOMPUTE_COALESCE_MS, embedded pipeline): while following the chain a
 * round holds a few blocks, and a recompute pass costs about the same whatever it holds, so small rounds are held and
 * recomputed together once the block span they cover reaches the window (or with a backfill-sized round, or on
 * shutdown, or after the window's length of wall time). The processor contract still holds: a held round is written
 * to PostgreSQL (`processor_held_batches`) before its delivery resolves (so the bus may move past it), and deleted
 * only after the recompute that took it in was written; a processor recomputes what it finds there when it starts.
 * Recomputes read the stored facts of the spans their messages name, so a pass over several rounds' messages writes
 * what the rounds' passes one by one would have.
 */
import type { Pg } from "../lib/stores/postgres.ts";

/** Block times (ms) a round covers: its oldest and its newest. */
export interface BlockSpan {
  lo: number;
  hi: number;
}

/** What to do with a round: recompute it alone, hold it, or recompute the held rounds with it now. */
export type HoldDecision = "run" | "hold" | "release";

export interface HoldPolicy {
  /** The decision for a round of this span, given what is held (nothing changes: `add` once the round is held). */
  decide(span: BlockSpan): HoldDecision;
  /** Counts a round as held. */
  add(span: BlockSpan): void;
  /** Rounds held since the last `clear`. */
  readonly held: number;
  /** Block span of the held rounds (null when none is held). */
  readonly span: BlockSpan | null;
  clear(): void;
}

/**
 * The holding rules for a window of `windowMs` (0: every round runs alone). A round whose own span reaches the window
 * (a backfill round) is never held, and takes the held rounds with it; a smaller round is held while the span from
 * the oldest held block to its newest stays under the window, and releases them all when it reaches it.
 */
export function createHoldPolicy(windowMs: number): HoldPolicy {
  let held = 0;
  let span: BlockSpan | null = null;
  const union = (round: BlockSpan): BlockSpan => ({
    lo: Math.min(span?.lo ?? round.lo, round.lo),
    hi: Math.max(span?.hi ?? round.hi, round.hi),
  });
  return {
    decide(round) {
      if (windowMs <= 0) return "run";
      if (round.hi - round.lo >= windowMs) return held > 0 ? "release" : "run";
      const all = union(round);
      return all.hi - all.lo >= windowMs ? "release" : "hold";
    },
    add(round) {
      span = union(round);
      held++;
    },
    get held() {
      return held;
    },
    get span() {
      return span;
    },
    clear() {
      held = 0;
      span = null;
    },
  };
}

/** A held round as stored: the bus's encoded values, decoded again when it is recomputed. */
export interface HeldBatchRow {
  id: number;
  values: Buffer[];
}

export async function saveHeldBatch(
  pg: Pg,
  group: string,
  span: BlockSpan,
  values: Buffer[],
): Promise<number> {
  const [row] = await pg.query<{ id: string }>(
    "processor_held_batch_save",
    `INSERT INTO processor_held_batches (consumer_group, span_lo, span_hi, messages, held_at)
     VALUES ($1, $2, $3, $4::jsonb, $5) RETURNING id`,
    [group, span.lo, span.hi, JSON.stringify(values.map((v) => v.toString("base64"))), Date.now()],
  );
  return Number(row?.id);
}

/** The group's held rounds, oldest first. */
export async function loadHeldBatches(pg: Pg, group: string): Promise<HeldBatchRow[]> {
  const rows = await pg.query<{ id: string; messages: string[] | string }>(
    "processor_held_batches_load",
    "SELECT id, messages FROM processor_held_batches WHERE consumer_group = $1 ORDER BY id",
    [group],
  );
  return rows.map((r) => {
    const list = (typeof r.messages === "string" ? JSON.parse(r.messages) : r.messages) as string[];
    return { id: Number(r.id), values: list.map((v) => Buffer.from(v, "base64")) };
  });
}

/** Deletes the group's held rounds up to `maxId` (those a written recompute took in). */
export async function deleteHeldBatches(pg: Pg, group: string, maxId: number): Promise<void> {
  await pg.query(
    "processor_held_batches_delete",
    "DELETE FROM processor_held_batches WHERE consumer_group = $1 AND id <= $2",
    [group, maxId],
  );
}

/** Held rounds of every group (for tests and the operator: what a start will recompute). */
export async function countHeldBatches(pg: Pg, group?: string): Promise<number> {
  const [row] = await pg.query<{ n: string }>(
    "processor_held_batches_count",
    group
      ? "SELECT count(*) AS n FROM processor_held_batches WHERE consumer_group = $1"
      : "SELECT count(*) AS n FROM processor_held_batches",
    group ? [group] : [],
  );
  return Number(row?.n ?? 0);
}
