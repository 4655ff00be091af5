// Test passes: embedded (serializers of an app's responses; its Postgres holds keys only).
import { describe, expect, it } from "vitest";
import { SERIALIZERS } from "../../api/app.ts";
import { sharedSerializers } from "../../api/plugins/serializers.ts";
import { createTestApp } from "../helpers/app.ts";

const route = (schema: unknown, url = "/x") => ({ schema, url, method: "GET", httpStatus: "200" });
const object = (name: string) => ({
  type: "object",
  properties: { [name]: { type: "string" } },
  additionalProperties: false,
});

describe("response serializers shared by equal schemas", () => {
  it("compiles equal schemas once and keeps different ones apart", () => {
    const s = sharedSerializers();
    const compile = s.buildSerializer({}, {});
    const a = compile(route(object("a"), "/one"));
    // An equal schema (another object, another route and status) gets the same function.
    expect(compile({ ...route(object("a"), "/two"), httpStatus: "404" })).toBe(a);
    const b = compile(route(object("b")));
    expect(b).not.toBe(a);
    // fast-json-stringify writes only the schema's properties: each function is its own schema's.
    expect(a({ a: "1", b: "2" })).toBe('{"a":"1"}');
    expect(b({ a: "1", b: "2" })).toBe('{"b":"2"}');
    expect(s.stats()).toEqual({ compiled: 2, requested: 3 });
  });

  it("keeps a schema apart when the shared schemas it may reference differ", () => {
    const s = sharedSerializers();
    const ref = { $ref: "P" };
    const withA = s.buildSerializer({ P: { $id: "P", ...object("a") } }, {})(route(ref));
    const withB = s.buildSerializer({ P: { $id: "P", ...object("b") } }, {})(route(ref));
    // The same shared set from another plugin context (a copy) shares the compiled function.
    const withACopy = s.buildSerializer({ P: { $id: "P", ...object("a") } }, {})(route({ $ref: "P" }));
    expect(withA({ a: "1", b: "2" })).toBe('{"a":"1"}');
    expect(withB({ a: "1", b: "2" })).toBe('{"b":"2"}');
    expect(withACopy).toBe(withA);
    expect(s.stats()).toEqual({ compiled: 2, requested: 3 });
  });

  it("are the app's: its error bodies and pages share compiled serializers", async () => {
    const before = SERIALIZERS.stats();
    const t = await createTestApp({ databases: false });
    try {
      const after = SERIALIZERS.stats();
      const requested = after.requested - before.requested;
      const compiled = after.compiled - before.compiled;
      // Every route, method and status of the app asked; far fewer distinct schemas were compiled (none, when an
      // app built earlier in this process already compiled them: test files share their worker's modules).
      expect(requested).toBeGreaterThan(t.app.routeTable.length);
      expect(after.compiled).toBeGreaterThan(0);
      expect(compiled * 5).toBeLessThan(requested);
      // An error body (through the shared Problem serializer) carries the Problem's fields, and no other.
      const r = await t.app.inject({ url: "/events/all?limit=0" });
      const body = r.json();
      expect(r.statusCode).toBeGreaterThanOrEqual(400);
      expect(body.status).toBe(r.statusCode);
      const fields = ["type", "title", "status", "code", "detail", "instance", "request_id"];
      for (const field of fields) expect(body).toHaveProperty(field);
      expect(Object.keys(body).filter((k) => !fields.includes(k) && k !== "details")).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
