/** Pure parts of lib/prices: exact ratios and shifts, bucket alignment, trades from events. */
import { describe, expect, it } from "vitest";
import { ratio, shiftToNumber, withPoint } from "../../lib/prices/decimal.ts";
import { bucketStart, SCALE_MS, SCALES } from "../../lib/prices/scales.ts";
import { type TradeSource, tradeOf } from "../../lib/prices/trades.ts";

const HEX = (c: string) => c.repeat(64);

function swap(payload: Record<string, unknown>, over: Partial<TradeSource> = {}): TradeSource {
  return {
    id: "1752573600000-00-0000000001-00000-0000",
    block_hash: HEX("b"),
    tx_id: HEX("c"),
    timestamp: 1752573600000,
    category: "dex",
    sub_kind: "buy",
    type: "swap",
    contract_address: "pool",
    contract_event_index: 2,
    payload: JSON.stringify(payload),
    ...over,
  };
}

const SWAP = {
  pool_address: "pool",
  base_token_id: HEX("1"),
  quote_token_id: HEX("0"),
  base_amount: "3",
  quote_amount: "1",
};

function oracle(fields: unknown[], over: Partial<TradeSource> = {}): TradeSource {
  return swap(
    {},
    {
      category: "contract",
      sub_kind: "event",
      type: "undecoded",
      contract_address: "oracle-address",
      contract_event_index: 1,
      payload: JSON.stringify({ event_index: 1, fields }),
      ...over,
    },
  );
}

describe("exact decimals", () => {
  it("truncates ratios to 40 decimals and trims zeros", () => {
    expect(ratio(1n, 3n)).toBe(`0.${"3".repeat(40)}`);
    expect(ratio(10n, 4n)).toBe("2.5");
    expect(ratio(5n, 0n)).toBe("0");
    expect(withPoint(1234n, 2)).toBe("12.34");
    expect(withPoint(5n, 3)).toBe("0.005");
  });

  it("moves the point exactly before the one rounding to a double", () => {
    expect(shiftToNumber("12.5", -2)).toBe(0.125);
    expect(shiftToNumber("0.000001", 6)).toBe(1);
    expect(shiftToNumber("123", 3)).toBe(123000);
    // 0.1 + 0.2-style errors do not appear: the text is read once.
    expect(shiftToNumber("3", -1)).toBe(0.3);
    expect(shiftToNumber(`0.${"3".repeat(40)}`, 12)).toBe(333333333333.3333);
  });
});

describe("scales", () => {
  it("aligns buckets on the epoch, UTC days and Mondays", () => {
    const ts = Date.UTC(2025, 6, 17, 13, 47, 31, 250); // a Thursday
    expect(bucketStart("1m", ts)).toBe(Date.UTC(2025, 6, 17, 13, 47));
    expect(bucketStart("3m", ts)).toBe(Date.UTC(2025, 6, 17, 13, 45));
    expect(bucketStart("15m", ts)).toBe(Date.UTC(2025, 6, 17, 13, 45));
    expect(bucketStart("4h", ts)).toBe(Date.UTC(2025, 6, 17, 12));
    expect(bucketStart("1d", ts)).toBe(Date.UTC(2025, 6, 17));
    expect(bucketStart("1w", ts)).toBe(Date.UTC(2025, 6, 14)); // Monday
    expect(new Date(bucketStart("1w", Date.UTC(2025, 6, 14))).getUTCDay()).toBe(1);
    for (const s of SCALES) expect(SCALE_MS[s] % SCALE_MS["1m"]).toBe(0);
  });
});

describe("trades from events", () => {
  const oracles = new Map([["oracle-address", "dia"]]);

  it("makes one trade per one-pool swap, with both orientations", () => {
    const t = tradeOf(swap(SWAP), oracles, true, 7)!;
    expect(t).toMatchObject({
      pool: "pool",
      kind: "buy",
      base_amount: "3",
      quote_amount: "1",
      price: `0.${"3".repeat(40)}`,
      inv_price: "3",
      main_chain: true,
      version: 7,
    });
  });

  it("ignores aggregates, malformed payloads, zero amounts and ratios too wide for the column", () => {
    expect(tradeOf(swap(SWAP, { sub_kind: "swap" }), oracles, true, 1)).toBeUndefined();
    expect(tradeOf(swap(SWAP, { payload: "{not json" }), oracles, true, 1)).toBeUndefined();
    expect(tradeOf(swap({ ...SWAP, base_amount: "0" }), oracles, true, 1)).toBeUndefined();
    expect(tradeOf(swap({ ...SWAP, base_token_id: "ALPH" }), oracles, true, 1)).toBeUndefined();
    expect(tradeOf(swap({ ...SWAP, quote_amount: "1e5" }), oracles, true, 1)).toBeUndefined();
    expect(
      tradeOf(swap({ ...SWAP, base_amount: "1", quote_amount: `1${"0".repeat(40)}` }), oracles, true, 1),
    ).toBeUndefined();
  });

  it("reads OracleUpdate(key, value, seconds) of an oracle source's contract only", () => {
    const key = Buffer.from("BTC/USD").toString("hex");
    const fields = [
      { type: "ByteVec", value: key },
      { type: "U256", value: "6512345678901" },
      { type: "U256", value: "1752573601" },
    ];
    expect(tradeOf(oracle(fields), oracles, true, 3)).toMatchObject({
      pool: "dia:BTC/USD",
      ts: 1752573601000,
      kind: "oracle",
      price: "6512345678901",
    });
    expect(tradeOf(oracle(fields, { contract_address: "elsewhere" }), oracles, true, 3)).toBeUndefined();
    expect(tradeOf(oracle(fields, { contract_event_index: 0 }), oracles, true, 3)).toBeUndefined();
    expect(tradeOf(oracle(fields.slice(0, 2)), oracles, true, 3)).toBeUndefined();
    const binaryKey = [{ type: "ByteVec", value: "00ff" }, fields[1], fields[2]];
    expect(tradeOf(oracle(binaryKey), oracles, true, 3)).toBeUndefined();
    const farFuture = [fields[0], fields[1], { type: "U256", value: "99999999999999" }];
    expect(tradeOf(oracle(farFuture), oracles, true, 3)).toBeUndefined();
  });

  it("reads the DIA decoder's oracle/price_update events of an oracle source's contract only", () => {
    const payload = {
      key: "BTC/USD",
      key_hex: Buffer.from("BTC/USD").toString("hex"),
      value: "6512345678901",
      decimals: 8,
      oracle_timestamp: 1752573601000,
    };
    const decoded = swap(payload, {
      category: "oracle",
      sub_kind: "price_update",
      type: "oracle_update",
      contract_address: "oracle-address",
      contract_event_index: 1,
    });
    expect(tradeOf(decoded, oracles, true, 3)).toMatchObject({
      pool: "dia:BTC/USD",
      ts: 1752573601000,
      kind: "oracle",
      price: "6512345678901",
    });
    expect(tradeOf({ ...decoded, contract_address: "elsewhere" }, oracles, true, 3)).toBeUndefined();
    expect(tradeOf({ ...decoded, sub_kind: "randomness" }, oracles, true, 3)).toBeUndefined();
    const negative = JSON.stringify({ ...payload, value: "-1" });
    expect(tradeOf({ ...decoded, payload: negative }, oracles, true, 3)).toBeUndefined();
    const far = JSON.stringify({ ...payload, oracle_timestamp: 99999999999999000 });
    expect(tradeOf({ ...decoded, payload: far }, oracles, true, 3)).toBeUndefined();
  });
});
