// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";

interface CategoryBody {
  id: string;
  sort_order: number;
  deleted: boolean;
  count_token: number;
  count_dapp: number;
}

describe("category routes", () => {
  let t: TestApp;
  const all = async (query = "") =>
    (await t.app.inject({ url: `/category/all${query}` })).json().categories as CategoryBody[];
  const post = (path: string, payload: object, key = t.adminKey) =>
    t.app.inject({ method: "POST", url: `/category/${path}`, headers: t.auth(key), payload });

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it("lists the seeded categories by sort order with token and dapp counts", async () => {
    const categories = await all();
    expect(categories.map((c) => c.id)).toEqual([
      "stablecoin",
      "defi",
      "dex",
      "bridged",
      "oracle",
      "meme",
      "gaming",
      "nft",
    ]);
    expect(categories.find((c) => c.id === "bridged")).toEqual({
      id: "bridged",
      sort_order: 40,
      deleted: false,
      count_token: 8,
      count_dapp: 1,
    });
    expect(categories.find((c) => c.id === "dex")).toMatchObject({ count_token: 0, count_dapp: 2 });
  });

  it("adds a category, and keeps the sort order of an existing one unless given", async () => {
    const res = await post("add", { id: "layer1", sort_order: 5 });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ok: true,
      category: { id: "layer1", sort_order: 5, deleted: false, count_token: 0, count_dapp: 0 },
    });
    expect((await all())[0]?.id).toBe("layer1");
    expect((await post("add", { id: "layer1" })).json().category.sort_order).toBe(5);
    expect((await post("add", { id: "layer1", sort_order: 99 })).json().category.sort_order).toBe(99);
    expect((await post("add", { id: "plain" })).json().category.sort_order).toBe(0);
  });

  it("del → hidden, include_deleted shows deleted:true, add re-activates", async () => {
    const del = await post("del", { id: "bridged" });
    expect(del.statusCode).toBe(200);
    expect(del.json().category).toMatchObject({ id: "bridged", deleted: true });
    expect((await all()).map((c) => c.id)).not.toContain("bridged");
    const withDeleted = await all("?include_deleted=true");
    expect(withDeleted.find((c) => c.id === "bridged")).toMatchObject({ deleted: true, sort_order: 40 });
    expect((await all("?include_deleted=false")).map((c) => c.id)).not.toContain("bridged");
    // A deleted category leaves token category lists, filter options and new assignments.
    const usdt = await t.app.inject({
      url: "/token/556d9582463fe44fbd108aedc9f409f69086dc78d994b88ea6c9e65f8bf98e00/details",
    });
    expect(usdt.json().token.categories).toEqual(["stablecoin"]);
    const options = (await t.app.inject({ url: "/token/filter-options" })).json();
    expect(options.categories.map((c: { id: string }) => c.id)).not.toContain("bridged");
    const assign = await t.app.inject({
      method: "POST",
      url: `/token/${"1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800"}/update`,
      headers: t.auth(t.adminKey),
      payload: { category_ids: ["bridged"] },
    });
    expect(assign.statusCode).toBe(400);

    const again = await post("add", { id: "bridged" });
    expect(again.json().category).toEqual({
      id: "bridged",
      sort_order: 40,
      deleted: false,
      count_token: 8,
      count_dapp: 1,
    });
    expect((await all()).map((c) => c.id)).toContain("bridged");
  });

  it("counts tokens as admins assign them", async () => {
    const before = (await all()).find((c) => c.id === "gaming")?.count_token;
    await t.app.inject({
      method: "POST",
      url: "/token/1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800/update",
      headers: t.auth(t.adminKey),
      payload: { category_ids: ["gaming", "defi"] },
    });
    expect((await all()).find((c) => c.id === "gaming")?.count_token).toBe((before ?? 0) + 1);
  });

  it("answers 400 without an id or with a malformed one, 404 for an unknown del", async () => {
    expect((await post("add", {})).statusCode).toBe(400);
    expect((await post("del", {})).statusCode).toBe(400);
    expect((await post("add", { id: "Bad Id!" })).statusCode).toBe(400);
    expect((await post("add", { id: "x", extra: 1 })).statusCode).toBe(400);
    expect((await post("del", { id: "never-existed" })).statusCode).toBe(404);
  });

  it("needs an admin key to add or delete", async () => {
    for (const path of ["add", "del"]) {
      const none = await t.app.inject({ method: "POST", url: `/category/${path}`, payload: { id: "meme" } });
      expect(none.statusCode).toBe(401);
      expect((await post(path, { id: "meme" }, t.userKey)).statusCode).toBe(403);
    }
    expect((await all()).find((c) => c.id === "meme")?.deleted).toBe(false);
  });
});
