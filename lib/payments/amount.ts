/**
 * ALPH amounts of invoices (pure). An invoice asks for the plan's price plus a small unique fraction:
 * `price + n × TAG_STEP` with n from 1 to MAX_TAGS, chosen so that the fractional part of the amount
 * (its tag) differs from every other open invoice of the same address. A transfer of exactly the
 * amount pays the invoice; a transfer with the same tag but another whole part is under- or overpaid.
 */

/** attoALPH in one ALPH. */
export const ONE_ALPH = 10n ** 18n;
/** The unit of the unique fraction: 0.0001 ALPH, which every wallet can send. */
export const TAG_STEP = 10n ** 14n;
/** Open invoices one address can hold at once (distinct tags 0.0001 … 0.9999). */
export const MAX_TAGS = 9_999;

/** Decimal ALPH ("150", "0.5") to attoALPH; throws on more than 18 decimals or a malformed value. */
export function alphToAtto(alph: string): bigint {
  const m = /^(\d+)(?:\.(\d{1,18}))?$/.exec(alph.trim());
  if (!m) throw new RangeError(`Not an ALPH amount: ${alph}`);
  return BigInt(m[1]!) * ONE_ALPH + BigInt((m[2] ?? "").padEnd(18, "0") || "0");
}

/** attoALPH to a decimal ALPH string without trailing zeros ("150.0003"). */
export function attoToAlph(atto: bigint | string): string {
  const v = BigInt(atto);
  const whole = v / ONE_ALPH;
  const frac = (v % ONE_ALPH).toString().padStart(18, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole.toString();
}

/** The tag of an amount: its fractional part in attoALPH. */
export function amountTag(atto: bigint): bigint {
  return atto % ONE_ALPH;
}

/**
 * The smallest `price + n × TAG_STEP` (n ≥ 1) whose tag no open invoice of the address holds, or null
 * when all MAX_TAGS are taken.
 */
export function uniqueAmount(priceAtto: bigint, takenTags: ReadonlySet<bigint>): bigint | null {
  for (let n = 1n; n <= BigInt(MAX_TAGS); n++) {
    const amount = priceAtto + n * TAG_STEP;
    if (!takenTags.has(amountTag(amount))) return amount;
  }
  return null;
}

export type TransferVerdict = "credited" | "overpaid" | "underpaid";

/** How a transfer with an invoice's tag compares with the invoice's amount. */
export function judgeTransfer(invoiceAtto: bigint, paidAtto: bigint): TransferVerdict {
  if (paidAtto === invoiceAtto) return "credited";
  return paidAtto > invoiceAtto ? "overpaid" : "underpaid";
}
