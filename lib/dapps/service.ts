/**
 * The dapp groups' reads as the API serves them: one pager (snapshot ceilings, signed `nextKey` cursors, short
 * page reuse) shared by the five groups' modules.
 */
import type { ContractCaller } from "../node-calls.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Pg } from "../stores/postgres.ts";
import { type AlphbanxReads, createAlphbanxReads } from "./alphbanx.ts";
import { type ChainReactionReads, createChainReactionReads } from "./chain-reaction.ts";
import { createCursors } from "./cursor.ts";
import { createDiaReads, type DiaReads } from "./dia.ts";
import { createElexiumReads, type ElexiumReads } from "./elexium.ts";
import { createFurnaceReads, type FurnaceReads } from "./furnace.ts";
import { createPager } from "./pages.ts";

export interface DappsService {
  furnace: FurnaceReads;
  chainReaction: ChainReactionReads;
  elexium: ElexiumReads;
  alphbanx: AlphbanxReads;
  dia: DiaReads;
}

export interface DappsServiceOptions {
  ch: Ch;
  pg: Pg;
  /** Low watermark (ms) of the served events. */
  watermark: () => Promise<number>;
  /** Full node for AlphBanX positions; null when NODE_URL is empty. */
  node: ContractCaller | null;
  /** The cursors' HMAC key (lib/secrets.ts). */
  cursorSecret: () => string;
  cursorTtlMs: number;
  pageCacheMs: number;
  /** How long past `pageCacheMs` a page is still served while a background read replaces it. */
  pageStaleMs: number;
}

export function createDappsService(o: DappsServiceOptions): DappsService {
  const pager = createPager({
    cursors: createCursors({ secret: o.cursorSecret, ttlMs: o.cursorTtlMs }),
    watermark: o.watermark,
    cacheMs: o.pageCacheMs,
    staleMs: o.pageStaleMs,
  });
  const dia = createDiaReads(o.ch, pager);
  return {
    furnace: createFurnaceReads(o.ch, pager),
    chainReaction: createChainReactionReads(o.ch, pager),
    elexium: createElexiumReads(o.ch, o.pg, pager),
    alphbanx: createAlphbanxReads({ ch: o.ch, pg: o.pg, pager, dia, node: o.node }),
    dia,
  };
}
