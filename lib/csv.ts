/**
 * CSV writing (RFC 4180) for exports: the one place that quotes and escapes cells. Rows are objects;
 * columns say what each cell holds, which decides how it is written:
 * - `text`: strings as they are, except that a cell starting with `=`, `+`, `-`, `@`, a tab or a
 *   carriage return gets a leading `'` (OWASP's CSV-injection advice: a spreadsheet would otherwise
 *   run it as a formula). Only text columns get it, so negative numbers stay numbers.
 * - `number`: JSON numbers as JSON writes them, and decimal strings (U256 amounts) unchanged.
 * - `boolean`: `true` / `false`.
 * - `json`: objects and arrays as JSON text (nested values are never flattened into columns).
 * - `iso`: a Unix-ms time as an ISO 8601 date-time (UTC), for the `*_iso` twin of a time column.
 * null and undefined are empty cells in every kind. Lines end with CRLF; the header row comes first.
 */
import { Readable } from "node:stream";

export type CsvKind = "text" | "number" | "boolean" | "json" | "iso";

export interface CsvColumn<R> {
  /** Header cell. */
  name: string;
  kind: CsvKind;
  /** The cell's value; by default the row's field named like the column. */
  get?: (row: R) => unknown;
}

/** Characters that make a spreadsheet read a cell as a formula (OWASP, "CSV Injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A cell needs quotes when it holds the separator, a quote or a line break (RFC 4180, 2.6). */
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell, quoted when needed (RFC 4180: quotes doubled inside a quoted cell). */
export function csvQuote(text: string): string {
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The text of a cell of `kind` holding `value`, before quoting. */
export function csvText(kind: CsvKind, value: unknown): string {
  if (value === null || value === undefined) return "";
  switch (kind) {
    case "text": {
      const text = typeof value === "string" ? value : JSON.stringify(value);
      return FORMULA_START.test(text) ? `'${text}` : text;
    }
    case "number":
    case "boolean":
      return typeof value === "string" ? value : JSON.stringify(value);
    case "json":
      return JSON.stringify(value);
    case "iso": {
      const ms = Number(value);
      return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : "";
    }
  }
}

/** One CSV line (with its CRLF) of cells already turned to text. */
export function csvLine(cells: readonly string[]): string {
  return `${cells.map(csvQuote).join(",")}\r\n`;
}

/** The header line of `columns` (header cells are text: escaped like any text cell). */
export function csvHeader<R>(columns: readonly CsvColumn<R>[]): string {
  return csvLine(columns.map((c) => csvText("text", c.name)));
}

/** The line of one row. */
export function csvRow<R>(columns: readonly CsvColumn<R>[], row: R): string {
  return csvLine(
    columns.map((c) => csvText(c.kind, c.get ? c.get(row) : (row as Record<string, unknown>)[c.name])),
  );
}

/**
 * The header then one line per row, produced as the stream is read: a reader of the stream gets
 * the first lines before the last are written.
 */
export function csvStream<R>(columns: readonly CsvColumn<R>[], rows: Iterable<R>): Readable {
  function* lines() {
    yield csvHeader(columns);
    for (const row of rows) yield csvRow(columns, row);
  }
  return Readable.from(lines(), { objectMode: false });
}

/** The whole CSV text at once (tests, small exports). */
export function csvString<R>(columns: readonly CsvColumn<R>[], rows: Iterable<R>): string {
  let out = csvHeader(columns);
  for (const row of rows) out += csvRow(columns, row);
  return out;
}
