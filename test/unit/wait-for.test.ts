/**
 * A wait that times out says what it waited for, the state it gave up in, and what the code under test last
 * complained of: in CI a liveness failure is then readable from the log alone.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/pipeline.ts";
import { quietLog, recentLogLines } from "../helpers/stores.ts";

// With TEST_LOG_LEVEL set, quietLog writes to stderr and keeps nothing to show (test/helpers/stores.ts).
const logsToStderr = Boolean(process.env.TEST_LOG_LEVEL);
if (logsToStderr)
  console.warn(
    "[skip notice] waitFor's kept warnings: TEST_LOG_LEVEL sends quietLog's lines to stderr instead of keeping them",
  );

describe("waitFor", () => {
  it("returns once the condition holds", async () => {
    let calls = 0;
    await waitFor("the third call", async () => ++calls === 3, 5_000);
    expect(calls).toBe(3);
  });

  it.skipIf(logsToStderr)("names the wait, its state and the last warnings when it times out", async () => {
    quietLog.info("an info line, not kept");
    quietLog.warn({ group: "events-sink" }, "the consumer crashed and restarts");
    expect(recentLogLines(1)[0]).toContain("the consumer crashed and restarts");
    const error = await waitFor(
      "a condition that never holds",
      async () => false,
      50,
      async () => "events-sink on events is 12 behind",
    ).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(
      /^timed out waiting for a condition that never holds \(50 ms\): events-sink on events is 12 behind\n/,
    );
    expect(message).toContain("the consumer crashed and restarts");
    expect(message).not.toContain("an info line");
  });

  it("says so when the state cannot be read", async () => {
    const error = await waitFor(
      "nothing",
      async () => false,
      20,
      async () => {
        throw new Error("admin connection refused");
      },
    ).catch((e: Error) => e);
    expect((error as Error).message).toContain("(its state could not be read: admin connection refused)");
  });
});
