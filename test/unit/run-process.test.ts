/**
 * Ctrl-C reaches a process twice when wrappers (npm, tsx) forward the terminal's signal to it: the repeat must not
 * cut the shutdown short (that left a batch half applied), while a deliberate second Ctrl-C still exits at once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const script = fileURLToPath(new URL("../fixtures/process/slow-close.ts", import.meta.url));

async function started(
  closeMs: number,
): Promise<{ child: ChildProcess; out: () => string; exit: Promise<number | null> }> {
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CLOSE_MS: String(closeMs) },
  });
  let out = "";
  child.stdout?.on("data", (d) => (out += String(d)));
  child.stderr?.on("data", (d) => (out += String(d)));
  const exit = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  for (let i = 0; i < 200 && !out.includes("ready"); i++) await new Promise((r) => setTimeout(r, 50));
  expect(out).toContain("ready");
  return { child, out: () => out, exit };
}

describe("runProcess signals", () => {
  it("treats a signal repeated within 2 s as the same Ctrl-C and finishes closing", async () => {
    const p = await started(1_500);
    p.child.kill("SIGINT");
    // As npm forwards it: the same Ctrl-C arrives again a moment later (two at once may be merged into one).
    await new Promise((r) => setTimeout(r, 200));
    p.child.kill("SIGINT");
    expect(await p.exit).toBe(0);
    expect(p.out()).toContain("closed");
    expect(p.out()).toContain("Signal repeated by a wrapper");
  }, 30_000);

  it("exits at once on a second signal sent later, while the close still runs", async () => {
    const p = await started(8_000);
    p.child.kill("SIGINT");
    await new Promise((r) => setTimeout(r, 2_300));
    expect(p.child.exitCode).toBe(null);
    p.child.kill("SIGINT");
    expect(await p.exit).toBe(130);
    expect(p.out()).toContain("Second signal: exiting now");
    expect(p.out()).not.toContain("closed");
  }, 30_000);
});
