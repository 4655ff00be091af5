/**
 * Every test file that uses Postgres or the bus says which CI passes run it (test/passes.ts), so none drops out of
 * the PostgreSQL + Kafka pass unnoticed: a new one fails here, named, until it has its `// Test passes:` line.
 */
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { serverPassFiles, testFiles } from "../passes.ts";

const root = resolve(import.meta.dirname, "../..");
const files = testFiles(root);

describe("test passes", () => {
  it("every file that uses Postgres or the bus declares its passes", () => {
    const undeclared = files.filter((f) => f.uses.length > 0 && f.passes === null);
    if (undeclared.length > 0) {
      console.error(
        "Test files that use Postgres or the bus without a `// Test passes:` line (see docs/development.md#test-passes):\n" +
          undeclared.map((f) => `  ${f.path} (uses ${f.uses.join(", ")})`).join("\n"),
      );
    }
    expect(undeclared.map((f) => f.path)).toEqual([]);
  });

  it("the PostgreSQL + Kafka pass holds the files that run only there", () => {
    const server = serverPassFiles(root);
    for (const f of files.filter((f) => f.passes?.length === 1 && f.passes[0] === "server")) {
      expect(server).toContain(f.path);
    }
    expect(server).toContain("test/integration/replicas.test.ts");
    expect(server).toContain("test/integration/replicas-processes.test.ts");
    // A declaration on a file that reaches neither store would be a typo'd helper name or a stale line.
    const stale = files.filter((f) => f.passes !== null && f.uses.length === 0).map((f) => f.path);
    expect(stale).toEqual([]);
  });
});
