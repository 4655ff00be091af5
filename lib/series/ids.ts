/** Deterministic segment ids and storage keys. */
import { createHash } from "node:crypto";

/** A UUID (v8 layout) from sha256 of the instance, scale and span start: the same segment, the same id. */
export function segmentIdOf(instanceId: string, scale: string, spanStart: number): string {
  const h = createHash("sha256").update(`${instanceId}/${scale}/${spanStart}`).digest("hex");
  const v = `8${h.slice(13, 16)}`;
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16) + h.slice(17, 20);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${v}-${variant}-${h.slice(20, 32)}`;
}

/** Storage key of a segment whose points are in ClickHouse. */
export function clickhouseKeyOf(instanceId: string, scale: string, spanStart: number): string {
  return `clickhouse:series_points/${instanceId}/${scale}/${spanStart}`;
}

/** Object key of a raw archive page. */
export function pageKeyOf(instanceId: string, pageStart: number, pageEnd: number): string {
  return `series/${instanceId}/0/${pageStart}-${pageEnd}.json`;
}
