/**
 * Response serializers compiled once per distinct schema. Fastify compiles a fast-json-stringify serializer for every
 * route, method and status code it declares (HEAD routes included), and each compile validates every shared schema
 * again: 1,405 compiles when the API starts, about 1,200 of them for the same error body (a `$ref` to Problem), and
 * most of the API's start-up time (docs/benchmarks.md, bench:pipeline, twelfth session). A serializer depends only on its schema and on
 * the shared schemas it may reference (the default compiler, @fastify/fast-json-stringify-compiler, ignores the
 * route, method and status), so routes whose schemas are equal share one compiled function: 118 compiles.
 *
 * Handed to Fastify as `schemaController.compilersFactory.buildSerializer` (api/app.ts), its documented hook for
 * building serializers; the compiling itself is still the default compiler's. (Validators keep Fastify's default
 * builder: with a custom one Fastify no longer lower-cases the header names of a `headers` schema.)
 */
import SerializerSelector, { type SerializerFactory } from "@fastify/fast-json-stringify-compiler";

export interface SharedSerializers {
  /** The factory to hand Fastify. */
  buildSerializer: SerializerFactory;
  /** Serializers compiled so far, and serializers asked for (the difference was shared). */
  stats(): { compiled: number; requested: number };
}

export function sharedSerializers(): SharedSerializers {
  const base = SerializerSelector();
  // Sets of shared schemas (and options) by their JSON, as small ids: each plugin context hands its own copy.
  // The default compiler is built once per scope: building it checks every shared schema again (Fastify asks once per
  // plugin context, a sixth of `buildApp`'s CPU time when each was built).
  const scopes = new Map<string, { id: number; compile: ReturnType<typeof base> }>();
  const compiled = new Map<string, (doc: unknown) => string>();
  let requested = 0;
  return {
    buildSerializer(externalSchemas, options) {
      const scopeKey = JSON.stringify([externalSchemas ?? null, options ?? null]);
      let entry = scopes.get(scopeKey);
      if (!entry) {
        entry = { id: scopes.size, compile: base(externalSchemas, options) };
        scopes.set(scopeKey, entry);
      }
      const { id: scope, compile } = entry;
      return (route) => {
        requested++;
        const key = `${scope}\n${JSON.stringify(route.schema)}`;
        let serializer = compiled.get(key);
        if (!serializer) {
          serializer = compile(route);
          compiled.set(key, serializer);
        }
        return serializer;
      };
    },
    stats: () => ({ compiled: compiled.size, requested }),
  };
}
