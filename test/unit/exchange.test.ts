/** Configuration parsing of exchange sources and the exact inverse of a decimal price. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/config.ts";
import { inverse } from "../../pipeline/trade-watcher/cex.ts";
import { knownMarkets } from "../../pipeline/trade-watcher/exchange.ts";
import { marketSettings } from "../../pipeline/trade-watcher/watcher.ts";

describe("exchange sources", () => {
  const settings = (env: Record<string, string>) => marketSettings(loadConfig(env));

  it("reads EXCHANGE_SOURCES (set empty: none; unset: the default) and refuses an exchange it cannot read, naming it", () => {
    expect(settings({ EXCHANGE_SOURCES: "" }).sources).toEqual([]);
    expect(settings({}).sources).toEqual(["gate", "mexc"]);
    expect(settings({ EXCHANGE_SOURCES: "gate, gateeu,gate" }).sources).toEqual(["gate", "gateeu"]);
    expect(settings({ EXCHANGE_SOURCES: "mexc,gate" }).sources).toEqual(["mexc", "gate"]);
    expect(() => settings({ EXCHANGE_SOURCES: "gate,binance" })).toThrow(
      /EXCHANGE_SOURCES="gate,binance": expected comma-separated exchange ids among gate, gateeu, mexc \("binance" is not one\)/,
    );
  });

  it("reads EXCHANGE_API_URLS as a JSON map of http(s) URLs", () => {
    expect(settings({ EXCHANGE_API_URLS: "" }).apiUrls).toEqual({});
    expect(settings({ EXCHANGE_API_URLS: '{"gate":"http://127.0.0.1:8080/"}' }).apiUrls).toEqual({
      gate: "http://127.0.0.1:8080",
    });
    expect(() => settings({ EXCHANGE_API_URLS: "gate=http://x" })).toThrow(
      /EXCHANGE_API_URLS="gate=http:\/\/x": expected a JSON object of exchange id to http\(s\) URL/,
    );
    expect(() => settings({ EXCHANGE_API_URLS: '{"gate":"ftp://x"}' })).toThrow(
      /the value of "gate" is not one it takes/,
    );
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
