/**
 * Which test files run in which CI pass. Every file runs in the embedded pass (`npm test`: PGlite, chDB, the
 * in-process bus); the PostgreSQL + Kafka pass (`npm run test:server`) runs only the files declared for it. A file
 * that uses Postgres or the bus (directly, or through a helper in test/helpers/) declares its passes in one line:
 *
 *   // Test passes: embedded and server (why its behaviour differs on PostgreSQL or Kafka).
 *   // Test passes: embedded (why PostgreSQL or Kafka would add nothing).
 *   // Test passes: server (why it runs only there; it skips with a notice in the embedded pass).
 *
 * test/unit/test-passes.test.ts fails, naming them, while a file that uses either has no such line.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export type Pass = "embedded" | "server";

export interface TestFile {
  /** Relative to the repository root, with forward slashes. */
  path: string;
  /** What it reaches of Postgres or the bus (empty: neither, and it needs no declaration). */
  uses: string[];
  /** Null when the file has no declaration line. */
  passes: Pass[] | null;
  reason: string;
}

export const DECLARATION = /^\/\/ Test passes: (embedded and server|embedded|server) \((.+)\)\.?$/m;

/** Names that reach Postgres or the bus wherever they appear; helpers' exports that use them are added. */
const BASE = [
  "openTestPg",
  "startTestPipeline",
  "createBus",
  "TEST_POSTGRES_URL",
  "KAFKA_BROKERS",
  '"kafkajs"',
];

function listTests(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === "helpers" || e.name === "fixtures" ? [] : listTests(p);
    return e.name.endsWith(".test.ts") ? [p] : [];
  });
}

/** A quoted name (a module) is matched as written, an identifier as a whole word. */
const mentions = (text: string, name: string) =>
  name.startsWith('"') ? text.includes(name) : new RegExp(`\\b${name}\\b`).test(text);

/**
 * BASE plus every function or constant a helper in test/helpers/ exports whose top-level statement mentions one of
 * them (until nothing changes): `createTestApp` opens a Postgres store, so a file that calls it uses Postgres.
 */
function reachingNames(helpers: string): string[] {
  const exported: { name: string; body: string }[] = [];
  for (const f of readdirSync(helpers).filter((n) => n.endsWith(".ts"))) {
    // Top-level statements start at column 0; a statement runs to the next one.
    for (const chunk of readFileSync(join(helpers, f), "utf8").split(/\n(?=\S)/)) {
      const m = /^export (?:async )?(?:function\*? |const |let )(\w+)/.exec(chunk);
      if (m) exported.push({ name: m[1] as string, body: chunk.slice(m[0].length) });
    }
  }
  const names = new Set(BASE);
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of exported) {
      if (!names.has(e.name) && [...names].some((n) => mentions(e.body, n))) {
        names.add(e.name);
        grew = true;
      }
    }
  }
  return [...names];
}

/** Every test file under `root`/test with what it uses and what it declares. */
export function testFiles(root: string): TestFile[] {
  const names = reachingNames(join(root, "test", "helpers"));
  return listTests(join(root, "test"))
    .sort()
    .map((file) => {
      const text = readFileSync(file, "utf8");
      const d = DECLARATION.exec(text);
      const passes: Pass[] | null = d
        ? d[1] === "embedded and server"
          ? ["embedded", "server"]
          : [d[1] as Pass]
        : null;
      return {
        path: relative(root, file).split("\\").join("/"),
        uses: names.filter((n) => mentions(text, n)),
        passes,
        reason: d?.[2] ?? "",
      };
    });
}

/** The files the PostgreSQL + Kafka pass runs. */
export function serverPassFiles(root: string): string[] {
  return testFiles(root)
    .filter((f) => f.passes?.includes("server"))
    .map((f) => f.path);
}
