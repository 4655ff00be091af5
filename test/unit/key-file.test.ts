import { describe, expect, it } from "vitest";
import { parseKeyFile } from "../../lib/keys/file.ts";

describe("API_KEYS_FILE", () => {
  it("takes user and admin keys, skips comments and blank lines", () => {
    const keys = parseKeyFile("# keys\n\nalk_user_key_0123456789\nalk_admin_key_0123456789 admin # ops\n");
    expect(keys.size).toBe(2);
    expect(keys.levelOf("alk_user_key_0123456789")).toBe("user");
    expect(keys.levelOf("alk_admin_key_0123456789")).toBe("admin");
    expect(keys.levelOf("alk_made_up_key_0123456")).toBeNull();
    expect(keys.levelOf("")).toBeNull();
  });

  it("refuses a malformed line with its number", () => {
    expect(() => parseKeyFile("alk_user_key_0123456789\nalk_x_0123456789012 root\n")).toThrow(/line 2/);
    expect(() => parseKeyFile("short\n")).toThrow(/line 1/);
  });
});
