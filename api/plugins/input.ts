/**
 * What every request goes through before a handler sees it, set once for the whole API rather than
 * route by route: numbers and strings bounded in every request schema, NUL bytes refused in every
 * string, JSON bodies without prototype keys, and the spec's camelCase body spellings mapped to snake_case.
 */
import type { FastifyRequest, RouteOptions } from "fastify";
import { errorCodes } from "fastify";
import type { App } from "../types.ts";
import { InputError, sentAliases } from "./errors.ts";

type Schema = Record<string, unknown>;

/** Request parts Fastify validates, by the name its validation errors carry. */
const PARTS = { params: "params", querystring: "query", body: "body", headers: "headers" } as const;
type Part = keyof typeof PARTS;

const SCHEMA_MAPS = ["properties", "patternProperties"];
const SCHEMA_ONE = ["items", "additionalProperties", "not"];
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf"];

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

/** Longest request string when its schema sets no `maxLength` (nor `enum`). */
export const DEFAULT_MAX_STRING = 2048;

/**
 * A copy of a request schema in which every `integer` without its own bounds gets the safe-integer
 * range, every `number` the finite range and every string `maxLength` DEFAULT_MAX_STRING. With
 * `strictNumbers` off (app.ts), Ajv then refuses `1e309` (Infinity), `99999999999999999999` and
 * `9007199254740993` (which would round to …992) by naming the field, instead of passing them on to a
 * store. Columns narrower than that (Postgres `integer`) declare their own tighter bounds. Throws on
 * shapes the API does not use in requests: `$ref` (its bounds could not be checked here) and unions
 * of string constants (use `StringEnum`).
 */
export function boundRequestSchema(schema: unknown, where: string): unknown {
  if (!isObject(schema)) return schema;
  if ("$ref" in schema)
    throw new Error(`${where}: request schemas are inline (found $ref ${String(schema.$ref)})`);
  const out: Schema = { ...schema };
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes("integer")) {
    out.minimum ??= Number.MIN_SAFE_INTEGER;
    out.maximum ??= Number.MAX_SAFE_INTEGER;
  } else if (types.includes("number")) {
    out.minimum ??= -Number.MAX_VALUE;
    out.maximum ??= Number.MAX_VALUE;
  }
  if (types.includes("string") && schema.enum === undefined) out.maxLength ??= DEFAULT_MAX_STRING;
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (!isObject(map)) continue;
    out[key] = Object.fromEntries(
      Object.entries(map).map(([name, sub]) => [name, boundRequestSchema(sub, `${where}/${name}`)]),
    );
  }
  for (const key of SCHEMA_ONE) {
    if (isObject(schema[key])) out[key] = boundRequestSchema(schema[key], where);
  }
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (!Array.isArray(list)) continue;
    if (key === "anyOf" && list.length > 0 && list.every((s) => isObject(s) && typeof s.const === "string")) {
      throw new Error(`${where}: a union of string constants; use StringEnum (its errors list the values)`);
    }
    out[key] = list.map((sub) => boundRequestSchema(sub, where));
  }
  return out;
}

/** JSON pointer segment (RFC 6901), with NUL shown as \u0000 so that a message stays printable. */
const segment = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1").replace(/\0/g, "\\u0000");

/** Path of the first string (or object key) holding a NUL byte, or null. */
function findNul(value: unknown, path: string): string | null {
  if (typeof value === "string") return value.includes("\0") ? path || "/" : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findNul(value[i], `${path}/${i}`);
      if (hit) return hit;
    }
    return null;
  }
  if (isObject(value)) {
    for (const [key, sub] of Object.entries(value)) {
      if (key.includes("\0")) return `${path}/${segment(key)}`;
      const hit = findNul(sub, `${path}/${segment(key)}`);
      if (hit) return hit;
    }
  }
  return null;
}

/**
 * Path of the first key that `JSON.parse` keeps as an own property but that would reach an object's
 * prototype once the value is copied or merged: `__proto__`, or `constructor` holding `prototype`.
 */
function findProtoKey(value: unknown, path: string): { path: string; key: string } | null {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = findProtoKey(value[i], `${path}/${i}`);
      if (hit) return hit;
    }
    return null;
  }
  if (!isObject(value)) return null;
  for (const [key, sub] of Object.entries(value)) {
    const here = `${path}/${segment(key)}`;
    if (key === "__proto__") return { path: here, key };
    if (key === "constructor" && isObject(sub) && Object.hasOwn(sub, "prototype")) {
      return { path: `${here}/prototype`, key: "constructor.prototype" };
    }
    const hit = findProtoKey(sub, here);
    if (hit) return hit;
  }
  return null;
}

/** `{ alias: canonical }` of a body schema's `x-alias-of` properties (see `AliasOf`). */
function aliasesOf(body: unknown): Map<string, string> {
  const aliases = new Map<string, string>();
  const properties = isObject(body) && isObject(body.properties) ? body.properties : {};
  for (const [name, sub] of Object.entries(properties)) {
    if (isObject(sub) && typeof sub["x-alias-of"] === "string") aliases.set(name, sub["x-alias-of"]);
  }
  return aliases;
}

/**
 * Moves alias fields to their canonical name; refuses a body that gives both with different values.
 * Returns canonical → alias of the fields moved.
 */
function applyAliases(body: unknown, aliases: Map<string, string>): Map<string, string> {
  const moved = new Map<string, string>();
  if (!isObject(body)) return moved;
  for (const [alias, canonical] of aliases) {
    if (!Object.hasOwn(body, alias)) continue;
    const value = body[alias];
    if (Object.hasOwn(body, canonical) && JSON.stringify(body[canonical]) !== JSON.stringify(value)) {
      throw new InputError(
        "validation_failed",
        "body",
        `/${alias}`,
        `gives a different value than ${canonical}; send one of the two`,
      );
    }
    if (!Object.hasOwn(body, canonical)) moved.set(canonical, alias);
    body[canonical] = value;
    delete body[alias];
  }
  return moved;
}

/** Ajv plugin (app.ts): `x-alias-of` is an annotation for Ajv, documented in OpenAPI, acted on below. */
export function addInputKeywords<A extends { addKeyword(keyword: string): A }>(ajv: A): A {
  return ajv.addKeyword("x-alias-of");
}

export function registerInputRules(app: App): void {
  app.addHook("onRoute", (route: RouteOptions) => {
    if (!route.schema) return;
    const schema = { ...route.schema } as Record<string, unknown>;
    for (const part of Object.keys(PARTS) as Part[]) {
      if (schema[part] !== undefined) {
        schema[part] = boundRequestSchema(schema[part], `${route.method} ${route.url} ${part}`);
      }
    }
    route.schema = schema;
    const aliases = aliasesOf(schema.body);
    if (aliases.size > 0) {
      const own = route.preValidation;
      const apply = async (request: FastifyRequest) => {
        const moved = applyAliases(request.body, aliases);
        if (moved.size > 0) sentAliases.set(request, moved);
      };
      route.preValidation = [...(Array.isArray(own) ? own : own ? [own] : []), apply];
    }
  });

  app.addHook("preValidation", async (request: FastifyRequest) => {
    for (const [part, field] of Object.entries(PARTS) as [Part, (typeof PARTS)[Part]][]) {
      if (part === "headers") continue; // Node's parser already refuses NUL in headers.
      const path = findNul(request[field], "");
      if (path) throw new InputError("validation_failed", part, path, "must not contain a NUL byte (U+0000)");
    }
  });

  // JSON bodies: an empty body is no body (the schema decides whether one is needed); prototype keys are refused.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    const text = body as string;
    if (text.trim() === "") return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    }
    const proto = findProtoKey(parsed, "");
    if (proto) {
      return done(
        new InputError(
          "forbidden_json_key",
          "body",
          proto.path,
          `is refused: a ${proto.key} key could change object prototypes`,
        ),
        undefined,
      );
    }
    done(null, parsed);
  });
}
