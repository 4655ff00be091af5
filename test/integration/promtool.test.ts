/**
 * promtool (Debian package `prometheus`, installed by .ci/run) checks the alert rules of compose/ and the PromQL of
 * every dashboard panel (written as recording rules into a scratch file), as Prometheus itself would load them.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ALERTS, DASHBOARD, dashboardExpressions } from "../helpers/promql.ts";

const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" });
const present = promtool.status === 0;
if (!present)
  console.log(
    "[promtool] skipped: promtool is not installed (Debian package `prometheus`; .ci/run installs it)",
  );

describe.skipIf(!present)("promtool", () => {
  const dir = mkdtempSync(join(tmpdir(), "promtool-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("accepts the alert rules", () => {
    const r = spawnSync("promtool", ["check", "rules", ALERTS], { encoding: "utf8" });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("accepts every dashboard panel's query", () => {
    const targets = dashboardExpressions(readFileSync(DASHBOARD, "utf8"));
    const rules = targets.map(
      (t, i) => `      - record: dashboard:panel_${i}\n        expr: ${JSON.stringify(t.expr)}`,
    );
    const file = join(dir, "dashboard-rules.yml");
    writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join("\n")}\n`);
    const r = spawnSync("promtool", ["check", "rules", file], { encoding: "utf8" });
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`SUCCESS: ${targets.length} rules found`);
  });
});
