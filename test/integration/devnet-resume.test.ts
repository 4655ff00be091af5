/**
 * The demo network continues the same chain across restarts: a second instance built from the first one's
 * state file, with a later clock, serves every block the first one served, identically, and is at least as
 * high; and it holds exactly what a run that never stopped had made by then. The clock is injected.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DevnetChain } from "../../devnet/chain.ts";
import { type RunningDevnet, runDevnet } from "../../devnet/main.ts";

const CHAINS = 16;
const MINUTE = 60_000;
const dir = mkdtempSync(join(tmpdir(), "devnet-resume-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every known block (main chain, orphans, uncles) by hash, as JSON; with its main-chain flag unless told not to. */
function allBlocks(chain: DevnetChain, withFlag = true): Map<string, string> {
  const out = new Map<string, string>();
  for (let c = 0; c < CHAINS; c++)
    for (let h = 0; h <= chain.height(c); h++)
      for (const hash of chain.hashesAt(c, h)) {
        const b = chain.getBlock(hash)!;
        out.set(hash, JSON.stringify([b.block, b.events, b.uncle, withFlag && b.mainChain]));
      }
  return out;
}

const heights = (chain: DevnetChain): number[] => Array.from({ length: CHAINS }, (_, c) => chain.height(c));

async function start(
  statePath: string,
  clock: { t: number },
  extra: { reorgEvery?: number; reorgDepth?: number; seed?: number } = {},
) {
  const lines: string[] = [];
  const devnet = await runDevnet(
    { port: 0, blocks: 200, live: 2, statePath, now: () => clock.t, ...extra },
    (line) => lines.push(line),
  );
  return { devnet, lines };
}

describe.each([
  { name: "no reorgs", reorgEvery: 0, reorgDepth: 2 },
  // As the demo (bin/commands/start.ts): reorgs deeper than CONFIRMATIONS, here more often.
  { name: "with random reorgs up to 4 deep", reorgEvery: 7, reorgDepth: 4 },
])("devnet restart from its state file: $name", ({ reorgEvery, reorgDepth }) => {
  const statePath = join(dir, reorgEvery ? "reorgs" : "demo", "dev", "devnet.json");
  const clock = { t: 1_800_000_000_000 };
  let first: RunningDevnet | undefined;
  let second: RunningDevnet | undefined;
  let continuous: RunningDevnet | undefined;
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await continuous?.close();
  });

  it("continues the same chain: same hashes, same blocks, heights not lower", async () => {
    const a = await start(statePath, clock, { reorgEvery, reorgDepth });
    first = a.devnet;
    expect(first.resumed).toBe(false);
    expect(a.lines[0]).toContain(`state saved to ${statePath}`);
    const state = JSON.parse(readFileSync(statePath, "utf8"));
    expect(state).toEqual({
      format: 1,
      seed: 1,
      startTimestamp: clock.t - Math.ceil(200 / CHAINS) * 8000,
      blocks: 200,
      live: 2,
      reorgEvery,
      ...(reorgEvery ? { reorgDepth } : {}),
      createdAt: clock.t,
    });
    // The first instance runs for 3 minutes of its clock, producing as blocks fall due.
    const depths: number[] = [];
    first.chain.subscribe((change) => {
      if (change.type === "reorg") depths.push(change.orphaned.length);
    });
    for (let i = 0; i < 6; i++) {
      clock.t += MINUTE / 2;
      first.catchUp();
    }
    // Reorgs as deep as asked, some deeper than CONFIRMATIONS (2) when asked for: those make reorg notices.
    if (reorgEvery) {
      expect(Math.max(...depths)).toBe(reorgDepth);
      expect(depths.filter((d) => d > 2).length).toBeGreaterThan(0);
    } else expect(depths).toEqual([]);
    // Blocks are made as their timestamps pass (a reorg branch may end before its chain's next slot).
    expect(first.chain.latestTimestamp()).toBeLessThanOrEqual(clock.t + (reorgEvery ? 8250 : 0));
    // With random reorgs a served main-chain block may leave the main chain later: compare contents only.
    const served = allBlocks(first.chain, reorgEvery === 0);
    const firstHeights = heights(first.chain);
    // Served over HTTP: the newest main-chain block of chain 5.
    const tip = first.chain.mainChain(5).at(-1)!.block.hash;
    const tipBody = await (await fetch(`${first.nodeUrl}/blockflow/blocks/${tip}`)).text();
    await first.close();
    first = undefined;

    // Down for 7 minutes, then restarted with another seed asked: the state file wins.
    clock.t += 7 * MINUTE;
    const b = await start(statePath, clock, { reorgEvery, reorgDepth, seed: 99 });
    second = b.devnet;
    expect(second.resumed).toBe(true);
    expect(b.lines[0]).toContain(`devnet resumed from ${statePath}`);
    expect(b.lines[1]).toContain("seed 1 (asked 99)");
    const now = allBlocks(second.chain);
    const again = allBlocks(second.chain, reorgEvery === 0);
    const missing = [...served.keys()].filter((h) => again.get(h) !== served.get(h));
    expect(missing).toEqual([]);
    heights(second.chain).forEach((h, c) => {
      expect(h).toBeGreaterThanOrEqual(firstHeights[c]!);
    });
    expect(now.size).toBeGreaterThan(served.size);
    expect(await (await fetch(`${second.nodeUrl}/blockflow/blocks/${tip}`)).text()).toBe(tipBody);

    // A run that never stopped (same state, ticking every 20 s) holds exactly the same chain at this time.
    const runClock = { t: state.createdAt };
    const c = await start(statePath, runClock, { reorgEvery, reorgDepth });
    continuous = c.devnet;
    while (runClock.t < clock.t) {
      runClock.t = Math.min(clock.t, runClock.t + 20_000);
      continuous.catchUp();
    }
    expect(allBlocks(continuous.chain)).toEqual(now);
  });
});
