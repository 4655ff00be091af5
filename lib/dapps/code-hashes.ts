/**
 * The code-hash guard's registry: for each known dapp contract, the code hash its decoder's layout was read from
 * (the built-in list's artifact hash, or an operator's `decoder_contracts.code_hash`) and the live one a block
 * changed it to. The normalizer publishes a mismatched contract's events generic (`decode_error:
 * "code_hash_changed"`); `/status` lists the mismatches.
 */
/** A known contract whose live code is not the one its decoder's layout was read from. */
export interface CodeHashMismatch {
  expected: string;
  live: string;
}

/**
 * Code hashes: the one each decoder's layout was read from (`expected`: the built-in list's artifact hashes, an
 * operator's `decoder_contracts.code_hash` first) and the live one where a block changed it (`live`).
 */
export interface CodeHashRegistry {
  /** The mismatch of a contract, or undefined when its code is the expected one or either is unknown. */
  mismatchOf(contractAddress: string): CodeHashMismatch | undefined;
  /** The code hash a contract's decoder layout was read from, when known. */
  expectedOf(contractAddress: string): string | undefined;
}

export interface MutableCodeHashRegistry extends CodeHashRegistry {
  /** Records changes in chain order: the last one of a contract is its live code. */
  add(changes: Iterable<{ contract_address: string; code_hash: string }>): void;
  /** Every contract whose live code differs from its expected one. */
  mismatches(): (CodeHashMismatch & { contract_address: string })[];
}

/** Expected hashes from rows (first row with a hash wins: operators' rows go first), live ones from changes. */
export function createCodeHashRegistry(
  expectedRows: Iterable<{ contract_address: string; code_hash?: string | null }>,
  live: Iterable<{ contract_address: string; code_hash: string }> = [],
): MutableCodeHashRegistry {
  const expected = new Map<string, string>();
  for (const r of expectedRows)
    if (r.code_hash && !expected.has(r.contract_address)) expected.set(r.contract_address, r.code_hash);
  const current = new Map<string, string>();
  const mismatchOf = (a: string): CodeHashMismatch | undefined => {
    const e = expected.get(a);
    const l = current.get(a);
    return e !== undefined && l !== undefined && e !== l ? { expected: e, live: l } : undefined;
  };
  const add = (changes: Iterable<{ contract_address: string; code_hash: string }>) => {
    for (const c of changes) current.set(c.contract_address, c.code_hash);
  };
  add(live);
  return {
    mismatchOf,
    expectedOf: (a) => expected.get(a),
    add,
    mismatches: () =>
      [...current.keys()].flatMap((a) => {
        const m = mismatchOf(a);
        return m ? [{ contract_address: a, ...m }] : [];
      }),
  };
}
