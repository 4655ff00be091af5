/** `produceChunks`: a publish cut into produce requests of bounded bytes, in publish order. */
import { describe, expect, it } from "vitest";
import { DEFAULT_PRODUCE_MAX_BYTES, type OutgoingMessage, produceChunks } from "../../lib/stores/bus.ts";

const message = (key: string, bytes: number): OutgoingMessage => ({ key, value: Buffer.alloc(bytes, 1) });
/** Bytes a chunk costs as the bus counts them: key, value and 32 bytes of record overhead each. */
const cost = (chunk: OutgoingMessage[]) =>
  chunk.reduce((n, m) => n + Buffer.byteLength(m.key) + m.value.length + 32, 0);

describe("produceChunks", () => {
  it("keeps every message once, in publish order, each chunk within the limit", () => {
    const messages = Array.from({ length: 1_000 }, (_, i) =>
      message(String(i % 16), 100 + ((i * 7919) % 5_000)),
    );
    const chunks = produceChunks(messages, 50_000);
    expect(chunks.flat()).toEqual(messages);
    expect(chunks.length).toBeGreaterThan(40);
    for (const chunk of chunks) expect(cost(chunk)).toBeLessThanOrEqual(50_000);
    // Greedy: a chunk closes only when the next message would not fit.
    for (let i = 0; i + 1 < chunks.length; i++)
      expect(cost(chunks[i] ?? []) + cost([chunks[i + 1]?.[0] as OutgoingMessage])).toBeGreaterThan(50_000);
  });

  it("sends a message larger than the limit alone, between its neighbours", () => {
    const messages = [message("0", 10), message("1", 2_000), message("2", 10), message("3", 10)];
    expect(produceChunks(messages, 1_000).map((c) => c.map((m) => m.key))).toEqual([
      ["0"],
      ["1"],
      ["2", "3"],
    ]);
  });

  it("counts keys in UTF-8 bytes and leaves a small publish whole", () => {
    const key = "é".repeat(100); // 200 bytes
    expect(produceChunks([message(key, 0), message(key, 0)], 2 * (200 + 32))).toHaveLength(1);
    expect(produceChunks([message(key, 0), message(key, 0)], 2 * (200 + 32) - 1)).toHaveLength(2);
    expect(produceChunks([], DEFAULT_PRODUCE_MAX_BYTES)).toEqual([]);
    const round = Array.from({ length: 16 }, (_, i) => message(String(i), 20_000));
    expect(produceChunks(round, DEFAULT_PRODUCE_MAX_BYTES)).toEqual([round]);
  });
});
