/**
 * The code-hash guard's book: for each known dapp contract, the code hash its decoder's layout was read from
 * (the built-in list's artifact hash, or an operator's `decoder_contracts.code_hash`) and the live one a block
 * changed it to, with that block's time. The normalizer publishes a mismatched contract's events of later blocks
 * generic (`decode_error: "code_hash_changed"`), so a reprocess still decodes the history before the change;
 * `/status` lists the mismatches.
 */

/** A known contract whose live code is not the one its decoder's layout was read from. */
export interface CodeHashMismatch {
  expected: string;
  live: string;
}

/**
 * A contract's live code since a time (ms): the new code's hash, from a block that migrated it (the block's time)
 * or from the node's contract state at a check (`source: "node"`, the check's time).
 */
export interface LiveCode {
  contract_address: string;
  code_hash: string;
  since_ts: number;
  source?: "migration" | "node";
}

/**
 * Code hashes: the one each decoder's layout was read from (`expected`: the built-in list's artifact hashes, an
 * operator's `decoder_contracts.code_hash` first) and the live one where a block changed it (`live`).
 */
export interface CodeHashBook {
  /**
   * The mismatch of a contract for the events of a block at `blockTs` (ms): undefined when its code is the expected
   * one, either is unknown, or the block is not after the one that changed it.
   */
  mismatchOf(contractAddress: string, blockTs: number): CodeHashMismatch | undefined;
  /** The code hash a contract's decoder layout was read from, when known. */
  expectedOf(contractAddress: string): string | undefined;
  /** The code a contract runs as far as this book knows: its live code, else its expected one. */
  currentOf(contractAddress: string): string | undefined;
}

export interface MutableCodeHashBook extends CodeHashBook {
  /** Records changes in chain order: the last one of a contract is its live code. */
  add(changes: Iterable<LiveCode>): void;
  /** Adds expected hashes of contracts that have none yet (the node's first answer for a contract without one). */
  addExpected(rows: Iterable<{ contract_address: string; code_hash: string }>): void;
  /** Every contract whose live code differs from its expected one, now. */
  mismatches(): (CodeHashMismatch & LiveCode)[];
}

/** Expected hashes from rows (first row with a hash wins: operators' rows go first), live ones from changes. */
export function createCodeHashBook(
  expectedRows: Iterable<{ contract_address: string; code_hash?: string | null }>,
  live: Iterable<LiveCode> = [],
): MutableCodeHashBook {
  const expected = new Map<string, string>();
  const addExpected = (rows: Iterable<{ contract_address: string; code_hash?: string | null }>) => {
    for (const r of rows)
      if (r.code_hash && !expected.has(r.contract_address)) expected.set(r.contract_address, r.code_hash);
  };
  addExpected(expectedRows);
  const current = new Map<string, LiveCode>();
  const mismatchNow = (a: string): CodeHashMismatch | undefined => {
    const e = expected.get(a);
    const l = current.get(a);
    return e !== undefined && l !== undefined && e !== l.code_hash
      ? { expected: e, live: l.code_hash }
      : undefined;
  };
  const add = (changes: Iterable<LiveCode>) => {
    for (const c of changes) current.set(c.contract_address, c);
  };
  add(live);
  return {
    mismatchOf: (a, blockTs) => {
      const l = current.get(a);
      return l && blockTs > l.since_ts ? mismatchNow(a) : undefined;
    },
    expectedOf: (a) => expected.get(a),
    currentOf: (a) => current.get(a)?.code_hash ?? expected.get(a),
    add,
    addExpected,
    mismatches: () =>
      [...current.values()].flatMap((l) => {
        const m = mismatchNow(l.contract_address);
        return m ? [{ ...l, ...m }] : [];
      }),
  };
}
