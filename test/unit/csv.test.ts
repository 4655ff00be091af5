/** The CSV writer (lib/csv.ts): RFC 4180 quoting, the formula escape of text cells only, cell kinds, streaming. */
import { describe, expect, it } from "vitest";
import { type CsvColumn, csvQuote, csvStream, csvString, csvText } from "../../lib/csv.ts";

describe("CSV writer", () => {
  it("quotes cells holding a comma, a quote or a line break, doubling quotes", () => {
    expect(csvQuote("plain")).toBe("plain");
    expect(csvQuote("a,b")).toBe('"a,b"');
    expect(csvQuote('say "hi"')).toBe('"say ""hi"""');
    expect(csvQuote("two\nlines")).toBe('"two\nlines"');
    expect(csvQuote("cr\rlf")).toBe('"cr\rlf"');
    expect(csvQuote("")).toBe("");
  });

  it("escapes formula starts in text cells only", () => {
    for (const start of ["=", "+", "-", "@", "\t", "\r"])
      expect(csvText("text", `${start}x`)).toBe(`'${start}x`);
    expect(csvText("text", "x=1")).toBe("x=1");
    expect(csvText("text", "'quoted")).toBe("'quoted");
    // Numbers (JSON numbers and decimal strings) are never escaped.
    expect(csvText("number", -5)).toBe("-5");
    expect(csvText("number", "-123456789012345678901234567890")).toBe("-123456789012345678901234567890");
    expect(csvText("number", 1.5e-7)).toBe("1.5e-7");
  });

  it("writes each kind as JSON does, null and undefined as empty cells", () => {
    expect(csvText("boolean", true)).toBe("true");
    expect(csvText("boolean", false)).toBe("false");
    expect(csvText("json", { a: [1, "b"] })).toBe('{"a":[1,"b"]}');
    expect(csvText("json", [])).toBe("[]");
    expect(csvText("iso", 0)).toBe("1970-01-01T00:00:00.000Z");
    expect(csvText("iso", 1_750_000_020_000)).toBe("2025-06-15T15:07:00.000Z");
    for (const kind of ["text", "number", "boolean", "json", "iso"] as const) {
      expect(csvText(kind, null)).toBe("");
      expect(csvText(kind, undefined)).toBe("");
    }
  });

  it("writes a header row then one CRLF line per row, the same streamed or at once", async () => {
    type Row = { name: string | null; n: number; tags: string[] };
    const columns: CsvColumn<Row>[] = [
      { name: "name", kind: "text" },
      { name: "n", kind: "number" },
      { name: "n_iso", kind: "iso", get: (r) => r.n },
      { name: "tags", kind: "json" },
    ];
    const rows: Row[] = [
      { name: "=cmd", n: -1, tags: ["a,b"] },
      { name: null, n: 0, tags: [] },
    ];
    const expected =
      'name,n,n_iso,tags\r\n\'=cmd,-1,1969-12-31T23:59:59.999Z,"[""a,b""]"\r\n,0,1970-01-01T00:00:00.000Z,[]\r\n';
    expect(csvString(columns, rows)).toBe(expected);
    const chunks: string[] = [];
    for await (const chunk of csvStream(columns, rows)) chunks.push(String(chunk));
    expect(chunks).toHaveLength(3);
    expect(chunks.join("")).toBe(expected);
  });
});
