/**
 * The devnet's DIA-like price oracle, homed on chain g→g of {@link ORACLE_GROUP}: the feeder deploys it in that
 * chain's first block, then posts each key about once a minute of chain time. A post is a script tx of the
 * feeder calling the oracle (like the devnet's other contract calls: the feeder's inputs, its change, no
 * contract output since the oracle's assets do not change) whose events are one
 * `OracleUpdate(key: ByteVec, value: U256, timestamp: U256)` (event index 1) per key due, in key order: key = hex
 * of the UTF-8 text ("ALPH/USD"), value with 8 decimals, timestamp = the block timestamp in seconds.
 *
 * Values wander: a random step per post (standard deviation `vol`), a drift that alternates up and down in
 * phases of 40 + 7·k minutes (from the seed and the chain time only), and a pull back to the feed's level.
 */
import type { Accounts, Ledger } from "./ledger.ts";
import { ORACLE_FEEDS, ORACLE_VALUE_DECIMALS, type Plan } from "./plan.ts";
import { hashUnit, type Rng } from "./random.ts";
import { byteVec, type TxBuilder, USER_GAS_PRICE, u256 } from "./tx-builder.ts";
import type { BlockCtx, ContractRec, EventSpec } from "./types.ts";

const MINUTE = 60_000;
const SCALE = 10 ** ORACLE_VALUE_DECIMALS;

export interface Oracle {
  /** On the oracle's home chain: deploys it (first block), then posts the keys that are due. */
  step(ctx: BlockCtx): void;
}

const utf8Hex = (s: string): string => Buffer.from(s, "utf8").toString("hex");

export function createOracle(deps: {
  rng: Rng;
  seed: number;
  plan: Plan;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
}): Oracle {
  const { rng, ledger, builder } = deps;
  const { oracle: planned } = deps.plan;
  const feeder = deps.accounts.feeder;
  const keysHex = ORACLE_FEEDS.map((f) => utf8Hex(f.key));

  const deploy = (ctx: BlockCtx): void => {
    const c = builder.deployContract(ctx, feeder, "oracle", planned.id, { iface: "" });
    if (!c) return;
    c.oracle = {
      // The first posts start near each feed's level, keys staggered over the first minute.
      values: ORACLE_FEEDS.map((f) => BigInt(Math.round(f.usd * (0.95 + 0.1 * rng.next()) * SCALE))),
      nextDue: ORACLE_FEEDS.map((_, k) => ctx.ts + 10_000 + k * 13_000),
    };
  };

  /** The next value of feed `k`, from the last one posted. */
  const nextValue = (k: number, last: bigint, ts: number): bigint => {
    const f = ORACLE_FEEDS[k]!;
    const v = Number(last) / SCALE;
    const phase = Math.floor(ts / ((40 + 7 * k) * MINUTE));
    const drift = (phase % 2 === 0 ? 1 : -1) * (0.2 + 0.4 * hashUnit(deps.seed, 101 + k, phase)) * f.vol;
    // Sum of three uniforms: a bell-shaped step with standard deviation `vol`.
    const noise = (rng.next() + rng.next() + rng.next() - 1.5) * 2 * f.vol;
    const revert = (-0.03 * (v - f.usd)) / f.usd;
    const next = Math.min(f.max, Math.max(f.min, v * (1 + drift + noise + revert)));
    return BigInt(Math.round(next * SCALE));
  };

  const post = (ctx: BlockCtx, c: ContractRec): void => {
    const state = c.oracle!;
    const due = state.nextDue.flatMap((t, k) => (t <= ctx.ts ? [k] : []));
    if (due.length === 0) return;
    const gas = builder.userGas(35000);
    const g = ledger.gather(feeder, ctx.ts, BigInt(gas) * USER_GAS_PRICE);
    // Every output of the feeder still maturing: the keys stay due, posted by a later block.
    if (!g) return;
    ledger.touchContract(ctx, c);
    c.counter += 1;
    const seconds = Math.floor(ctx.ts / 1000);
    const events: EventSpec[] = due.map((k) => {
      const value = nextValue(k, state.values[k]!, ctx.ts);
      state.values[k] = value;
      state.nextDue[k] = ctx.ts + rng.int(50_000, 70_000);
      return {
        contractAddress: c.address,
        eventIndex: planned.updateEventIndex,
        fields: [byteVec(keysHex[k]!), u256(value), u256(seconds)],
      };
    });
    builder.commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [],
      fixed: [g.change],
      generated: [],
      scriptOpt: builder.script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events,
    });
  };

  return {
    step(ctx) {
      if (ctx.chainIndex !== planned.chainIndex) return;
      const c = ledger.contractsOn(ctx.chainIndex, "oracle")[0];
      if (!c) deploy(ctx);
      else post(ctx, c);
    },
  };
}
