/** Documentation and operations: /openapi.json, /healthz, /readyz, /metrics. */
import { Type } from "@sinclair/typebox";
import type { ApiDeps, App } from "../../types.ts";

export async function metaRoutes(app: App, deps: ApiDeps): Promise<void> {
  app.get(
    "/openapi.json",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "OpenAPI 3.0 description of this API",
        response: { 200: Type.Object({}, { additionalProperties: true }) },
      },
    },
    async () => app.swagger(),
  );

  app.get(
    "/healthz",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "Liveness: the process answers",
        response: { 200: Type.Object({ status: Type.Literal("ok") }) },
      },
    },
    async () => ({ status: "ok" as const }),
  );

  const StoreState = Type.Union([Type.Literal("ok"), Type.Literal("down"), Type.Literal("off")]);
  const Ready = Type.Object({
    status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")]),
    postgres: StoreState,
    clickhouse: StoreState,
  });
  app.get(
    "/readyz",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "Readiness: checks each store with a trivial query",
        description:
          "200 when every configured store answers (stores switched off count as ready), else 503.",
        response: { 200: Ready, 503: Ready },
      },
    },
    async (_request, reply) => {
      const check = async (fn: (() => Promise<unknown>) | null) => {
        if (!fn) return "off" as const;
        try {
          await fn();
          return "ok" as const;
        } catch {
          return "down" as const;
        }
      };
      const { pg, ch } = deps;
      const postgres = await check(pg ? () => pg.query("readyz", "SELECT 1") : null);
      const clickhouse = await check(ch ? () => ch.query("readyz", "SELECT 1") : null);
      const ok = postgres !== "down" && clickhouse !== "down";
      return reply.code(ok ? 200 : 503).send({ status: ok ? "ok" : "degraded", postgres, clickhouse });
    },
  );

  app.get(
    "/metrics",
    {
      config: { access: "public", db: "none" },
      schema: {
        tags: ["Docs"],
        summary: "Prometheus metrics (text exposition format)",
        response: {
          200: {
            description: "Prometheus text exposition format.",
            content: { "text/plain": { schema: Type.String() } },
          },
        },
      },
    },
    async (_request, reply) => {
      reply.type(deps.metrics.registry.contentType);
      return deps.metrics.registry.metrics();
    },
  );
}
