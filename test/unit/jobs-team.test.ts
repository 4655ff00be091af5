/**
 * One polling loop for a queue's concurrent handlers (lib/jobs/team.ts), over a fake pg-boss: the polls an empty
 * queue costs, concurrency up to the team's size, each message completed or failed on its own, expiry, and stop.
 */
import type PgBoss from "pg-boss";
import { describe, expect, it } from "vitest";
import { startTeam } from "../../lib/jobs/team.ts";
import { createLogger } from "../../lib/logger.ts";

const log = createLogger({ level: "silent" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function fakeBoss(queued: { id: string; expireInSeconds?: number }[] = []) {
  const calls = { fetches: 0, batchSizes: [] as number[], completed: [] as string[], failed: [] as string[] };
  const boss = {
    async fetch(_name: string, options: { batchSize: number }) {
      calls.fetches += 1;
      calls.batchSizes.push(options.batchSize);
      return queued.splice(0, options.batchSize).map((j) => ({
        id: j.id,
        name: "q",
        data: {},
        expireInSeconds: j.expireInSeconds ?? 60,
        retryCount: 0,
        retryLimit: 0,
      }));
    },
    async complete(_name: string, id: string) {
      calls.completed.push(id);
    },
    async fail(_name: string, id: string) {
      calls.failed.push(id);
    },
  };
  return { boss: boss as unknown as PgBoss, calls, queued };
}

describe("job team", () => {
  it("polls an empty queue once per interval whatever its size", async () => {
    const { boss, calls } = fakeBoss();
    const started = Date.now();
    const team = startTeam(boss, "q", { size: 4, pollingIntervalSeconds: 0.1, log }, async () => {});
    await sleep(350);
    await team.stop();
    // Each poll waits the interval after the previous one: four slots do not make four loops.
    expect(calls.fetches).toBeGreaterThanOrEqual(1);
    expect(calls.fetches).toBeLessThanOrEqual(Math.floor((Date.now() - started) / 100) + 1);
    expect(calls.batchSizes.every((n) => n === 4)).toBe(true);
  });

  it("runs up to its size at once, completes or fails each message on its own, and notifies its settlements", async () => {
    const ids = ["a", "b", "c", "d", "e", "f"];
    const { boss, calls } = fakeBoss(ids.map((id) => ({ id })));
    let running = 0;
    let most = 0;
    const settled: string[] = [];
    const team = startTeam<object>(
      boss,
      "q",
      { size: 3, pollingIntervalSeconds: 60, log, settled: (job) => settled.push(job.id) },
      async (job) => {
        running += 1;
        most = Math.max(most, running);
        await sleep(30);
        running -= 1;
        if (job.id === "b" || job.id === "e") throw new Error("receiver down");
      },
    );
    // All six are taken without waiting for the 60 s poll: a handler's end fetches again.
    for (let i = 0; i < 100 && calls.completed.length + calls.failed.length < 6; i++) await sleep(20);
    await team.stop();
    expect(most).toBe(3);
    expect(calls.completed.sort()).toEqual(["a", "c", "d", "f"]);
    expect(calls.failed.sort()).toEqual(["b", "e"]);
    expect(settled.sort()).toEqual(ids);
  });

  it("fails a message whose handler outlives its expiry, and one still running when stop gives up", async () => {
    const { boss, calls } = fakeBoss([{ id: "slow", expireInSeconds: 0.05 }]);
    let release = () => {};
    const team = startTeam(boss, "q", { size: 2, pollingIntervalSeconds: 60, log }, async () => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    // pg-boss's floor: an expiry of at least one second.
    for (let i = 0; i < 200 && calls.failed.length === 0; i++) await sleep(20);
    expect(calls.failed).toEqual(["slow"]);
    release();

    const second = fakeBoss([{ id: "stuck" }]);
    const stuck = startTeam(
      second.boss,
      "q",
      { size: 1, pollingIntervalSeconds: 60, log },
      () => new Promise(() => {}),
    );
    await sleep(50);
    await stuck.stop(100);
    expect(second.calls.failed).toEqual(["stuck"]);
    await team.stop();
  });

  it("fetches at once when notified", async () => {
    const { boss, calls, queued } = fakeBoss();
    const team = startTeam(boss, "q", { size: 1, pollingIntervalSeconds: 60, log }, async () => {});
    await sleep(30);
    expect(calls.fetches).toBe(1);
    queued.push({ id: "x" });
    team.notify();
    for (let i = 0; i < 50 && calls.completed.length === 0; i++) await sleep(10);
    await team.stop();
    expect(calls.completed).toEqual(["x"]);
  });
});
