/**
 * The devnet's Chain Reaction (dapp `chainreaction`), homed on chain 0→0: a FactoryChainReactionV2 (decoder kind
 * `chainreaction-v2`) and a V1 game (`chainreaction-v1`), both deployed in the chain's first block by users of
 * group 0. The factory creates games (a first one staking ALPH, a second one staking a devnet token once one is
 * held in group 0, then one more every {@link NEW_GAME_EVERY_MS} up to {@link MAX_GAMES}): `NewGameCreated
 * (contractId, gameId, isFixedTokenId, tokenId)` (event 0) in the tx that creates the game contract, a
 * ContractCreated without parent (games are copyCreateContract'd, not sub-contracts). A V2 game emits each of its
 * events without the game id and the factory re-emits it with the id, as on mainnet (counted once).
 *
 * Each game runs rounds ("chains"): the first join starts one (`ChainStarted`, startBlock = the block's timestamp
 * in ms, as Ralph contracts read `blockTimeStamp!()`), players join with a rising entry
 * fee (`PlayerJoined`: the player's inputs pay the fee into the game contract; a 5% share is burned: a token
 * game burns it, an ALPH game locks it in the contract since ALPH cannot be burned), someone now and then boosts
 * the pot (`PotBoosted`), and once the round's players joined and its 90 s timer ran out the last player wins
 * (`ChainEnded`): the pot minus the fees is a generated output to the winner, the fees stay in the game contract.
 * The end is claimed by the winner, or (one round in three) by another player after `ChainTimeout`. V2 games'
 * events are emitted by the factory with the game's id; V1's by the V1 contract, with V1's shorter layouts.
 */
import { DUST_AMOUNT, ONE_ALPH } from "@alephium/web3";
import { ALPH_TOKEN_ID } from "../../lib/chain/types.ts";
import type { Accounts, Ledger } from "../ledger.ts";
import type { Plan } from "../plan.ts";
import type { Rng } from "../random.ts";
import { addressVal, byteVec, type TxBuilder, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec, DevnetAddress, EventSpec } from "../types.ts";
import { boolVal, createGameCalls, payout, stateOf } from "./games-common.ts";
import type { DappState, RoundState } from "./games-types.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** A round ends this long after its last join. */
const ROUND_TIMER_MS = 90 * SECOND;
const MAX_GAMES = 4;
const NEW_GAME_EVERY_MS = 45 * MINUTE;
/** Share of each entry fee burned, in percent. */
const BURN_PERCENT = 5n;

export interface ChainReaction {
  /** On chain 0→0: deploys the contracts, creates games, then plays their rounds. */
  step(ctx: BlockCtx): void;
}

type GameState = Extract<DappState, { kind: "cr-game" }>;

const idleRound = (nextAt: number): RoundState => ({
  chainId: 0,
  running: false,
  nextAt,
  targetPlayers: 0,
  players: [],
  baseFee: 0n,
  pot: 0n,
  totalBurned: 0n,
  deadline: 0,
});

export function createChainReaction(deps: {
  rng: Rng;
  plan: Plan;
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
}): ChainReaction {
  const { rng, ledger, builder } = deps;
  const planned = deps.plan.chainReaction;
  const users = deps.accounts.usersByGroup[0]!;
  const calls = createGameCalls({ ledger, builder });

  /**
   * A game's events, as mainnet emits them: a V2 game (a copy of the V3 template) emits its event without the
   * game id, then the factory re-emits it with the id (index + 1); V1 emits on itself, with V1's shorter layout.
   */
  const emitter = (game: ContractRec, s: GameState) => {
    const v2 = s.version === 2;
    return (v2Index: number, fields: EventSpec["fields"], v2Tail: EventSpec["fields"] = []): EventSpec[] =>
      v2
        ? [
            { contractAddress: game.address, eventIndex: v2Index - 1, fields: [...fields, ...v2Tail] },
            {
              contractAddress: planned.factoryV2.address,
              eventIndex: v2Index,
              fields: [byteVec(game.id), ...fields, ...v2Tail],
            },
          ]
        : [{ contractAddress: game.address, eventIndex: v2Index - 1, fields }];
  };

  const holds = (u: DevnetAddress, tokenId: string, amount: bigint, ts: number): boolean =>
    tokenId === ALPH_TOKEN_ID || (ledger.tokenBalance(u, ts).get(tokenId) ?? 0n) >= amount;

  /** A group-0 user other than `not` who holds `amount` of the game's token, from a random one on. */
  const pickPlayer = (
    ctx: BlockCtx,
    tokenId: string,
    amount: bigint,
    not?: string,
  ): DevnetAddress | undefined => {
    const first = rng.int(0, users.length - 1);
    for (let k = 0; k < users.length; k++) {
      const u = users[(first + k) % users.length]!;
      if (u.address !== not && holds(u, tokenId, amount, ctx.ts)) return u;
    }
    return undefined;
  };

  /** Moves `amount` of the game's token into (positive) or out of (negative) the game contract. */
  const moveAssets = (game: ContractRec, tokenId: string, amount: bigint): void => {
    if (tokenId === ALPH_TOKEN_ID) game.alph += amount;
    else game.tokens.set(tokenId, (game.tokens.get(tokenId) ?? 0n) + amount);
  };

  const pay = (ctx: BlockCtx, u: DevnetAddress, tokenId: string, amount: bigint, dust = 0n) =>
    tokenId === ALPH_TOKEN_ID
      ? calls.pay(ctx, u, 50000, amount + dust)
      : calls.pay(ctx, u, 50000, dust, new Map([[tokenId, amount]]));

  const join = (ctx: BlockCtx, game: ContractRec, s: GameState): boolean => {
    const r = s.round;
    const starting = !r.running;
    const baseFee = starting ? drawBaseFee(s.tokenId) : r.baseFee;
    if (baseFee === 0n) return false;
    const position = starting ? 1 : r.players.length + 1;
    const fee = (baseFee * BigInt(100 + 15 * (position - 1))) / 100n;
    const player = pickPlayer(ctx, s.tokenId, fee, starting ? undefined : r.players.at(-1));
    if (!player) return false;
    const paid = pay(ctx, player, s.tokenId, fee);
    if (!paid) return false;
    ledger.touchContract(ctx, game);
    const ev = emitter(game, s);
    const events: EventSpec[] = [];
    if (starting) {
      s.round = {
        ...idleRound(0),
        chainId: r.chainId + 1,
        running: true,
        targetPlayers: rng.int(2, 5),
        baseFee,
      };
      events.push(...ev(1, [u256(s.round.chainId), u256(ctx.ts)], [u256(s.feesBps), byteVec(s.tokenId)]));
    }
    const round = s.round;
    const burned = (fee * BURN_PERCENT) / 100n;
    round.players.push(player.address);
    round.pot += fee - burned;
    round.totalBurned += burned;
    round.deadline = ctx.ts + ROUND_TIMER_MS;
    round.nextAt = ctx.ts + rng.int(15, 60) * SECOND;
    const isToken = s.tokenId !== ALPH_TOKEN_ID;
    // A token game burns its share; an ALPH game keeps it locked in the contract.
    moveAssets(game, s.tokenId, isToken ? fee - burned : fee);
    events.push(
      ...ev(
        2,
        [
          u256(round.chainId),
          addressVal(player.address),
          u256(fee),
          u256(round.pot),
          u256(position),
          u256(burned),
        ],
        [byteVec(s.tokenId)],
      ),
    );
    calls.commit(ctx, paid, {
      contracts: [game],
      events,
      ...(isToken ? { burned: new Map([[s.tokenId, burned]]) } : {}),
    });
    return true;
  };

  /** The first entry fee of a round: 1–5 ALPH, or 0.01–0.05% of the token's supply. */
  const drawBaseFee = (tokenId: string): bigint => {
    if (tokenId === ALPH_TOKEN_ID) return BigInt(rng.int(10, 50)) * (ONE_ALPH / 10n);
    const supply = ledger.contractById(tokenId)?.token?.totalSupply ?? 0n;
    return (supply * BigInt(rng.int(1, 5))) / 10_000n;
  };

  const boost = (ctx: BlockCtx, game: ContractRec, s: GameState): boolean => {
    const r = s.round;
    const amount = r.baseFee * BigInt(rng.int(1, 3));
    const caller = pickPlayer(ctx, s.tokenId, amount);
    const paid = caller && pay(ctx, caller, s.tokenId, amount);
    if (!caller || !paid) return false;
    ledger.touchContract(ctx, game);
    r.pot += amount;
    r.nextAt = ctx.ts + rng.int(15, 60) * SECOND;
    moveAssets(game, s.tokenId, amount);
    const ev = emitter(game, s);
    calls.commit(ctx, paid, {
      contracts: [game],
      events: ev(5, [addressVal(caller.address), u256(amount)]),
    });
    return true;
  };

  const end = (ctx: BlockCtx, game: ContractRec, s: GameState): void => {
    const r = s.round;
    const winner = r.players.at(-1)!;
    // The V2 factory declares ChainTimeout but its mainnet bytecode never emits it: only V1 games time out.
    const timeout = rng.int(1, 3) === 1 && s.version === 1;
    const caller = timeout
      ? users.find((u) => u.address !== winner && ledger.gather(u, ctx.ts, ONE_ALPH))
      : deps.accounts.userByAddress.get(winner);
    const dust = s.tokenId === ALPH_TOKEN_ID ? 0n : DUST_AMOUNT;
    const paid = caller && calls.pay(ctx, caller, 50000, dust);
    if (!paid) return;
    ledger.touchContract(ctx, game);
    const fees = (r.pot * BigInt(s.feesBps)) / 10_000n;
    const won = r.pot - fees;
    moveAssets(game, s.tokenId, -won);
    const ev = emitter(game, s);
    const events: EventSpec[] = [];
    if (timeout) events.push(...ev(4, [u256(r.chainId), addressVal(winner)]));
    events.push(
      ...ev(3, [u256(r.chainId), addressVal(winner), u256(won), u256(r.totalBurned)], [u256(fees)]),
    );
    s.round = { ...idleRound(ctx.ts + rng.int(60, 180) * SECOND), chainId: r.chainId };
    calls.commit(ctx, paid, { contracts: [game], payouts: [payout(winner, s.tokenId, won, dust)], events });
  };

  const play = (ctx: BlockCtx, game: ContractRec): void => {
    const s = stateOf(game, "cr-game");
    const r = s.round;
    if (!r.running) {
      if (ctx.ts >= r.nextAt && !join(ctx, game, s)) {
        ledger.touchContract(ctx, game);
        r.nextAt = ctx.ts + 30 * SECOND;
      }
      return;
    }
    if (r.players.length >= r.targetPlayers) {
      if (ctx.ts >= r.deadline) end(ctx, game, s);
      return;
    }
    if (ctx.ts < r.nextAt) return;
    if (rng.chance(0.25) ? boost(ctx, game, s) : join(ctx, game, s)) return;
    ledger.touchContract(ctx, game);
    r.nextAt = ctx.ts + 20 * SECOND;
  };

  /** The token of a new token game: the first planned token, settled, that two group-0 users hold. */
  const stakedToken = (ctx: BlockCtx): string | undefined =>
    deps.plan.tokens
      .map((t) => ledger.contractById(t.id))
      .find(
        (c) =>
          c !== undefined &&
          ledger.settled(c) &&
          users.filter((u) => (ledger.tokenBalance(u, ctx.ts).get(c.id) ?? 0n) > 0n).length >= 2,
      )?.id;

  const createGame = (ctx: BlockCtx, factory: ContractRec): void => {
    const fs = stateOf(factory, "cr-factory");
    if (fs.games >= MAX_GAMES || ctx.ts < fs.nextGameAt) return;
    const tokenId = fs.games % 2 === 0 ? ALPH_TOKEN_ID : stakedToken(ctx);
    if (!tokenId) return;
    const id = builder.ownContractId(0);
    const game = builder.deployContract(ctx, rng.pick(users), "chainreaction-game", id, {
      iface: "",
      extraEvents: [
        {
          contractAddress: factory.address,
          eventIndex: 0,
          fields: [byteVec(id), u256(fs.games), boolVal(tokenId !== ALPH_TOKEN_ID), byteVec(tokenId)],
        },
      ],
    });
    if (!game) return;
    game.dapp = {
      kind: "cr-game",
      version: 2,
      gameIndex: fs.games,
      tokenId,
      feesBps: rng.pick([100, 200, 300, 500]),
      round: idleRound(ctx.ts + rng.int(10, 60) * SECOND),
    };
    ledger.touchContract(ctx, factory);
    factory.counter += 1;
    fs.games += 1;
    fs.nextGameAt = fs.games < 2 ? ctx.ts : ctx.ts + NEW_GAME_EVERY_MS;
  };

  const deploy = (ctx: BlockCtx): void => {
    const f = planned.factoryV2;
    if (!ledger.contractById(f.id)) {
      const c = builder.deployContract(ctx, rng.pick(users), "chainreaction-v2", f.id, { iface: "" });
      if (c) c.dapp = { kind: "cr-factory", games: 0, nextGameAt: ctx.ts };
    }
    if (!ledger.contractById(planned.v1.id)) {
      const c = builder.deployContract(ctx, rng.pick(users), "chainreaction-v1", planned.v1.id, {
        iface: "",
      });
      if (c)
        c.dapp = {
          kind: "cr-game",
          version: 1,
          gameIndex: 0,
          tokenId: ALPH_TOKEN_ID,
          feesBps: 0,
          round: idleRound(ctx.ts + rng.int(30, 90) * SECOND),
        };
    }
  };

  return {
    step(ctx) {
      if (ctx.chainIndex !== planned.chainIndex) return;
      const factory = ledger.contractById(planned.factoryV2.id);
      const v1 = ledger.contractById(planned.v1.id);
      if (!factory || !v1) {
        deploy(ctx);
        return;
      }
      createGame(ctx, factory);
      const games = ledger
        .contractsOn(ctx.chainIndex, "chainreaction-game")
        .sort((a, b) => stateOf(a, "cr-game").gameIndex - stateOf(b, "cr-game").gameIndex);
      for (const game of [v1, ...games]) if (game.createdTs < ctx.ts) play(ctx, game);
    },
  };
}
