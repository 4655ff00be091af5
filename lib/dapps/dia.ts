/**
 * DIA oracle reads (dapp `dia-oracle`, category `oracle`): every feed's latest value with its staleness against
 * the heartbeat, a feed's history, and randomness rounds — kept for good, past the contract's 1,000-round
 * ring buffer (about 8 hours on mainnet).
 */
import { idCeiling, idFloor } from "../chain/types.ts";
import type { Ch } from "../stores/clickhouse.ts";
import type { Page, Pager } from "./pages.ts";

export interface FeedLatest {
  key: string;
  oracle: string;
  value: string;
  decimals: number;
  /** The oracle's own time of the value (ms). */
  oracle_timestamp: number;
  /** Time of the block that posted it (ms). */
  updated_at: number;
  updates: number;
  id: string;
  tx_id: string;
}

export interface FeedValue {
  id: string;
  tx_id: string;
  value: string;
  decimals: number;
  oracle_timestamp: number;
  timestamp: number;
}

export interface RandomnessRound {
  round: string;
  randomness: string;
  signature: string;
  oracle: string;
  id: string;
  tx_id: string;
  timestamp: number;
}

interface ListArgs {
  limit: number;
  nextKey?: string | undefined;
}

export interface DiaReads {
  feeds(): Promise<FeedLatest[]>;
  history(
    key: string,
    range: { from_ts?: number | undefined; to_ts?: number | undefined },
    a: ListArgs,
  ): Promise<Page<FeedValue>>;
  rounds(a: ListArgs): Promise<Page<RandomnessRound>>;
  round(round: string): Promise<RandomnessRound | null>;
}

const updates = `FROM dapp_events FINAL
  WHERE dapp_id = 'dia-oracle' AND sub_kind = 'price_update' AND main_chain AND id < {ceiling:String}`;
const randomness = `SELECT JSONExtractString(payload, 'round') AS round, JSONExtractString(payload, 'randomness') AS randomness,
         JSONExtractString(payload, 'signature') AS signature, contract_address, id, tx_id,
         toUnixTimestamp64Milli(timestamp) AS ts, toUInt256OrZero(round) AS round_n
  FROM dapp_events FINAL
  WHERE dapp_id = 'dia-oracle' AND sub_kind = 'randomness' AND main_chain AND id < {ceiling:String}`;

const roundRow = (r: Record<string, unknown>): RandomnessRound => ({
  round: String(r.round),
  randomness: String(r.randomness),
  signature: String(r.signature),
  oracle: String(r.contract_address),
  id: String(r.id),
  tx_id: String(r.tx_id),
  timestamp: Number(r.ts),
});

export function createDiaReads(ch: Ch, pager: Pager): DiaReads {
  return {
    async feeds() {
      const rows = await ch.query<Record<string, unknown>>(
        "dapp_dia_feeds",
        `SELECT JSONExtractString(payload, 'key') AS key, argMax(contract_address, id) AS oracle,
                argMax(JSONExtractString(payload, 'value'), id) AS value,
                argMax(JSONExtractInt(payload, 'decimals'), id) AS decimals,
                argMax(JSONExtractInt(payload, 'oracle_timestamp'), id) AS oracle_ts,
                toUnixTimestamp64Milli(max(timestamp)) AS updated_at, count() AS updates,
                max(id) AS last_id, argMax(tx_id, id) AS tx_id
         ${updates} GROUP BY key ORDER BY key`,
        { ceiling: await pager.ceiling() },
      );
      return rows.map((r) => ({
        key: String(r.key),
        oracle: String(r.oracle),
        value: String(r.value),
        decimals: Number(r.decimals),
        oracle_timestamp: Number(r.oracle_ts),
        updated_at: Number(r.updated_at),
        updates: Number(r.updates),
        id: String(r.last_id),
        tx_id: String(r.tx_id),
      }));
    },
    history: (key, range, a) =>
      pager.page<FeedValue>(
        { list: "dia.history", filters: { key, ...range }, ...a },
        (r) => [r.id],
        async (ceiling, after, limit) => {
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_dia_history",
            `SELECT id, tx_id, JSONExtractString(payload, 'value') AS value, JSONExtractInt(payload, 'decimals') AS decimals,
                    JSONExtractInt(payload, 'oracle_timestamp') AS oracle_ts, toUnixTimestamp64Milli(timestamp) AS ts
             ${updates} AND JSONExtractString(payload, 'key') = {key:String}
               ${range.from_ts !== undefined ? "AND id >= {from_id:String}" : ""}
               ${range.to_ts !== undefined ? "AND id < {to_id:String}" : ""}
               ${after ? "AND id < {a0:String}" : ""}
             ORDER BY id DESC LIMIT {limit:UInt32}`,
            {
              ceiling,
              key,
              from_id: range.from_ts !== undefined ? idFloor(range.from_ts) : undefined,
              to_id: range.to_ts !== undefined ? idCeiling(range.to_ts) : undefined,
              a0: after?.[0],
              limit,
            },
          );
          return rows.map((r) => ({
            id: String(r.id),
            tx_id: String(r.tx_id),
            value: String(r.value),
            decimals: Number(r.decimals),
            oracle_timestamp: Number(r.oracle_ts),
            timestamp: Number(r.ts),
          }));
        },
      ),
    rounds: (a) =>
      pager.page<RandomnessRound>(
        { list: "dia.rounds", filters: {}, ...a },
        (r) => [r.round, r.id],
        async (ceiling, after, limit) => {
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_dia_rounds",
            `SELECT * FROM (${randomness})
             ${after ? "WHERE (round_n, id) < (toUInt256({a0:String}), {a1:String})" : ""}
             ORDER BY round_n DESC, id DESC LIMIT {limit:UInt32}`,
            { ceiling, a0: after?.[0], a1: after?.[1], limit },
          );
          return rows.map(roundRow);
        },
      ),
    async round(round) {
      const rows = await ch.query<Record<string, unknown>>(
        "dapp_dia_round",
        `SELECT * FROM (${randomness}) WHERE round = {round:String} ORDER BY id LIMIT 1`,
        { ceiling: await pager.ceiling(), round },
      );
      return rows[0] ? roundRow(rows[0]) : null;
    },
  };
}
