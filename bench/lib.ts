/**
 * Bench helpers: a bounded autocannon run, and a bare Fastify server that serves given bytes
 * (the upper bound each bench prints beside its own figures, measured in the same run).
 */
import autocannon from "autocannon";
import Fastify from "fastify";

export interface LoadResult {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

export async function load(
  label: string,
  url: string,
  options: { headers?: Record<string, string>; seconds?: number; connections?: number } = {},
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    headers: options.headers,
    duration: options.seconds ?? Number(process.env.BENCH_SECONDS ?? 5),
    connections: options.connections ?? 10,
  });
  return {
    label,
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/** A bare Fastify route serving exactly `body` with the same content type. */
export async function bareServer(body: string, contentType = "application/json; charset=utf-8") {
  const app = Fastify({ logger: false });
  app.get("/*", async (_req, reply) => reply.type(contentType).send(body));
  const url = await app.listen({ host: "127.0.0.1", port: 0 });
  return { url, close: () => app.close() };
}

export function printTable(title: string, rows: LoadResult[], bound: LoadResult) {
  process.stdout.write(`\n${title}\n`);
  process.stdout.write(
    "route                                         req/s    p50 ms  p99 ms  non-2xx  vs bare req/s\n",
  );
  for (const r of [...rows, bound]) {
    const ratio = `${((r.rps / Math.max(1, bound.rps)) * 100).toFixed(1)}%`;
    process.stdout.write(
      `${r.label.padEnd(44)} ${String(r.rps).padStart(7)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(7)} ${String(r.non2xx).padStart(8)}  ${ratio.padStart(8)}\n`,
    );
  }
}
