import { describe, expect, it } from "vitest";
import { CONFIG_SPEC, clickhouseDatabase, describeConfig, loadConfig } from "../../lib/config.ts";

describe("loadConfig", () => {
  it("applies documented defaults", () => {
    const c = loadConfig({});
    expect(c.PORT).toBe(3000);
    expect(c.STAGE).toBe("prod");
    expect(c.DATABASES).toBe("on");
    expect(clickhouseDatabase(c)).toBe("alephium_prod");
    expect(clickhouseDatabase(loadConfig({ STAGE: "dev" }))).toBe("alephium_dev");
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
    ["STAGE", "staging", /STAGE="staging": expected one of prod, dev/],
    ["TRUST_PROXY", "maybe", /TRUST_PROXY="maybe": expected true or false/],
    ["POSTGRES_URL", "localhost:5432", /POSTGRES_URL="localhost:5432": expected a postgres:\/\/ URL/],
    ["DECORATION_KEY", "hash", /DECORATION_KEY="hash": expected a JSON field name/],
    ["DECORATION_KEY", "__proto__", /DECORATION_KEY="__proto__": expected a JSON field name/],
    ["DECORATION_KEY", "my-key", /DECORATION_KEY="my-key": expected a JSON field name/],
    [
      "CORS_PUBLIC_ORIGINS",
      "https://a.example/app",
      /CORS_PUBLIC_ORIGINS="https:\/\/a.example\/app": expected `\*`, `none`/,
    ],
  ])("rejects %s=%s naming the key, the value and what is allowed", (key, value, message) => {
    expect(() => loadConfig({ [key]: value })).toThrow(message);
  });

  it("takes a decoration key and public CORS origins", () => {
    expect(loadConfig({}).DECORATION_KEY).toBe("ext");
    expect(loadConfig({}).CORS_PUBLIC_ORIGINS).toBe("*");
    expect(loadConfig({ DECORATION_KEY: "alphscan" }).DECORATION_KEY).toBe("alphscan");
    const origins = "https://a.example,http://127.0.0.1:8080";
    expect(loadConfig({ CORS_PUBLIC_ORIGINS: origins }).CORS_PUBLIC_ORIGINS).toBe(origins);
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
