/**
 * The devnet's DeFi dapps as one part of block production: Elexium and the Wormhole bridge on chain 0→0,
 * DeadRare on 1→1, AlphBanX on 2→2 (the oracle's chain), MyOnion.fun on 3→3. Each dapp acts only in blocks of its
 * home chain; together they answer the call-contract double for their contracts.
 */
import type { node } from "@alephium/web3";
import type { BlockCtx, ContractRec, DevnetOracle } from "../types.ts";
import { createAlphBanX } from "./alphbanx.ts";
import { createDeadRare } from "./deadrare.ts";
import type { DefiPlan } from "./defi-plan.ts";
import { createElexium } from "./elexium.ts";
import type { DappDeps } from "./kit.ts";
import { createMyOnion } from "./myonion.ts";
import { createWormhole } from "./wormhole.ts";

export interface DefiDapps {
  /** The dapps' deployments and users' calls in a block (each on its home chain only). */
  step(ctx: BlockCtx): void;
  /** A read-only call of a dapp contract (call-contract double); undefined when the dapp has no such method. */
  call(c: ContractRec, methodIndex: number, args: node.Val[]): node.Val[] | undefined;
}

export function createDefiDapps(deps: DappDeps & { plan: DefiPlan; oracle: DevnetOracle }): DefiDapps {
  const parts = [
    createElexium({ ...deps, plan: deps.plan.elexium }),
    createWormhole({ ...deps, plan: deps.plan.wormhole }),
    createAlphBanX({ ...deps, plan: deps.plan.alphbanx, oracle: deps.oracle }),
    createDeadRare({ ...deps, plan: deps.plan.deadrare }),
    createMyOnion({ ...deps, plan: deps.plan.myonion }),
  ];
  return {
    step(ctx) {
      for (const p of parts) p.step(ctx);
    },
    call(c, methodIndex, args) {
      for (const p of parts) {
        const out = p.call(c, methodIndex, args);
        if (out) return out;
      }
      return undefined;
    },
  };
}
