import { defineConfig } from "vitest/config";
import { TimesReporter } from "./scripts/times-reporter.ts";
import { serverPassFiles } from "./test/passes.ts";

// `npm run test:server` (TEST_PASS=server): only the files declared for the PostgreSQL + Kafka pass (test/passes.ts).
const pass = process.env.TEST_PASS ?? "embedded";
if (pass !== "embedded" && pass !== "server")
  throw new Error(`TEST_PASS is ${pass}: allowed are embedded, server`);

export default defineConfig({
  test: {
    include: pass === "server" ? serverPassFiles(import.meta.dirname) : ["test/**/*.test.ts"],
    // chDB allows one data directory per process: every test file runs in its own forked process.
    pool: "forks",
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file's time goes to test-output/times-<pass>.json: `npm run test:times` prints the slowest.
    reporters: ["default", new TimesReporter(`test-output/times-${pass}.json`)],
  },
});
