/**
 * The code-hash guard's node check: the live code hash of each dapp contract with a decoder, read from the node's
 * contract state (`GET /contracts/{address}/state`, field `codeHash`: blake2b-256 of the bytecode, as an artifact's
 * `codeHash`). A block tells the normalizer of a migration only where the contract emits the new code (MyOnion's
 * MigrateApply); the node tells it of every other upgrade, and of the code of contracts deployed before the indexed
 * history or without a published artifact (its first answer becomes the expected hash: trust on first use).
 */
import type { CodeHashBook, LiveCode } from "./code-hashes.ts";

/** A contract's code hash as the node answers now; null when the node has no such contract (another network). */
export type CodeHashSource = (contractAddress: string) => Promise<string | null>;

export interface CodeCheckRound {
  /** Contracts without an expected hash, with the node's first answer (their expected hash from now on). */
  baselines: { contract_address: string; code_hash: string }[];
  /** Contracts whose code the node reports different from the code the book knows (live, else expected). */
  changes: LiveCode[];
  /** Counts by result: match, changed, baseline, absent. */
  counts: Record<"match" | "changed" | "baseline" | "absent", number>;
  /** Set when the node failed: the round stopped there, and what it read before stays valid. */
  error?: unknown;
}

/**
 * Reads each contract's code hash from the node, one at a time, and compares it with what `book` knows. A
 * change takes effect for blocks after `sinceTs` (the caller passes the check's time: every block published
 * before it keeps its decoding, so a replay gives the same events).
 */
export async function checkCodeHashes(
  contracts: Iterable<string>,
  book: CodeHashBook,
  source: CodeHashSource,
  sinceTs: number,
): Promise<CodeCheckRound> {
  const round: CodeCheckRound = {
    baselines: [],
    changes: [],
    counts: { match: 0, changed: 0, baseline: 0, absent: 0 },
  };
  for (const address of contracts) {
    let live: string | null;
    try {
      live = await source(address);
    } catch (error) {
      round.error = error;
      break;
    }
    if (live === null) {
      round.counts.absent++;
      continue;
    }
    const known = book.currentOf(address);
    if (known === undefined) {
      round.baselines.push({ contract_address: address, code_hash: live });
      round.counts.baseline++;
    } else if (known !== live) {
      round.changes.push({ contract_address: address, code_hash: live, since_ts: sinceTs, source: "node" });
      round.counts.changed++;
    } else round.counts.match++;
  }
  return round;
}

/**
 * What of a finished round still applies to `book` (blocks normalized meanwhile may have recorded the same
 * migration, another replica the same baseline).
 */
export function stillNew(round: CodeCheckRound, book: CodeHashBook): CodeCheckRound {
  return {
    ...round,
    baselines: round.baselines.filter((b) => book.currentOf(b.contract_address) === undefined),
    changes: round.changes.filter((c) => book.currentOf(c.contract_address) !== c.code_hash),
  };
}
