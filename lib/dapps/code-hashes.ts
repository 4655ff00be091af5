/**
 * The code-hash guard's registry: for each known dapp contract, the code hash its decoder's layout was read from
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

/** A contract's live code since a block: the new code's hash and that block's time (ms). */
export interface LiveCode {
  contract_address: string;
  code_hash: string;
  since_ts: number;
}

/**
 * Code hashes: the one each decoder's layout was read from (`expected`: the built-in list's artifact hashes, an
 * operator's `decoder_contracts.code_hash` first) and the live one where a block changed it (`live`).
 */
export interface CodeHashRegistry {
  /**
   * The mismatch of a contract for the events of a block at `blockTs` (ms): undefined when its code is the expected
   * one, either is unknown, or the block is not after the one that changed it.
   */
  mismatchOf(contractAddress: string, blockTs: number): CodeHashMismatch | undefined;
  /** The code hash a contract's decoder layout was read from, when known. */
  expectedOf(contractAddress: string): string | undefined;
}

export interface MutableCodeHashRegistry extends CodeHashRegistry {
  /** Records changes in chain order: the last one of a contract is its live code. */
  add(changes: Iterable<LiveCode>): void;
  /** Every contract whose live code differs from its expected one, now. */
  mismatches(): (CodeHashMismatch & LiveCode)[];
}

/** Expected hashes from rows (first row with a hash wins: operators' rows go first), live ones from changes. */
export function createCodeHashRegistry(
  expectedRows: Iterable<{ contract_address: string; code_hash?: string | null }>,
  live: Iterable<LiveCode> = [],
): MutableCodeHashRegistry {
  const expected = new Map<string, string>();
  for (const r of expectedRows)
    if (r.code_hash && !expected.has(r.contract_address)) expected.set(r.contract_address, r.code_hash);
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
    add,
    mismatches: () =>
      [...current.values()].flatMap((l) => {
        const m = mismatchNow(l.contract_address);
        return m ? [{ ...l, ...m }] : [];
      }),
  };
}
