/** Configuration parsing of exchange sources and the exact inverse of a decimal price. */
import { describe, expect, it } from "vitest";
import { inverse } from "../../pipeline/trade-watcher/cex.ts";
import { knownMarkets, parseApiUrls, parseExchangeSources } from "../../pipeline/trade-watcher/exchange.ts";

describe("exchange sources", () => {
  it("parses EXCHANGE_SOURCES and refuses an exchange it cannot read, naming it", () => {
    expect(parseExchangeSources("")).toEqual([]);
    expect(parseExchangeSources("gate, gateeu,gate")).toEqual(["gate", "gateeu"]);
    expect(parseExchangeSources("mexc,gate")).toEqual(["mexc", "gate"]);
    expect(() => parseExchangeSources("gate,binance")).toThrow(/EXCHANGE_SOURCES: binance is not supported/);
  });

  it("parses EXCHANGE_API_URLS as a JSON map of http(s) URLs", () => {
    expect(parseApiUrls("")).toEqual({});
    expect(parseApiUrls('{"gate":"http://127.0.0.1:8080/"}')).toEqual({ gate: "http://127.0.0.1:8080" });
    expect(() => parseApiUrls("gate=http://x")).toThrow(/EXCHANGE_API_URLS must be a JSON object/);
    expect(() => parseApiUrls('{"gate":"ftp://x"}')).toThrow(/EXCHANGE_API_URLS.gate must be an http/);
  });

  it("keeps markets of known bases priced in known assets or USD stablecoins", () => {
    const m = (symbol: string) => {
      const [base = "", quote = ""] = symbol.split("_");
      return { symbol, base, quote, listedAt: null };
    };
    const markets = ["ALPH_USDT", "AYIN_ALPH", "BTC_USDT", "ALPH_BTC", "USDT_ALPH"].map(m);
    expect(knownMarkets(markets, new Set(["ALPH", "AYIN"])).map((x) => x.symbol)).toEqual([
      "ALPH_USDT",
      "AYIN_ALPH",
    ]);
  });

  it("inverts a decimal price exactly, truncated to 40 decimals", () => {
    expect(inverse("0.25")).toBe("4");
    expect(inverse("3")).toBe("0.3333333333333333333333333333333333333333");
    expect(inverse("0.31250")).toBe("3.2");
    expect(inverse("0")).toBe("0");
  });
});
