/**
 * Over Kafka, a block that spends an output can be handled before the block that created it (they are on
 * different chains, so different partitions), and retractions come in between. Whatever the order and
 * batching, the holders pass must give the same crossings and token-holders points as blocks in time
 * order: these cases feed it small hand-made blocks (node BlockEntry shapes) directly.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { node } from "@alephium/web3";
import { afterEach, describe, expect, it } from "vitest";
import { splitStatements } from "../../lib/migrate.ts";
import { instanceIdOf } from "../../lib/series/definition.ts";
import { type HolderMessage, handleHolderMessages } from "../../lib/series/holders.ts";
import type { SeriesDeps } from "../../lib/series/settings.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import { createObjectStore } from "../../lib/stores/object-store.ts";
import { seriesStateHash } from "../helpers/series.ts";
import { openTestCh, quietLog, type TestCh } from "../helpers/stores.ts";

const T = Date.UTC(2026, 0, 5, 10, 0, 0);
const TOKEN = "7".repeat(64);
const ALPH = "0".repeat(64);
const X = "1DrDyTr9RpRsQnDnXo2YRiPzPW4ooHX5LLoqXrqfMrpQH";
const Y = "14UAjZ3qcmEVKdTo84Kwf4RprTQi86w2TefnnGFjov9xF";
const hex = (c: string) => c.repeat(64);

interface Out {
  key: string;
  address: string;
  alph: bigint;
  token?: bigint;
}

/** A block of one transaction spending `inputs` (output keys) into `outputs`. */
function block(hash: string, ts: number, seq: number, inputs: string[], outputs: Out[]): HolderMessage {
  const entry = {
    hash,
    timestamp: ts,
    chainFrom: 0,
    chainTo: 0,
    height: 1,
    deps: [],
    transactions: [
      {
        unsigned: {
          txId: hash.replace(/^./, "f"),
          version: 0,
          networkId: 4,
          gasAmount: 20000,
          gasPrice: "100000000000",
          inputs: inputs.map((key) => ({ outputRef: { hint: 0, key }, unlockScript: "00" })),
          fixedOutputs: outputs.map((o) => ({
            hint: 0,
            key: o.key,
            attoAlphAmount: o.alph.toString(),
            address: o.address,
            tokens: o.token ? [{ id: TOKEN, amount: o.token.toString() }] : [],
            lockTime: 0,
            message: "",
          })),
        },
        scriptExecutionOk: true,
        contractInputs: [],
        generatedOutputs: [],
        inputSignatures: [],
        scriptSignatures: [],
      },
    ],
    nonce: "",
    version: 0,
    depStateHash: "",
    txsHash: "",
    target: "",
    ghostUncles: [],
  } as unknown as node.BlockEntry;
  return { kind: "block", hash, timestamp: ts, seq, block_json: JSON.stringify(entry) };
}

// X receives the token at T+1s, sends all of it to Y at T+2s (from another chain: the spend of X's output),
// Y sends it back at T+3s. A fork block at T+2.5s gives Y more, then is retracted.
const A = block(hex("a"), T + 1_000, 10, [], [{ key: hex("1"), address: X, alph: 5n, token: 10n }]);
const B = block(hex("b"), T + 2_000, 11, [hex("1")], [{ key: hex("2"), address: Y, alph: 5n, token: 10n }]);
const C = block(hex("c"), T + 3_000, 12, [hex("2")], [{ key: hex("3"), address: X, alph: 4n, token: 10n }]);
const FORK = block(hex("d"), T + 2_500, 13, [], [{ key: hex("4"), address: Y, alph: 1n, token: 3n }]);
const unFork: HolderMessage = { kind: "retraction", hash: hex("d"), seq: 14 };

describe("holders: the same crossings whatever the order of spends and outputs", () => {
  const opened: TestCh[] = [];
  afterEach(async () => {
    for (const t of opened.splice(0)) await t.close();
  });

  /**
   * Fresh stores, the batches in the given order, then the state and the token's 1m points. With `dieAfter`, the
   * pass dies once, right after the insert or statement of that label (it is written, the pass throws), in the batch
   * at `dieInBatch` when given (else the first to write it), and the next batch goes on.
   */
  async function run(batches: HolderMessage[][], options: { dieAfter?: string; dieInBatch?: number } = {}) {
    // chDB holds one data directory per process: the previous run's stores close first.
    for (const t of opened.splice(0)) await t.close();
    const t = await openTestCh();
    opened.push(t);
    let died = false;
    let batchIndex = 0;
    const dieAfter = (label: string) => {
      const inBatch = options.dieInBatch === undefined || options.dieInBatch === batchIndex;
      if (label === options.dieAfter && inBatch && !died) {
        died = true;
        throw new Error(`the pass dies after ${label}`);
      }
    };
    const ch: Ch = {
      ...t.ch,
      async insert(label, table, rows) {
        await t.ch.insert(label, table, rows);
        dieAfter(label);
      },
      async command(label, sql, params) {
        await t.ch.command(label, sql, params);
        dieAfter(label);
      },
    };
    const deps: SeriesDeps = {
      ch,
      objects: createObjectStore({ dir: mkdtempSync(join(tmpdir(), "holders-o-")) }),
      settings: { retentionMs: 1000 * 86_400_000, pageDays: 1, segmentPoints: 240, rawSegmentMs: 3_600_000 },
      log: quietLog,
    };
    for (const [i, batch] of batches.entries()) {
      batchIndex = i;
      await handleHolderMessages(deps, batch).catch((error: Error) => {
        if (!/dies after/.test(error.message)) throw error;
      });
    }
    const crossings = await t.ch.query<{ c: string }>(
      "t",
      `SELECT concat(address, ' ', toString(ts - ${T}), ' ', toString(change)) AS c FROM holder_changes FINAL
       WHERE token_id = {token:String} AND change != 0 ORDER BY ts, address`,
      { token: TOKEN },
    );
    const raw = await t.ch.query<{ p: string }>(
      "t",
      `SELECT concat(toString(t - ${T}), ' ', key, '=', value) AS p FROM series_points FINAL
       WHERE instance_id = {id:String} AND scale = '0' AND deleted = 0 ORDER BY t, key`,
      { id: instanceIdOf("token-holders", { token_id: TOKEN }) },
    );
    return {
      died,
      state: await seriesStateHash(t),
      crossings: crossings.map((r) => r.c),
      raw: raw.map((r) => r.p),
    };
  }

  it("in time order: X gains, loses to Y, gains again; the retracted fork leaves nothing", async () => {
    const inOrder = await run([[A], [B], [FORK], [unFork], [C]]);
    // (Y's address sorts before X's.)
    expect(inOrder.crossings).toEqual([
      `${X} 1000 1`,
      `${Y} 2000 1`,
      `${X} 2000 -1`,
      `${Y} 3000 -1`,
      `${X} 3000 1`,
    ]);
    expect(inOrder.raw).toEqual([
      "1000 gained=1",
      "1000 holders_delta=1",
      "1000 lost=0",
      "2000 gained=1",
      "2000 holders_delta=0",
      "2000 lost=1",
      "3000 gained=1",
      "3000 holders_delta=0",
      "3000 lost=1",
    ]);
    expect(inOrder.state.holders!.rows).toBeGreaterThan(10);

    // Spends first, outputs later (other partitions), the fork and its retraction in between, replays.
    for (const batches of [
      [[C], [B], [FORK], [A], [unFork]],
      [[B, C], [FORK, unFork], [A]],
      [[C, FORK], [B], [A], [unFork], [A, B, C]],
    ]) {
      const other = await run(batches);
      expect(other.crossings).toEqual(inOrder.crossings);
      expect(other.raw).toEqual(inOrder.raw);
      expect(other.state).toEqual(inOrder.state);
    }
  });

  it("a pass that dies after writing, replayed with more blocks, leaves the state of one clean pass", async () => {
    // The dead pass sees only A: X gains at T+1s. Its replay (a new holder gets everything uncommitted as one
    // batch) also holds Z (Y gets tokens at T+0.5s, from another chain) and B0 (X's output spent to Y at T+1s):
    // nobody crosses zero at T+1s any more, so what the dead pass wrote for that moment must be taken back.
    const Z = block(hex("5"), T + 500, 20, [], [{ key: hex("6"), address: Y, alph: 2n, token: 5n }]);
    const B0 = block(
      hex("7"),
      T + 1_000,
      21,
      [hex("1")],
      [{ key: hex("8"), address: Y, alph: 5n, token: 10n }],
    );
    const clean = await run([[A, Z, B0]]);
    expect(clean.crossings).toEqual([`${Y} 500 1`]);
    for (const label of ["holder_pending_insert", "holder_changes_insert", "holder_facts_insert"]) {
      const replayed = await run([[A], [A, Z, B0]], { dieAfter: label });
      expect(replayed.died, label).toBe(true);
      expect(replayed.raw, label).toEqual(clean.raw);
      expect(replayed.state, label).toEqual(clean.state);
    }
  });

  describe("over several hours (the opening balance from the stored hours' net moves)", () => {
    const H = 3_600_000;
    const k = (n: number) => n.toString(16).padStart(64, "0");
    // X receives 10 in the first hour and 5 in the second; a fork in the second hour gives X 3 more and is
    // retracted; X sends the 10 to Y in the third hour (Y gains) and the 5 in the fourth (X loses, its balance 0).
    const A1 = block(k(0xa1), T + 1_000, 30, [], [{ key: k(1), address: X, alph: 1n, token: 10n }]);
    const A2 = block(k(0xa2), T + H + 1_000, 31, [], [{ key: k(2), address: X, alph: 1n, token: 5n }]);
    const F2 = block(k(0xf2), T + H + 2_000, 32, [], [{ key: k(9), address: X, alph: 1n, token: 3n }]);
    const unF2: HolderMessage = { kind: "retraction", hash: k(0xf2), seq: 33 };
    const B3 = block(
      k(0xb3),
      T + 2 * H + 1_000,
      34,
      [k(1)],
      [{ key: k(3), address: Y, alph: 1n, token: 10n }],
    );
    const C4 = block(
      k(0xc4),
      T + 3 * H + 1_000,
      35,
      [k(2)],
      [{ key: k(4), address: Y, alph: 1n, token: 5n }],
    );
    const expected = [`${X} 1000 1`, `${Y} ${2 * H + 1_000} 1`, `${X} ${3 * H + 1_000} -1`];

    const hourSums = async () =>
      (
        await opened[0]!.ch.query<{ s: string }>(
          "t",
          `SELECT concat(address, ' ', toString(intDiv(hour - ${T}, ${H})), ' ', toString(net)) AS s
           FROM holder_hour_sums FINAL WHERE token_id = {token:String} AND net != 0 ORDER BY address, hour`,
          { token: TOKEN },
        )
      ).map((r) => r.s);

    it("gives the crossings of blocks in time order, whatever the order of hours, forks and retractions", async () => {
      const inOrder = await run([[A1], [A2], [B3], [C4]]);
      expect(inOrder.crossings).toEqual(expected);
      // Y's address sorts before X's.
      expect(await hourSums()).toEqual([
        `${Y} 2 10`,
        `${Y} 3 5`,
        `${X} 0 10`,
        `${X} 1 5`,
        `${X} 2 -10`,
        `${X} 3 -5`,
      ]);
      for (const batches of [
        // The fork's retraction reaches an earlier hour than the batch's: X's fourth-hour loss depends on it.
        [[A1], [A2], [F2], [B3], [unF2], [C4]],
        [[A1], [A2], [F2], [B3], [C4], [unF2]],
        // Spends before the outputs they spend, hours out of order, replays.
        [[C4], [B3], [F2], [A2], [A1], [unF2]],
        [[B3, C4], [A2, F2], [A1], [unF2], [A1, A2, B3, C4]],
      ]) {
        const other = await run(batches);
        expect(other.crossings, JSON.stringify(batches.map((b) => b.map((m) => m.hash.slice(-2))))).toEqual(
          expected,
        );
        expect(other.raw).toEqual(inOrder.raw);
        expect(other.state).toEqual(inOrder.state);
      }
      // The fork kept (never retracted): X holds 3 at the end and does not lose in the fourth hour.
      const forkKept = await run([[A1], [F2], [C4], [B3], [A2]]);
      expect(forkKept.crossings).toEqual([`${X} 1000 1`, `${Y} ${2 * H + 1_000} 1`]);
    });

    it("a pass that dies before or after the hours' write, replayed, leaves the state of one clean pass", async () => {
      const clean = await run([[A1], [A2], [B3, C4]]);
      expect(clean.crossings).toEqual(expected);
      for (const label of [
        "holder_moves_insert",
        "holder_hour_sums_recompute",
        "holder_period_sums_recompute",
        "holder_changes_insert",
      ]) {
        // The pass of the third and fourth hours dies; its replay reads the opening balance from the hours.
        const replayed = await run([[A1], [A2], [B3, C4], [B3, C4]], { dieAfter: label, dieInBatch: 2 });
        expect(replayed.died, label).toBe(true);
        expect(replayed.crossings, label).toEqual(expected);
        expect(replayed.state, label).toEqual(clean.state);
      }
    });

    it("the migration's rebuild of the hours from stored moves gives the pass's own sums", async () => {
      const r = await run([[A1], [A2], [F2], [B3], [unF2], [C4]]);
      const before = await hourSums();
      const ch = opened[0]!.ch;
      const sql = readFileSync(
        new URL("../../clickhouse/0018_holder_hour_sums.sql", import.meta.url),
        "utf8",
      );
      const rebuild = splitStatements(sql).find((q) => q.replace(/--.*$/gm, "").trim().startsWith("INSERT"));
      expect(rebuild).toBeDefined();
      await ch.command("t", "TRUNCATE TABLE holder_hour_sums");
      expect(await hourSums()).toEqual([]);
      await ch.command("t", rebuild!);
      expect(await hourSums()).toEqual(before);
      expect(await seriesStateHash(opened[0]!)).toEqual(r.state);
    });
  });

  it("counts ALPH holders from the same outputs", async () => {
    const r = await run([[A], [B], [C]]);
    const [alph] = await opened[0]!.ch.query<{ n: string }>(
      "t",
      "SELECT toString(sum(change)) AS n FROM holder_changes FINAL WHERE token_id = {t:String}",
      { t: ALPH },
    );
    // ALPH moves with the token: X gains, loses, gains; Y gains and loses. One ALPH holder at the end.
    expect(Number(alph?.n)).toBe(1);
    expect(r.crossings).toHaveLength(5);
  });
});
