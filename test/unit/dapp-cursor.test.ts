import { describe, expect, it } from "vitest";
import { createCursors } from "../../lib/dapps/cursor.ts";
import { AppError } from "../../lib/errors.ts";

describe("dapp cursors (nextKey)", () => {
  const state = { ceiling: "1750000000001", after: ["42", "abc"] };

  it("round-trips the state for the same list and filters (in any key order)", () => {
    const c = createCursors({ secret: () => "s", ttlMs: 60_000 });
    const key = c.sign("l", { a: 1, b: "x", gone: undefined }, state);
    expect(c.open("l", { b: "x", a: 1 }, key)).toEqual(state);
  });

  it("refuses expired, foreign-list, other-filter, re-signed and malformed cursors, naming nextKey", () => {
    let now = 1_000;
    const c = createCursors({ secret: () => "s", ttlMs: 60_000, now: () => now });
    const key = c.sign("l", {}, state);
    const refused = (list: string, filters: object, k: string) => {
      try {
        c.open(list, filters, k);
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).status).toBe(400);
        expect((error as AppError).details).toMatchObject({ field: "nextKey" });
        return (error as AppError).message;
      }
      throw new Error("accepted");
    };
    expect(refused("other", {}, key)).toContain("another list");
    expect(refused("l", { a: 1 }, key)).toContain("other filters");
    const otherSecret = createCursors({ secret: () => "t", ttlMs: 60_000, now: () => now }).sign(
      "l",
      {},
      state,
    );
    expect(refused("l", {}, otherSecret)).toContain("signature");
    expect(refused("l", {}, "nodot")).toContain("malformed");
    expect(refused("l", {}, `${Buffer.from("{").toString("base64url")}.${key.split(".")[1]}`)).toContain(
      "signature",
    );
    now += 60_001;
    expect(refused("l", {}, key)).toContain("expired");
  });

  it("accepts the cursors of another process with the same secret only", () => {
    const a = createCursors({ secret: () => "shared", ttlMs: 60_000 });
    const b = createCursors({ secret: () => "shared", ttlMs: 60_000 });
    const c = createCursors({ secret: () => "other", ttlMs: 60_000 });
    expect(b.open("l", {}, a.sign("l", {}, state))).toEqual(state);
    expect(() => c.open("l", {}, a.sign("l", {}, state))).toThrow(/signature/);
  });
});
