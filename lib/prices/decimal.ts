/**
 * Exact decimal arithmetic for prices: raw ratios are kept as decimal strings (40 fractional digits,
 * the `Decimal(76, 40)` columns) and token decimals are applied by moving the decimal point, so no
 * float is involved until the served JSON number.
 */

/** Fractional digits of raw price ratios (`Decimal(76, 40)` in ClickHouse). */
export const PRICE_SCALE = 40;
const SCALE_FACTOR = 10n ** BigInt(PRICE_SCALE);

/** `num / den` truncated to 40 fractional digits, as a plain decimal string ("0" when den is 0). */
export function ratio(num: bigint, den: bigint): string {
  if (den === 0n) return "0";
  const scaled = (num * SCALE_FACTOR) / den;
  return withPoint(scaled, PRICE_SCALE);
}

/** The decimal string of `value / 10^places` (value ≥ 0), trailing zeros trimmed. */
export function withPoint(value: bigint, places: number): string {
  const digits = value.toString().padStart(places + 1, "0");
  const int = digits.slice(0, digits.length - places);
  const frac = digits.slice(digits.length - places).replace(/0+$/, "");
  return frac ? `${int}.${frac}` : int;
}

/**
 * `decimal × 10^shift` as a number, rounded once: `Number()` of a decimal literal with an exponent
 * reads the exact value the text denotes and rounds it to the nearest double (V8's string-to-number
 * conversion is correctly rounded at any length), which is what moving the point first and reading
 * the shifted text gives, without building it. Accepts what ClickHouse prints for Decimal and UInt256.
 */
export function shiftToNumber(decimal: string, shift: number): number {
  return shift === 0 ? Number(decimal) : Number(`${decimal}e${shift}`);
}

/** Exact product of two non-negative decimal strings (`"12.5" × "0.3" = "3.75"`), trailing zeros trimmed. */
export function mulDecimal(a: string, b: string): string {
  const parse = (x: string): [bigint, number] => {
    const [int = "0", frac = ""] = x.split(".");
    return [BigInt(int + frac), frac.length];
  };
  const [av, ap] = parse(a);
  const [bv, bp] = parse(b);
  return withPoint(av * bv, ap + bp);
}
