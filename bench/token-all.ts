/**
 * Benchmark of GET /token/all on the real app (seeded registry, embedded stores) listening on 127.0.0.1,
 * beside a bare Fastify route that serves the same bytes in the same run: the ratio is the figure that
 * survives noisy machines. Run: `npx tsx bench/token-all.ts` (BENCH_SECONDS, BENCH_CONNECTIONS optional).
 */
import Fastify from "fastify";
import { createTestApp } from "../test/helpers/app.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const CASES = [
  { name: "default page", path: "/token/all" },
  { name: "search", path: "/token/all?search=usd" },
  { name: "pageSize -1", path: "/token/all?pageSize=-1" },
];

/** The part of autocannon's result used here (the package ships no type declarations). */
interface CannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  errors: number;
  non2xx: number;
}
type Cannon = (options: { url: string; duration: number; connections: number }) => Promise<CannonResult>;
const cannonModule: string = "autocannon";
const autocannon = ((await import(cannonModule)) as { default: Cannon }).default;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function measure(url: string): Promise<Figures> {
  const result = await autocannon({ url, duration: SECONDS, connections: CONNECTIONS });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
  };
}

async function main(): Promise<void> {
  // Public routes are rate limited per IP: lift the limit so the bench measures the route, not the 429 path.
  const t = await createTestApp({ env: { PUBLIC_RPM: "1000000" } });
  const bare = Fastify();
  try {
    const appUrl = await t.app.listen({ host: "127.0.0.1", port: 0 });
    const bodies = new Map<string, string>();
    for (const c of CASES) bodies.set(c.path, (await t.app.inject({ url: c.path })).body);
    bare.get("/token/all", async (request, reply) => {
      reply.type("application/json; charset=utf-8");
      return bodies.get(request.url) ?? bodies.get("/token/all");
    });
    const bareUrl = await bare.listen({ host: "127.0.0.1", port: 0 });

    console.log(
      `GET /token/all, ${SECONDS}s x ${CONNECTIONS} connections per run, registry on ${t.deps.pg?.kind}`,
    );
    console.log("case            bytes   app req/s  p50 ms  p99 ms | bare req/s  p50 ms  p99 ms | app/bare");
    for (const c of CASES) {
      const app = await measure(`${appUrl}${c.path}`);
      const base = await measure(`${bareUrl}${c.path}`);
      const row = [
        c.name.padEnd(14),
        String(bodies.get(c.path)?.length ?? 0).padStart(7),
        app.rps.toFixed(0).padStart(11),
        String(app.p50).padStart(7),
        String(app.p99).padStart(7),
        "|",
        base.rps.toFixed(0).padStart(10),
        String(base.p50).padStart(7),
        String(base.p99).padStart(7),
        "|",
        `${((100 * app.rps) / base.rps).toFixed(1)}%`.padStart(8),
        app.errors + base.errors > 0 ? `  (errors/non-2xx: app ${app.errors}, bare ${base.errors})` : "",
      ];
      console.log(row.join(" "));
    }
  } finally {
    await bare.close();
    await t.close();
  }
}

await main();
