/**
 * dapps:chainreaction — Chain Reaction rounds, their players in order, the leaderboard per staked token, a
 * player's history, and the Number Guessing War rooms (public).
 */
import { Type } from "@sinclair/typebox";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import { notFound } from "../../../lib/errors.ts";
import { requireDb } from "../../require-db.ts";
import { Base58Address, HexId, Nullable, problemOf, StringEnum, U256String, UnixMs } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";
import { dappListRoute } from "./list-route.ts";

const TAG = "dapps:chainreaction";

const Round = Type.Object(
  {
    game_id: HexId("Game contract id (V2: the factory's game; V1: the V1 contract)."),
    chain_id: Type.String({ description: "Round (chain) number within the game." }),
    version: Type.Integer({ description: "1 (ChainReaction V1) or 2 (FactoryChainReactionV2)." }),
    token_id: HexId("Staked token (64 zeros: ALPH)."),
    state: StringEnum(["active", "ended"]),
    timed_out: Type.Boolean({ description: "Whether a ChainTimeout was emitted." }),
    players: Type.Integer({ description: "Joins so far." }),
    pot: U256String("Pot after the newest join."),
    entry_fee: U256String("Entry fee of the newest join."),
    last_player: Type.String({ description: "Newest player (the winner-to-be while active)." }),
    winner: Nullable(Type.String()),
    payout: Nullable(U256String("Payout to the winner.")),
    total_burned: Nullable(U256String("Burned over the round.")),
    started_at: UnixMs("Block time of the round's first event."),
    ended_at: Nullable(UnixMs("Block time of ChainEnded.")),
  },
  { $id: "ChainReactionRound", title: "ChainReactionRound" },
);

const GameParams = Type.Object({
  gameid: HexId("Game contract id."),
  chainid: Type.String({ pattern: "^[0-9]{1,78}$", description: "Round number." }),
});

export async function chainReactionRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Round);
  const reads = () => need("dapps").chainReaction;
  const cfg = { access: "public" as const, db: "required" as const };

  dappListRoute(app, {
    path: "/dapps/chainreaction/games",
    tag: TAG,
    access: "public",
    summary: "Rounds (games), newest first",
    description:
      "One row per (game, round), V1 and V2 alike (V2 rounds are read from the factory, which re-emits every game's events). `pot` is the pot announced by the newest join (boosts after it show from the next join).",
    query: {
      state: Type.Optional(StringEnum(["active", "ended"])),
      token_id: Type.Optional(HexId("Only rounds staking this token.")),
    },
    rowsKey: "games",
    row: Type.Ref("ChainReactionRound"),
    read: (f, page) => reads().games(f, page),
  });

  app.get(
    "/dapps/chainreaction/games/:gameid/:chainid",
    {
      config: cfg,
      schema: {
        tags: [TAG],
        summary: "One round",
        params: GameParams,
        response: { 200: Type.Ref("ChainReactionRound"), 404: problemOf("No such round of this game.") },
      },
    },
    async (request) => {
      const { gameid, chainid } = request.params;
      const round = await reads().game(gameid, chainid);
      if (!round)
        throw notFound(`Round ${chainid} of game ${gameid} not found`, {
          game_id: gameid,
          chain_id: chainid,
        });
      return round;
    },
  );

  dappListRoute(app, {
    path: "/dapps/chainreaction/games/:gameid/:chainid/players",
    tag: TAG,
    access: "public",
    summary: "A round's players in join order",
    params: GameParams.properties,
    query: {},
    rowsKey: "players",
    row: Type.Object({
      position: Type.Integer(),
      player: Type.String(),
      entry_fee: U256String("Entry fee paid."),
      pot: U256String("Pot after this join."),
      amount_burned: U256String("Part of the fee burned."),
      id: Type.String(),
      tx_id: Type.String(),
      timestamp: UnixMs("Block time."),
    }),
    read: (_, page, { gameid, chainid }) => reads().players(gameid, chainid, page),
  });

  dappListRoute(app, {
    path: "/dapps/chainreaction/leaderboard",
    tag: TAG,
    access: "public",
    summary: "Leaderboard of one staked token",
    description:
      "Per address: rounds won, total payout, rounds played and total spent on entry fees, for rounds staking `token_id` (default ALPH: amounts of different tokens do not add).",
    query: {
      token_id: Type.Optional(HexId("Staked token (default ALPH).")),
      sort: StringEnum(["wins", "payout", "games", "spent"], { default: "wins" }),
    },
    head: { token_id: HexId("The staked token.") },
    rowsKey: "entries",
    row: Type.Object({
      address: Type.String(),
      wins: Type.Integer(),
      payout: U256String("Total payout."),
      games: Type.Integer({ description: "Rounds joined." }),
      spent: U256String("Total entry fees."),
    }),
    async read(f, page) {
      const token_id = f.token_id ?? ALPH_TOKEN_ID;
      return { head: { token_id }, ...(await reads().leaderboard({ token_id, sort: f.sort }, page)) };
    },
  });

  dappListRoute(app, {
    path: "/dapps/chainreaction/players/:address/history",
    tag: TAG,
    access: "public",
    summary: "A player's history, newest first",
    description: "Joins, wins, timeouts, boosts and guessing-room events where the address is the player.",
    params: { address: Base58Address("Player address.") },
    query: {},
    rowsKey: "events",
    row: Type.Object({
      id: Type.String(),
      tx_id: Type.String(),
      timestamp: UnixMs("Block time."),
      kind: Type.String({
        description: "The event's sub_kind (player_joined, chain_ended, room_joined ...).",
      }),
      game_id: Type.String({
        description: "Game contract id, or the room id of a guessing-room event.",
      }),
      chain_id: Type.String(),
      token_id: HexId("Token of the amount."),
      amount: U256String("Entry fee, payout or boost."),
    }),
    read: (_, page, { address }) => reads().history(address, page),
  });

  dappListRoute(app, {
    path: "/dapps/chainreaction/rooms",
    tag: TAG,
    access: "public",
    summary: "Number Guessing War rooms, newest first",
    query: {
      state: Type.Optional(
        StringEnum(["open", "locked", "claimable", "claimed", "refunded", "expired", "destroyed"]),
      ),
    },
    rowsKey: "rooms",
    row: Type.Object({
      room_id: HexId("Room contract id."),
      creator: Type.String(),
      entry_fee: U256String("Entry fee (atto-ALPH)."),
      max_players: Type.String(),
      number_range_max: Type.String(),
      expires_at: Type.String({ description: "As the hub announced it." }),
      players: Type.Integer(),
      state: Type.String({
        description: "open, locked, claimable, claimed, refunded, expired or destroyed.",
      }),
      target: Nullable(Type.String({ description: "Number to guess, once claimable." })),
      winner: Nullable(Type.String()),
      payout: Nullable(U256String("Payout claimed.")),
      created_at: UnixMs("Block time of RoomCreated."),
    }),
    read: (f, page) => reads().rooms(f, page),
  });
}
