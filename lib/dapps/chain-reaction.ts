/**
 * Chain Reaction reads (dapp `chainreaction`, category `game`): rounds ("games": one chain of a game contract),
 * a round's players in join order, the leaderboard per staked token, a player's history, and the rooms of the
 * Number Guessing War. What the app rebuilds in the browser by replaying every event from counter 0 every 4 s.
 */
import type { Ch } from "../stores/clickhouse.ts";
import type { Page, Pager } from "./pages.ts";

const ROUND_TYPES = "type IN ('chain_reaction', 'chain_reaction_v1')";

/** Chain Reaction events under the ceiling, with the round they belong to. */
const roundEvents = `
  SELECT id, sub_kind, tx_id, timestamp, to, token_id, amount, payload,
         JSONExtractString(payload, 'game_id') AS game_id, JSONExtractString(payload, 'chain_id') AS chain_id,
         JSONExtractInt(payload, 'version') AS version
  FROM dapp_events FINAL
  WHERE dapp_id = 'chainreaction' AND ${ROUND_TYPES} AND main_chain AND id < {ceiling:String}`;

/** One row per round: its token (events of V2 rounds after the start carry none), state and figures. */
const rounds = `
  SELECT game_id, chain_id, any(version) AS version,
         if(minIf(id, sub_kind = 'chain_started') = '', min(id), minIf(id, sub_kind = 'chain_started')) AS started_id,
         argMaxIf(token_id, id, sub_kind IN ('chain_started', 'player_joined')) AS round_token,
         countIf(sub_kind = 'player_joined') AS players,
         argMaxIf(JSONExtractString(payload, 'pot'), id, sub_kind = 'player_joined') AS pot,
         argMaxIf(JSONExtractString(payload, 'entry_fee'), id, sub_kind = 'player_joined') AS entry_fee,
         argMaxIf(to, id, sub_kind = 'player_joined') AS last_player,
         maxIf(id, sub_kind = 'chain_ended') AS ended_id,
         anyIf(to, sub_kind = 'chain_ended') AS winner,
         anyIf(toString(amount), sub_kind = 'chain_ended') AS payout,
         anyIf(JSONExtractString(payload, 'total_burned'), sub_kind = 'chain_ended') AS total_burned,
         countIf(sub_kind = 'chain_timeout') > 0 AS timed_out,
         toUnixTimestamp64Milli(min(timestamp)) AS started_at,
         toUnixTimestamp64Milli(maxIf(timestamp, sub_kind = 'chain_ended')) AS ended_at
  FROM (${roundEvents}) WHERE chain_id != '' GROUP BY game_id, chain_id`;

export type RoundState = "active" | "ended";

export interface Round {
  game_id: string;
  chain_id: string;
  version: number;
  token_id: string;
  state: RoundState;
  timed_out: boolean;
  players: number;
  pot: string;
  entry_fee: string;
  last_player: string;
  winner: string | null;
  payout: string | null;
  total_burned: string | null;
  started_at: number;
  ended_at: number | null;
  /** Sort key: the round's first event id. */
  started_id: string;
}

export interface RoundPlayer {
  position: number;
  player: string;
  entry_fee: string;
  pot: string;
  amount_burned: string;
  id: string;
  tx_id: string;
  timestamp: number;
}

export type LeaderboardSort = "wins" | "payout" | "games" | "spent";

export interface LeaderboardEntry {
  address: string;
  wins: number;
  payout: string;
  games: number;
  spent: string;
}

export interface PlayerEvent {
  id: string;
  tx_id: string;
  timestamp: number;
  kind: string;
  /** The game contract id (64 hex), or the room id of a Number Guessing War event. */
  game_id: string;
  chain_id: string;
  token_id: string;
  amount: string;
}

export interface Room {
  room_id: string;
  creator: string;
  entry_fee: string;
  max_players: string;
  number_range_max: string;
  expires_at: string;
  players: number;
  state: "open" | "locked" | "claimable" | "claimed" | "refunded" | "expired" | "destroyed";
  target: string | null;
  winner: string | null;
  payout: string | null;
  created_at: number;
  created_id: string;
}

interface ListArgs {
  limit: number;
  nextKey?: string | undefined;
}

export interface ChainReactionReads {
  games(
    f: { state?: RoundState | undefined; token_id?: string | undefined },
    a: ListArgs,
  ): Promise<Page<Round>>;
  game(gameId: string, chainId: string): Promise<Round | null>;
  players(gameId: string, chainId: string, a: ListArgs): Promise<Page<RoundPlayer>>;
  leaderboard(f: { token_id: string; sort: LeaderboardSort }, a: ListArgs): Promise<Page<LeaderboardEntry>>;
  history(address: string, a: ListArgs): Promise<Page<PlayerEvent>>;
  rooms(f: { state?: Room["state"] | undefined }, a: ListArgs): Promise<Page<Room>>;
}

const roundRow = (r: Record<string, unknown>): Round => {
  const ended = String(r.ended_id) !== "";
  return {
    game_id: String(r.game_id),
    chain_id: String(r.chain_id),
    version: Number(r.version),
    token_id: String(r.round_token),
    state: ended ? "ended" : "active",
    timed_out: Boolean(r.timed_out),
    players: Number(r.players),
    pot: String(r.pot || "0"),
    entry_fee: String(r.entry_fee || "0"),
    last_player: String(r.last_player),
    winner: ended ? String(r.winner) : null,
    payout: ended ? String(r.payout) : null,
    total_burned: ended ? String(r.total_burned) : null,
    started_at: Number(r.started_at),
    ended_at: ended ? Number(r.ended_at) : null,
    started_id: String(r.started_id),
  };
};

export function createChainReactionReads(ch: Ch, pager: Pager): ChainReactionReads {
  return {
    games: (f, a) =>
      pager.page<Round>(
        { list: "chainreaction.games", filters: { ...f }, ...a },
        (r) => [r.started_id, r.game_id, r.chain_id],
        async (ceiling, after, limit) => {
          const where = [
            f.state === "ended" ? "ended_id != ''" : f.state === "active" ? "ended_id = ''" : "",
            f.token_id ? "round_token = {token:String}" : "",
            after ? "(started_id, game_id, chain_id) < ({a0:String}, {a1:String}, {a2:String})" : "",
          ].filter(Boolean);
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_cr_games",
            `SELECT * FROM (${rounds}) ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
             ORDER BY started_id DESC, game_id DESC, chain_id DESC LIMIT {limit:UInt32}`,
            { ceiling, token: f.token_id, a0: after?.[0], a1: after?.[1], a2: after?.[2], limit },
          );
          return rows.map(roundRow);
        },
      ),
    async game(gameId, chainId) {
      const rows = await ch.query<Record<string, unknown>>(
        "dapp_cr_game",
        `SELECT * FROM (${rounds}) WHERE game_id = {g:String} AND chain_id = {c:String}`,
        { ceiling: await pager.ceiling(), g: gameId, c: chainId },
      );
      return rows[0] ? roundRow(rows[0]) : null;
    },
    players: (gameId, chainId, a) =>
      pager.page<RoundPlayer>(
        { list: "chainreaction.players", filters: { gameId, chainId }, ...a },
        (r) => [String(r.position), r.id],
        async (ceiling, after, limit) => {
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_cr_players",
            `SELECT id, tx_id, toUnixTimestamp64Milli(timestamp) AS ts, to AS player,
                    toUInt64OrZero(JSONExtractString(payload, 'position')) AS position,
                    JSONExtractString(payload, 'entry_fee') AS entry_fee, JSONExtractString(payload, 'pot') AS pot,
                    JSONExtractString(payload, 'amount_burned') AS amount_burned
             FROM (${roundEvents})
             WHERE sub_kind = 'player_joined' AND game_id = {g:String} AND chain_id = {c:String}
               ${after ? "AND (position, id) > (toUInt64({a0:String}), {a1:String})" : ""}
             ORDER BY position, id LIMIT {limit:UInt32}`,
            { ceiling, g: gameId, c: chainId, a0: after?.[0], a1: after?.[1], limit },
          );
          return rows.map((r) => ({
            position: Number(r.position),
            player: String(r.player),
            entry_fee: String(r.entry_fee),
            pot: String(r.pot),
            amount_burned: String(r.amount_burned),
            id: String(r.id),
            tx_id: String(r.tx_id),
            timestamp: Number(r.ts),
          }));
        },
      ),
    leaderboard: (f, a) =>
      pager.page<LeaderboardEntry>(
        { list: "chainreaction.leaderboard", filters: { ...f }, ...a },
        (r) => [String(r[f.sort]), r.address],
        async (ceiling, after, limit) => {
          const metric = `${f.sort}_n`;
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_cr_leaderboard",
            `WITH r AS (SELECT game_id, chain_id, round_token FROM (${rounds}))
             SELECT * FROM (
               SELECT e.to AS address,
                      countIf(e.sub_kind = 'chain_ended') AS wins_n,
                      sumIf(toUInt256(e.amount), e.sub_kind = 'chain_ended') AS payout_n,
                      uniqExactIf((e.game_id, e.chain_id), e.sub_kind = 'player_joined') AS games_n,
                      sumIf(toUInt256(e.amount), e.sub_kind = 'player_joined') AS spent_n
               FROM (${roundEvents}) AS e INNER JOIN r ON e.game_id = r.game_id AND e.chain_id = r.chain_id
               WHERE e.sub_kind IN ('chain_ended', 'player_joined') AND r.round_token = {token:String} AND e.to != ''
               GROUP BY address)
             ${after ? `WHERE ${metric} < toUInt256({a0:String}) OR (${metric} = toUInt256({a0:String}) AND address > {a1:String})` : ""}
             ORDER BY ${metric} DESC, address ASC LIMIT {limit:UInt32}`,
            { ceiling, token: f.token_id, a0: after?.[0], a1: after?.[1], limit },
          );
          return rows.map((r) => ({
            address: String(r.address),
            wins: Number(r.wins_n),
            payout: String(r.payout_n),
            games: Number(r.games_n),
            spent: String(r.spent_n),
          }));
        },
      ),
    history: (address, a) =>
      pager.page<PlayerEvent>(
        { list: "chainreaction.history", filters: { address }, ...a },
        (r) => [r.id],
        async (ceiling, after, limit) => {
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_cr_history",
            `SELECT id, tx_id, toUnixTimestamp64Milli(timestamp) AS ts, sub_kind, token_id, toString(amount) AS amount,
                    JSONExtractString(payload, 'game_id') AS game_id, JSONExtractString(payload, 'chain_id') AS chain_id,
                    JSONExtractString(payload, 'room_id') AS room_id
             FROM dapp_events FINAL
             WHERE dapp_id = 'chainreaction' AND main_chain AND id < {ceiling:String} AND to = {address:String}
               ${after ? "AND id < {a0:String}" : ""}
             ORDER BY id DESC LIMIT {limit:UInt32}`,
            { ceiling, address, a0: after?.[0], limit },
          );
          return rows.map((r) => ({
            id: String(r.id),
            tx_id: String(r.tx_id),
            timestamp: Number(r.ts),
            kind: String(r.sub_kind),
            game_id: String(r.game_id || r.room_id || ""),
            chain_id: String(r.chain_id),
            token_id: String(r.token_id),
            amount: String(r.amount),
          }));
        },
      ),
    rooms: (f, a) =>
      pager.page<Room>(
        { list: "chainreaction.rooms", filters: { ...f }, ...a },
        (r) => [r.created_id, r.room_id],
        async (ceiling, after, limit) => {
          const rows = await ch.query<Record<string, unknown>>(
            "dapp_cr_rooms",
            `SELECT * FROM (
               SELECT JSONExtractString(payload, 'room_id') AS room_id,
                      minIf(id, sub_kind = 'room_created') AS created_id,
                      toUnixTimestamp64Milli(minIf(timestamp, sub_kind = 'room_created')) AS created_at,
                      anyIf(JSONExtractString(payload, 'creator'), sub_kind = 'room_created') AS creator,
                      anyIf(JSONExtractString(payload, 'entry_fee'), sub_kind = 'room_created') AS entry_fee,
                      anyIf(JSONExtractString(payload, 'max_players'), sub_kind = 'room_created') AS max_players,
                      anyIf(JSONExtractString(payload, 'number_range_max'), sub_kind = 'room_created') AS number_range_max,
                      anyIf(JSONExtractString(payload, 'expires_at'), sub_kind = 'room_created') AS expires_at,
                      countIf(sub_kind = 'room_joined') AS players,
                      anyIf(JSONExtractString(payload, 'target'), sub_kind = 'room_claimable') AS target,
                      anyIf(to, sub_kind = 'room_claimed') AS winner,
                      anyIf(toString(amount), sub_kind = 'room_claimed') AS payout,
                      multiIf(countIf(sub_kind = 'room_destroyed') > 0, 'destroyed',
                              countIf(sub_kind = 'room_expired') > 0, 'expired',
                              countIf(sub_kind = 'room_refunded') > 0, 'refunded',
                              countIf(sub_kind = 'room_claimed') > 0, 'claimed',
                              countIf(sub_kind = 'room_claimable') > 0, 'claimable',
                              countIf(sub_kind = 'room_locked') > 0, 'locked', 'open') AS state
               FROM dapp_events FINAL
               WHERE dapp_id = 'chainreaction' AND type = 'guessing_war' AND main_chain AND id < {ceiling:String}
               GROUP BY room_id HAVING created_id != '')
             WHERE 1 ${f.state ? "AND state = {state:String}" : ""}
               ${after ? "AND (created_id, room_id) < ({a0:String}, {a1:String})" : ""}
             ORDER BY created_id DESC, room_id DESC LIMIT {limit:UInt32}`,
            { ceiling, state: f.state, a0: after?.[0], a1: after?.[1], limit },
          );
          return rows.map((r) => ({
            room_id: String(r.room_id),
            creator: String(r.creator),
            entry_fee: String(r.entry_fee),
            max_players: String(r.max_players),
            number_range_max: String(r.number_range_max),
            expires_at: String(r.expires_at),
            players: Number(r.players),
            state: String(r.state) as Room["state"],
            target: r.target ? String(r.target) : null,
            winner: r.winner ? String(r.winner) : null,
            payout: r.winner ? String(r.payout) : null,
            created_at: Number(r.created_at),
            created_id: String(r.created_id),
          }));
        },
      ),
  };
}
