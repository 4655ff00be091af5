/**
 * CSV answers of the list routes people export (events, OHLCV, series chart, token list): choosing
 * JSON or CSV per request, documenting both in OpenAPI, and sending the rows as a stream. The cells
 * are written by lib/csv.ts, the one place that quotes and escapes.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type CsvColumn, csvStream } from "../lib/csv.ts";
import { StringEnum } from "./schemas.ts";

export type ResponseFormat = "json" | "csv";

/** The `format` query parameter of an exporting route. */
export const FormatQuery = {
  format: Type.Optional(
    StringEnum(["json", "csv"] as const, {
      description:
        "`csv` answers `text/csv`, `json` JSON; when given it wins over `Accept`. Without it, `Accept` decides (see the route's description). Another value answers 400 naming `format`.",
    }),
  ),
};

/** What every exporting route says about CSV, after its own column list. */
export const CSV_NOTE = [
  "**CSV.** `format=csv`, or an `Accept` that prefers `text/csv` to `application/json` (q-values count; a tie,",
  "`*/*` or no `Accept` gives JSON, and so does an `Accept` that allows neither, like every route of this API),",
  "answers `text/csv; charset=utf-8` (RFC 4180: a header row, CRLF line ends, cells quoted when they hold a comma,",
  "a quote or a line break), with the same filters and paging as the JSON, streamed row by row over the page.",
  "Cells: numbers and U256 strings as in the JSON; booleans `true`/`false`; null an empty cell; nested objects",
  "and arrays JSON text; `*_iso` columns repeat a Unix-ms time as an ISO 8601 date-time (UTC). A text cell",
  "starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` (OWASP's CSV-injection advice);",
  "number columns never do. Errors stay `application/problem+json` bodies when CSV was asked.",
].join(" ");

/**
 * The 200 response of an exporting route: the JSON body, and `text/csv` with the columns in order.
 * Fastify serializes by content type: a CSV answer is a stream sent as `text/csv`, which no JSON
 * serializer touches.
 */
export function jsonOrCsv(json: TSchema, columns: string, description = "The page, as JSON or CSV.") {
  return {
    description,
    content: {
      "application/json": { schema: json },
      "text/csv": {
        schema: Type.String({ description: `RFC 4180 CSV with a header row. Columns, in order: ${columns}` }),
      },
    },
  };
}

/** Media-range weights of an `Accept` header, most specific range first per type. */
function acceptWeights(accept: string): { type: string; sub: string; q: number }[] {
  return accept
    .split(",")
    .map((part) => {
      const [range = "", ...params] = part.split(";").map((s) => s.trim().toLowerCase());
      const [type = "", sub = ""] = range.split("/");
      const qParam = params.find((p) => p.startsWith("q="));
      const q = qParam === undefined ? 1 : Number(qParam.slice(2));
      return { type, sub, q: Number.isFinite(q) ? Math.min(Math.max(q, 0), 1) : 0 };
    })
    .filter((r) => r.type !== "" && r.sub !== "");
}

/** The weight `Accept` gives `type/sub`: that of the most specific range matching it (RFC 9110, 12.5.1). */
function weightOf(ranges: ReturnType<typeof acceptWeights>, type: string, sub: string): number {
  const exact = ranges.filter((r) => r.type === type && r.sub === sub);
  if (exact.length) return Math.max(...exact.map((r) => r.q));
  const typeWide = ranges.filter((r) => r.type === type && r.sub === "*");
  if (typeWide.length) return Math.max(...typeWide.map((r) => r.q));
  const any = ranges.filter((r) => r.type === "*" && r.sub === "*");
  return any.length ? Math.max(...any.map((r) => r.q)) : 0;
}

/** The weight an `Accept` header gives `type/sub` (1 without the header: anything goes). */
export function acceptWeight(accept: string | undefined, type: string, sub: string): number {
  return accept ? weightOf(acceptWeights(accept), type, sub) : 1;
}

/**
 * JSON or CSV for this request: `format` when given, else CSV only when `Accept` weighs `text/csv`
 * above `application/json`. An `Accept` allowing neither answers JSON (documented in CSV_NOTE).
 */
export function responseFormat(request: FastifyRequest): ResponseFormat {
  const format = (request.query as { format?: string } | undefined)?.format;
  if (format === "csv" || format === "json") return format;
  const accept = request.headers.accept;
  if (!accept) return "json";
  const ranges = acceptWeights(accept);
  return weightOf(ranges, "text", "csv") > weightOf(ranges, "application", "json") ? "csv" : "json";
}

/** The request's own path and query with `param` set to `value`: the target of a `Link: rel="next"`. */
export function urlWith(request: FastifyRequest, param: string, value: string): string {
  const url = new URL(request.url, "http://localhost");
  url.searchParams.set(param, value);
  return `${url.pathname}${url.search}`;
}

export interface CsvAnswer<R> {
  columns: readonly CsvColumn<R>[];
  rows: Iterable<R>;
  /** File name suggested by `Content-Disposition`. */
  filename: string;
  /** The next page: its cursor value (`X-Next-Cursor`) and URL (`Link: <url>; rel="next"`). */
  next?: { cursor: string; url: string } | null;
  /** More response headers. */
  headers?: Record<string, string>;
}

/** Sends `rows` as a CSV stream (header row first); `Vary: Accept` since the same URL answers both. */
export function sendCsv<R>(reply: FastifyReply, answer: CsvAnswer<R>): FastifyReply {
  reply
    .type("text/csv; charset=utf-8")
    .header("content-disposition", `attachment; filename="${answer.filename}"`);
  if (answer.next) {
    reply.header("x-next-cursor", answer.next.cursor).header("link", `<${answer.next.url}>; rel="next"`);
  }
  for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
  return reply.send(csvStream(answer.columns, answer.rows));
}

/** `Vary: Accept` on both answers of an exporting route (caches must not give JSON to a CSV request). */
export function varyOnAccept(reply: FastifyReply): void {
  reply.header("vary", "Accept");
}
