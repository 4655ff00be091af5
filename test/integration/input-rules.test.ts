// Test passes: embedded (routes over an app whose Postgres holds keys and rows; PGlite runs the same SQL).
/** The input rules, on the examples that answered 500 (or silently rounded) before they existed. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "../helpers/app.ts";

type Reply = Awaited<ReturnType<TestApp["app"]["inject"]>>;

function expectFieldRefused(r: Reply, location: string, field: string) {
  expect(r.statusCode, r.body).toBe(400);
  expect(r.headers["content-type"]).toContain("application/problem+json");
  const body = r.json();
  expect(body.code).toBe("validation_failed");
  expect(body.detail).toContain(field);
  expect(body.errors).toEqual([expect.objectContaining({ location, path: `/${field}` })]);
}

describe("input rules", () => {
  let t: TestApp;
  const admin = () => t.auth(t.adminKey);
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it.each([
    ["/token/all?page=99999999999999999999", "page"],
    ["/token/all?page=9007199254740993", "page"],
    ["/token/all?chain=2147483648", "chain"],
    ["/token/all?search=a%00b", "search"],
    ["/token/all?pageSize=1e309", "pageSize"],
    ["/token/all?pageSize=-1e309", "pageSize"],
    ["/addresses/labels?offset=18446744073709551616", "offset"],
    ["/addresses/labels?address=%00", "address"],
  ])("GET %s → 400 naming %s", async (url, field) => {
    expectFieldRefused(await t.app.inject({ url }), "querystring", field);
  });

  it("refuses a NUL byte in an admin query and in body strings", async () => {
    expectFieldRefused(
      await t.app.inject({ url: "/system/keys?user_id=%00", headers: admin() }),
      "querystring",
      "user_id",
    );
    const key = await t.app.inject({
      method: "POST",
      url: "/system/keys",
      headers: admin(),
      payload: { user_id: "a\u0000b", plan_id: "free" },
    });
    expectFieldRefused(key, "body", "user_id");
    const label = await t.app.inject({
      method: "POST",
      url: "/addresses/labels/add",
      headers: admin(),
      payload: { address: "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH", label: "x\u0000" },
    });
    expectFieldRefused(label, "body", "label");
    // Anywhere in a body, with the JSON pointer of the string.
    const nested = await t.app.inject({
      method: "POST",
      url: `/token/${"ab".repeat(32)}/update`,
      headers: admin(),
      payload: { metadata: { links: ["ok", "bad\u0000"] } },
    });
    expect(nested.statusCode).toBe(400);
    expect(nested.json().errors).toEqual([
      expect.objectContaining({ location: "body", path: "/metadata/links/1" }),
    ]);
  });

  it("refuses a plan allowance past a Postgres integer", async () => {
    const r = await t.app.inject({
      method: "POST",
      url: "/system/plans/upsert",
      headers: admin(),
      payload: {
        plan_id: "huge",
        name: "Huge",
        rpm: 99999999999999,
        rpd: 1,
        price: "0",
        price_alph: "0",
        validity_days: 1,
      },
    });
    expectFieldRefused(r, "body", "rpm");
  });

  it("lists the allowed values of an enum, once", async () => {
    const r = await t.app.inject({ url: "/token/all?sort=bogus" });
    expect(r.statusCode).toBe(400);
    const body = r.json();
    expect(body.detail).toBe(
      "Invalid querystring: sort must be equal to one of the allowed values: symbol, circulating_supply_usd, mint_time",
    );
    expect(body.errors).toHaveLength(1);
  });

  it.each([
    ['{"id":"x","__proto__":{"admin":true}}', "/__proto__", "__proto__"],
    ['{"id":"x","meta":[{"__pro\\u0074o__":{}}]}', "/meta/0/__proto__", "__proto__"],
    [
      '{"id":"x","constructor":{"prototype":{"admin":true}}}',
      "/constructor/prototype",
      "constructor.prototype",
    ],
  ])("refuses the prototype key in %s with a 400 saying so", async (payload, path, key) => {
    const r = await t.app.inject({
      method: "POST",
      url: "/category/add",
      headers: { ...admin(), "content-type": "application/json" },
      payload,
    });
    expect(r.statusCode).toBe(400);
    expect(r.headers["content-type"]).toContain("application/problem+json");
    const body = r.json();
    expect(body.code).toBe("forbidden_json_key");
    expect(body.detail).toContain(`${key} key`);
    expect(body.detail).toContain("refused");
    expect(body.detail).not.toContain("not valid JSON");
    expect(body.errors).toEqual([expect.objectContaining({ location: "body", path })]);
  });

  it("answers 405 with Allow for a known path under another method, 404 for an unknown path", async () => {
    const put = await t.app.inject({ method: "PUT", url: "/token/all" });
    expect(put.statusCode).toBe(405);
    expect(put.headers.allow).toBe("GET, HEAD");
    expect(put.headers["content-type"]).toContain("application/problem+json");
    expect(put.json()).toMatchObject({ status: 405, code: "method_not_allowed" });
    const get = await t.app.inject({
      method: "GET",
      url: `/system/key/${"0".repeat(8)}-0000-0000-0000-${"0".repeat(12)}/delete`,
    });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe("POST");
    const staged = await t.app.inject({ method: "DELETE", url: "/prod/category/all" });
    expect(staged.statusCode).toBe(405);
    expect(staged.headers.allow).toBe("GET, HEAD");
    const unknown = await t.app.inject({ method: "PUT", url: "/token/nothing/here/at/all" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.allow).toBeUndefined();
  });

  it("takes snake_case key bodies and the spec's camelCase spellings, refusing both with different values", async () => {
    const create = (payload: object) =>
      t.app.inject({ method: "POST", url: "/system/keys", headers: admin(), payload });
    const snake = await create({ user_id: "spell-a", plan_id: "pro" });
    expect(snake.statusCode).toBe(200);
    const camel = await create({ userId: "spell-b", planId: "pro" });
    expect(camel.statusCode).toBe(200);
    expect((await create({ userId: "spell-c", user_id: "spell-c", plan_id: "pro" })).statusCode).toBe(200);
    const users = (await t.deps.keys!.listKeys()).map((k) => k.user_id);
    expect(users).toEqual(expect.arrayContaining(["spell-a", "spell-b", "spell-c"]));

    const clash = await create({ userId: "one", user_id: "two", plan_id: "pro" });
    expect(clash.statusCode).toBe(400);
    expect(clash.json().detail).toContain("userId");
    expect(clash.json().detail).toContain("user_id");
    const missing = await create({ plan_id: "pro" });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().detail).toBe("Invalid body: user_id is required");

    const keyId = camel.json().keyId as string;
    for (const payload of [{ planId: "free" }, { plan_id: "enterprise" }]) {
      const set = await t.app.inject({
        method: "POST",
        url: `/system/key/${keyId}/plan/set`,
        headers: admin(),
        payload,
      });
      expect(set.statusCode).toBe(200);
      expect(set.json().key.plan_id).toBe(Object.values(payload)[0]);
    }
  });

  it("revokes a key with no body, an empty body or {}, and refuses any field", async () => {
    const repo = t.deps.keys!;
    const bodies: [string, { payload?: string; json: boolean }][] = [
      ["no body", { json: false }],
      ["empty body", { payload: "", json: true }],
      ["{}", { payload: "{}", json: true }],
    ];
    for (const [name, { payload, json }] of bodies) {
      const { keyId } = await repo.createKey({ userId: `revoke-${name}`, planId: "free", level: "user" });
      const r = await t.app.inject({
        method: "POST",
        url: `/system/key/${keyId}/delete`,
        headers: json ? { ...admin(), "content-type": "application/json" } : admin(),
        ...(payload === undefined ? {} : { payload }),
      });
      expect(r.statusCode, name).toBe(200);
      expect(r.json().key.revoked_at, name).not.toBeNull();
    }
    const { keyId } = await repo.createKey({ userId: "revoke-field", planId: "free", level: "user" });
    const r = await t.app.inject({
      method: "POST",
      url: `/system/key/${keyId}/delete`,
      headers: admin(),
      payload: { reason: "x" },
    });
    expectFieldRefused(r, "body", "reason");
    expect((await repo.getKey(keyId))?.revoked_at).toBeNull();
  });
});
