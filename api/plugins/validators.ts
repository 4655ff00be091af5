/**
 * Request validators compiled once per distinct schema, as api/plugins/serializers.ts does for responses. Fastify
 * asks its validator builder for one validator per route and request part (HEAD routes included) and builds an Ajv
 * instance per plugin context; most routes share their query, params and header schemas (paging, filters, keys), so
 * routes whose schemas are equal share one compiled function. Compiling was about two fifths of `buildApp`'s CPU
 * time (a third of a second to more than a second per API process and per test file: docs/development.md#test-times).
 *
 * The compiling itself is @fastify/ajv-compiler's, Fastify's default, with the app's Ajv options and plugins. With a
 * builder of its own an app is "custom" to Fastify, which then leaves header schemas as written: this one lower-cases
 * their property names and `required` entries as Fastify's default path does (header names arrive lower-cased).
 */
import AjvCompiler from "@fastify/ajv-compiler";

type BuildValidator = ReturnType<typeof AjvCompiler>;
type RouteSchema = Parameters<ReturnType<BuildValidator>>[0];

export interface SharedValidators {
  /** The factory to hand Fastify (`schemaController.compilersFactory.buildValidator`). */
  buildValidator: BuildValidator;
  /** Validators compiled so far, and validators asked for (the difference was shared). */
  stats(): { compiled: number; requested: number };
}

export function sharedValidators(): SharedValidators {
  const base = AjvCompiler();
  // Per set of shared schemas and Ajv options (plugins by name): the pooled builder and an id for the cache key.
  const scopes = new Map<string, { id: number; compile: ReturnType<BuildValidator> }>();
  const compiled = new Map<string, ReturnType<ReturnType<BuildValidator>>>();
  let requested = 0;
  const build = ((externalSchemas, options) => {
    const plugins = (options?.plugins ?? []).map((p) => (Array.isArray(p) ? p[0]?.name : p?.name));
    const scopeKey = JSON.stringify([
      externalSchemas ?? null,
      options?.customOptions ?? null,
      options?.mode,
      plugins,
    ]);
    let scope = scopes.get(scopeKey);
    if (!scope) {
      scope = { id: scopes.size, compile: base(externalSchemas, options) };
      scopes.set(scopeKey, scope);
    }
    const { id, compile } = scope;
    return (route: RouteSchema) => {
      requested++;
      const schema = route.httpPart === "headers" ? lowerCaseHeaderNames(route.schema) : route.schema;
      const key = `${id}\n${route.httpPart ?? ""}\n${JSON.stringify(schema)}`;
      let validator = compiled.get(key);
      if (!validator) {
        validator = compile({ ...route, schema });
        compiled.set(key, validator);
      }
      return validator;
    };
  }) as BuildValidator;
  return { buildValidator: build, stats: () => ({ compiled: compiled.size, requested }) };
}

/** A header schema with its property names and `required` entries lower-cased (Fastify's default does the same). */
function lowerCaseHeaderNames<S>(schema: S): S {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const s = schema as { properties?: Record<string, unknown>; required?: unknown };
  return {
    ...s,
    ...(s.properties && typeof s.properties === "object"
      ? {
          properties: Object.fromEntries(
            Object.entries(s.properties).map(([name, value]) => [name.toLowerCase(), value]),
          ),
        }
      : {}),
    ...(Array.isArray(s.required)
      ? { required: s.required.map((name) => (typeof name === "string" ? name.toLowerCase() : name)) }
      : {}),
  } as S;
}
