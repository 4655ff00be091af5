/**
 * Token Furnace reads (`token/burn/furnace_burn` events of dapp `furnace`): burns, totals per token, top
 * burners and the burner NFTs. What the Furnace app recomputes in the browser from four contracts' event
 * counters every 15 s, served from one table.
 */
import { idCeiling, idFloor } from "../chain/types.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { SortKey } from "./cursor.ts";
import type { Page, Pager } from "./pages.ts";
import { whereEq } from "./pages.ts";

export interface Burn {
  id: string;
  tx_id: string;
  timestamp: number;
  burner: string;
  token_id: string;
  amount: string;
  nft: boolean;
  nft_address: string;
  group: number;
  furnace: string;
}

export interface TokenBurnTotals {
  token_id: string;
  burned: string;
  burns: number;
  burners: number;
  first_burn_at: number;
  last_burn_at: number;
}

export interface BurnerTotals {
  address: string;
  burns: number;
  tokens: number;
  /** Sum of the amounts burned; only with a token filter (amounts of different tokens do not add). */
  burned: string | null;
  last_burn_at: number;
}

export interface BurnFilters {
  token_id?: string | undefined;
  burner?: string | undefined;
  from_ts?: number | undefined;
  to_ts?: number | undefined;
  nft?: boolean | undefined;
}

export type TokenSort = "burns" | "burners" | "last_burn";
export type BurnerSort = "burns" | "burned";

interface ListArgs {
  limit: number;
  nextKey?: string | undefined;
}

/** Burns under the ceiling that match the filters, as one FROM clause with its parameters. */
function burnsSource(f: BurnFilters, ceiling: string) {
  const eq = whereEq({ token_id: f.token_id, burner: f.burner }, { burner: "from" });
  let sql = `FROM dapp_events FINAL
     WHERE dapp_id = 'furnace' AND sub_kind = 'burn' AND main_chain AND id < {ceiling:String}${eq.sql}`;
  const params: Record<string, unknown> = { ...eq.params, ceiling };
  if (f.from_ts !== undefined) {
    sql += " AND id >= {from_id:String}";
    params.from_id = idFloor(f.from_ts);
  }
  if (f.to_ts !== undefined) {
    sql += " AND id < {to_id:String}";
    params.to_id = idCeiling(f.to_ts);
  }
  if (f.nft !== undefined)
    sql += f.nft ? " AND JSONExtractBool(payload, 'nft')" : " AND NOT JSONExtractBool(payload, 'nft')";
  return { sql, params };
}

export interface FurnaceReads {
  burns(f: BurnFilters, a: ListArgs): Promise<Page<Burn>>;
  tokens(sort: TokenSort, a: ListArgs): Promise<Page<TokenBurnTotals>>;
  token(tokenId: string): Promise<TokenBurnTotals | null>;
  burners(f: { token_id?: string | undefined; sort: BurnerSort }, a: ListArgs): Promise<Page<BurnerTotals>>;
}

export function createFurnaceReads(ch: Ch, pager: Pager): FurnaceReads {
  const tokenTotals = (where: string) =>
    `SELECT token_id, toString(sum(amount)) AS burned, count() AS burns, uniqExact(from) AS burners,
            toUnixTimestamp64Milli(min(timestamp)) AS first_burn_at, toUnixTimestamp64Milli(max(timestamp)) AS last_burn_at
     ${where} GROUP BY token_id`;
  const totalsRow = (r: Record<string, unknown>): TokenBurnTotals => ({
    token_id: String(r.token_id),
    burned: String(r.burned),
    burns: Number(r.burns),
    burners: Number(r.burners),
    first_burn_at: Number(r.first_burn_at),
    last_burn_at: Number(r.last_burn_at),
  });
  return {
    burns: (f, a) =>
      pager.page<Burn>(
        { list: "furnace.burns", filters: { ...f }, ...a },
        (r) => [r.id],
        async (ceiling, after, limit) => {
          const src = burnsSource(f, ceiling);
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_furnace_burns",
            `SELECT id, tx_id, toUnixTimestamp64Milli(timestamp) AS ts, from, token_id, toString(amount) AS amount,
                    JSONExtractBool(payload, 'nft') AS nft, JSONExtractString(payload, 'nft_address') AS nft_address,
                    JSONExtractInt(payload, 'group') AS grp, contract_address
             ${src.sql}${after ? " AND id < {after:String}" : ""}
             ORDER BY id DESC LIMIT {limit:UInt32}`,
            { ...src.params, after: after?.[0], limit },
          );
          return rows.map((r) => ({
            id: String(r.id),
            tx_id: String(r.tx_id),
            timestamp: Number(r.ts),
            burner: String(r.from),
            token_id: String(r.token_id),
            amount: String(r.amount),
            nft: Boolean(r.nft),
            nft_address: String(r.nft_address),
            group: Number(r.grp),
            furnace: String(r.contract_address),
          }));
        },
      ),
    tokens: (sort, a) =>
      pager.page<TokenBurnTotals>(
        { list: "furnace.tokens", filters: { sort }, ...a },
        (r) => [String(metricOf(sort, r)), r.token_id],
        async (ceiling, after, limit) => {
          const src = burnsSource({}, ceiling);
          const metric = sort === "burns" ? "burns" : sort === "burners" ? "burners" : "last_burn_at";
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_furnace_tokens",
            `SELECT * FROM (${tokenTotals(src.sql)})
             ${after ? `WHERE ${metric} < toUInt64({m:String}) OR (${metric} = toUInt64({m:String}) AND token_id > {k:String})` : ""}
             ORDER BY ${metric} DESC, token_id ASC LIMIT {limit:UInt32}`,
            { ...src.params, m: after?.[0], k: after?.[1], limit },
          );
          return rows.map(totalsRow);
        },
      ),
    async token(tokenId) {
      const src = burnsSource({ token_id: tokenId }, await pager.ceiling());
      const rows = await ch.query<Record<string, unknown>>(
        "dapp_furnace_token",
        tokenTotals(src.sql),
        src.params,
      );
      return rows[0] ? totalsRow(rows[0]) : null;
    },
    burners: (f, a) =>
      pager.page<BurnerTotals>(
        { list: "furnace.burners", filters: { ...f }, ...a },
        (r) => [f.sort === "burned" ? (r.burned ?? "0") : String(r.burns), r.address],
        async (ceiling, after, limit) => {
          const src = burnsSource({ token_id: f.token_id }, ceiling);
          const metric = f.sort === "burned" ? "burned_n" : "burns";
          const cast = f.sort === "burned" ? "toUInt256" : "toUInt64";
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_furnace_burners",
            `SELECT * FROM (
               SELECT from AS address, count() AS burns, uniqExact(token_id) AS tokens, sum(amount) AS burned_n,
                      toString(burned_n) AS burned, toUnixTimestamp64Milli(max(timestamp)) AS last_burn_at
               ${src.sql} GROUP BY from)
             ${after ? `WHERE ${metric} < ${cast}({m:String}) OR (${metric} = ${cast}({m:String}) AND address > {k:String})` : ""}
             ORDER BY ${metric} DESC, address ASC LIMIT {limit:UInt32}`,
            { ...src.params, m: after?.[0], k: after?.[1], limit },
          );
          return rows.map((r) => ({
            address: String(r.address),
            burns: Number(r.burns),
            tokens: Number(r.tokens),
            burned: f.token_id ? String(r.burned) : null,
            last_burn_at: Number(r.last_burn_at),
          }));
        },
      ),
  };
}

function metricOf(sort: TokenSort, r: TokenBurnTotals): number {
  return sort === "burns" ? r.burns : sort === "burners" ? r.burners : r.last_burn_at;
}

export type { SortKey };
