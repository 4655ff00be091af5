/**
 * The devnet's DIA-like randomness oracle (decoder kind `dia-random`), homed with the price oracle on the feeder's
 * chain g→g: the feeder deploys it in that chain's first block, then posts every round of the beacon (one every
 * 30 s of chain time, drand's numbering) in a script tx whose events are one `OracleUpdate(round: U256,
 * randomness: ByteVec 32 bytes, signature: ByteVec 96 bytes)` (event index 1) per round due. Rounds are
 * consecutive: a block whose feeder cannot pay leaves them due, and a later block posts them all.
 */
import type { Ledger } from "../ledger.ts";
import { byteVec, type TxBuilder, USER_GAS_PRICE, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec, DevnetAddress, EventSpec } from "../types.ts";
import { beaconRandomness, beaconRound, beaconSignature, stateOf } from "./games-common.ts";
import type { DevnetRandomness } from "./games-types.ts";

/** Most rounds one post carries (a feeder back after a long gap posts the rest in the next blocks). */
const MAX_ROUNDS_PER_POST = 8;

export interface Randomness {
  /** On the oracle's home chain: deploys it (first block), then posts the rounds that are due. */
  step(ctx: BlockCtx): void;
}

export function createRandomness(deps: {
  seed: number;
  planned: DevnetRandomness;
  feeder: DevnetAddress;
  ledger: Ledger;
  builder: TxBuilder;
}): Randomness {
  const { planned, feeder, ledger, builder } = deps;

  const post = (ctx: BlockCtx, c: ContractRec): void => {
    const state = stateOf(c, "randomness");
    const current = beaconRound(ctx.ts);
    const first = state.lastRound === 0 ? current : state.lastRound + 1;
    if (first > current) return;
    const last = Math.min(current, first + MAX_ROUNDS_PER_POST - 1);
    const gas = builder.userGas(30000);
    const g = ledger.gather(feeder, ctx.ts, BigInt(gas) * USER_GAS_PRICE);
    if (!g) return;
    ledger.touchContract(ctx, c);
    c.counter += last - first + 1;
    state.lastRound = last;
    const events: EventSpec[] = [];
    for (let round = first; round <= last; round++)
      events.push({
        contractAddress: c.address,
        eventIndex: planned.updateEventIndex,
        fields: [
          u256(round),
          byteVec(beaconRandomness(deps.seed, round)),
          byteVec(beaconSignature(deps.seed, round)),
        ],
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
      const c = ledger.contractById(planned.id);
      if (c) {
        post(ctx, c);
        return;
      }
      const made = builder.deployContract(ctx, feeder, "random-oracle", planned.id, { iface: "" });
      if (made) made.dapp = { kind: "randomness", lastRound: 0 };
    },
  };
}
