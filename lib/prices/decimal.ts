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
 * `decimal × 10^shift` as a number: the point of the decimal string moves first (exact), then the
 * string is read as a double once. Accepts what ClickHouse prints for Decimal and UInt256 values.
 */
export function shiftToNumber(decimal: string, shift: number): number {
  const negative = decimal.startsWith("-");
  const text = negative ? decimal.slice(1) : decimal;
  const [intPart = "0", fracPart = ""] = text.split(".");
  const digits = intPart + fracPart;
  const point = intPart.length + shift;
  let out: string;
  if (point <= 0) out = `0.${"0".repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + "0".repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  const n = Number(out);
  return negative ? -n : n;
}
