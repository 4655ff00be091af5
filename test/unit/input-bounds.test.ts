import { describe, expect, it } from "vitest";
import { boundRequestSchema, DEFAULT_MAX_STRING } from "../../api/plugins/input.ts";

describe("boundRequestSchema", () => {
  it("bounds integers, numbers and strings that declare no bounds, and keeps the ones they declare", () => {
    const schema = {
      type: "object",
      properties: {
        page: { type: "integer", minimum: 1 },
        price: { type: "number" },
        tags: { type: "array", items: { type: "string" } },
        sort: { type: "string", enum: ["a", "b"] },
        note: { type: ["string", "null"], maxLength: 10 },
      },
    };
    const bounded = boundRequestSchema(schema, "test") as { properties: Record<string, object> };
    expect(bounded.properties.page).toEqual({
      type: "integer",
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(bounded.properties.price).toEqual({
      type: "number",
      minimum: -Number.MAX_VALUE,
      maximum: Number.MAX_VALUE,
    });
    expect(bounded.properties.tags).toEqual({
      type: "array",
      items: { type: "string", maxLength: DEFAULT_MAX_STRING },
    });
    expect(bounded.properties.sort).toEqual({ type: "string", enum: ["a", "b"] });
    expect(bounded.properties.note).toEqual({ type: ["string", "null"], maxLength: 10 });
    // A copy: the route's own schema object (shared between routes) is left as it was.
    expect(schema.properties.page).toEqual({ type: "integer", minimum: 1 });
  });

  it("refuses request schemas whose bounds it cannot see or whose errors would not list the values", () => {
    expect(() =>
      boundRequestSchema({ type: "object", properties: { a: { $ref: "X" } } }, "GET /x body"),
    ).toThrow(/GET \/x body\/a: request schemas are inline/);
    const union = {
      anyOf: [
        { const: "a", type: "string" },
        { const: "b", type: "string" },
      ],
    };
    expect(() => boundRequestSchema(union, "GET /x querystring")).toThrow(/use StringEnum/);
  });
});
