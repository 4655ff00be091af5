// Test passes: embedded (configuration parsing only: KAFKA_BROKERS appears as a value to refuse; no bus or database is opened).
import { describe, expect, it } from "vitest";
import { DEVNET_RUN_DEFAULTS } from "../../devnet/main.ts";
import { CONFIG_SPEC, clickhouseDatabase, configText, describeConfig, loadConfig } from "../../lib/config.ts";

describe("loadConfig", () => {
  it("applies documented defaults", () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.STAGE).toBe("prod");
    expect(c.DATABASES).toBe("on");
    expect(clickhouseDatabase(c)).toBe("alephium_prod");
    expect(clickhouseDatabase(loadConfig({ STAGE: "dev" }))).toBe("alephium_dev");
    // The demo's history (lib/config.ts cannot import the devnet): the same default as the devnet's own.
    expect(c.DEVNET_BLOCKS).toBe(DEVNET_RUN_DEFAULTS.blocks);
  });

  it("coerces integers and booleans", () => {
    const c = loadConfig({ PORT: "8080", TRUST_PROXY: "yes", PAYLOAD_HYDRATION: "0" });
    expect(c.PORT).toBe(8080);
    expect(c.TRUST_PROXY).toBe(true);
    expect(c.PAYLOAD_HYDRATION).toBe(false);
  });

  it.each([
    ["PORT", "70000", /PORT="70000": expected an integer from 0 to 65535/],
    ["PORT", "12abc", /PORT="12abc"/],
    ["DEVNET_BLOCKS", "0", /DEVNET_BLOCKS="0": expected an integer from 16 to 1000000/],
    ["STAGE", "staging", /STAGE="staging": expected one of prod, dev/],
    ["TRUST_PROXY", "maybe", /TRUST_PROXY="maybe": expected true or false/],
    ["POSTGRES_URL", "localhost:5432", /POSTGRES_URL="localhost:5432": expected a postgres:\/\/ URL/],
    ["DECORATION_KEY", "hash", /DECORATION_KEY="hash": expected a JSON field name/],
    ["DECORATION_KEY", "__proto__", /DECORATION_KEY="__proto__": expected a JSON field name/],
    ["DECORATION_KEY", "my-key", /DECORATION_KEY="my-key": expected a JSON field name/],
    [
      "CORS_PUBLIC_ORIGINS",
      "https://a.example/app",
      /CORS_PUBLIC_ORIGINS="https:\/\/a.example\/app": expected comma-separated origins such as https:\/\/app.example.com \(no path\), or `\*` alone, or `none` alone \("https:\/\/a.example\/app" is not one\)/,
    ],
    ["CORS_PUBLIC_ORIGINS", "*,https://a.example", /CORS_PUBLIC_ORIGINS="\*,https:\/\/a.example": expected/],
    [
      "KAFKA_BROKERS",
      "kafka-1:9092,kafka-2",
      /KAFKA_BROKERS="kafka-1:9092,kafka-2": expected comma-separated host:port brokers such as kafka-1:9092 \("kafka-2" is not one\)/,
    ],
    ["WG_ALLOWED_IPS", "10.87.0.0/24, 10.0.0.1", /WG_ALLOWED_IPS=.*\("10.0.0.1" is not one\)/],
    ["WEBHOOK_ALLOWED_CIDRS", "127.0.0.0/8,localhost", /WEBHOOK_ALLOWED_CIDRS=.*\("localhost" is not one\)/],
    ["SERIES_RAW_SEGMENT_MS", "7000000", /SERIES_RAW_SEGMENT_MS=7000000: expected a divisor of 86400000/],
    [
      "SERIES_S3_ENDPOINT",
      "http://127.0.0.1:4568",
      /SERIES_S3_BUCKET="": expected a bucket name with SERIES_S3_ENDPOINT/,
    ],
    ["EVM_RPC_URLS", "[1]", /EVM_RPC_URLS="\[1\]": expected a JSON object of EVM chain id/],
    [
      "NFT_METADATA_RETRY_MAX_S",
      "30",
      /NFT_METADATA_RETRY_BASE_S=60: expected at most NFT_METADATA_RETRY_MAX_S \(30\)/,
    ],
    [
      "NFT_METADATA_IPFS_GATEWAY",
      "https://ipfs.io/ipfs",
      /NFT_METADATA_IPFS_GATEWAY=.*an http\(s\) URL ending with \//,
    ],
    [
      "NFT_METADATA_ALLOWED_CIDRS",
      "10.0.0.0/8,intranet",
      /NFT_METADATA_ALLOWED_CIDRS=.*\("intranet" is not one\)/,
    ],
  ])("rejects %s=%s naming the key, the value and what is allowed", (key, value, message) => {
    expect(() => loadConfig({ [key]: value })).toThrow(message);
  });

  it("takes a decoration key and public CORS origins", () => {
    expect(loadConfig({}).DECORATION_KEY).toBe("ext");
    expect(loadConfig({}).CORS_PUBLIC_ORIGINS).toEqual(["*"]);
    expect(loadConfig({ DECORATION_KEY: "alphscan" }).DECORATION_KEY).toBe("alphscan");
    const origins = "https://a.example, http://127.0.0.1:8080";
    expect(loadConfig({ CORS_PUBLIC_ORIGINS: origins }).CORS_PUBLIC_ORIGINS).toEqual([
      "https://a.example",
      "http://127.0.0.1:8080",
    ]);
  });

  it("reads a list as its trimmed items: unset is the default, set empty is the empty list", () => {
    expect(loadConfig({}).SQL_PLANS).toEqual(["enterprise"]);
    expect(loadConfig({ SQL_PLANS: "" }).SQL_PLANS).toEqual([]);
    expect(loadConfig({ SQL_PLANS: " pro , enterprise,," }).SQL_PLANS).toEqual(["pro", "enterprise"]);
    expect(loadConfig({ KAFKA_BROKERS: "" }).KAFKA_BROKERS).toEqual([]);
    // Each config has its own copy: changing one (the demo sets its exchange) leaves the defaults alone.
    const a = loadConfig({});
    a.EXCHANGE_SOURCES.push("gateeu");
    expect(loadConfig({}).EXCHANGE_SOURCES).toEqual(["gate", "mexc"]);
  });

  it("reads counts from plan:n pairs", () => {
    expect(loadConfig({}).STREAM_CONNECTIONS).toEqual({ free: 1, pro: 10, enterprise: 100 });
    expect(loadConfig({ STREAM_CONNECTIONS: "pro:3, bench:50000" }).STREAM_CONNECTIONS).toEqual({
      pro: 3,
      bench: 50_000,
    });
    expect(() => loadConfig({ STREAM_CONNECTIONS: "pro:3,gold" })).toThrow(
      /STREAM_CONNECTIONS="pro:3,gold": expected plan:n pairs separated by commas \(n from 0 to 999999\) \("gold" is not one\)/,
    );
    expect(configText(loadConfig({}).STREAM_CONNECTIONS)).toBe("free:1,pro:10,enterprise:100");
  });

  it("reads a map from a JSON object and prints lists and maps as they are written", () => {
    const c = loadConfig({ EVM_RPC_URLS: '{"1":"https://eth.example","56":"https://bsc.example"}' });
    expect(c.EVM_RPC_URLS).toEqual({ 1: "https://eth.example", 56: "https://bsc.example" });
    expect(loadConfig({}).EVM_RPC_URLS).toEqual({});
    expect(configText(c.EVM_RPC_URLS)).toBe('{"1":"https://eth.example","56":"https://bsc.example"}');
    expect(configText(loadConfig({}).EXCHANGE_SOURCES)).toBe("gate,mexc");
    expect(configText({})).toBe("");
  });

  it("documents every key in the configuration table and .env.example format", () => {
    const md = describeConfig("markdown");
    const env = describeConfig("env");
    for (const key of Object.keys(CONFIG_SPEC)) {
      expect(md).toContain(`\`${key}\``);
      expect(env).toMatch(new RegExp(`^${key}=`, "m"));
    }
  });
});
