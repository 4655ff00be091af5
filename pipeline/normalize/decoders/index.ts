/** Event decoders by decoder kind (`lib/dapps/kinds.ts`); tx-level inference lives in `alphbanx.ts` and `wormhole.ts`. */
import type { DecoderKind } from "../../../lib/dapps/kinds.ts";
import {
  decodeChainReactionV1,
  decodeChainReactionV1Factory,
  decodeChainReactionV2,
  decodeChainReactionV3Game,
  decodeGuessingHub,
  decodeGuessingRoom,
} from "./chain-reaction.ts";
import { decodeDeadRare } from "./deadrare.ts";
import { decodeDiaPrice, decodeDiaRandom } from "./dia.ts";
import type { EventDecoder } from "./fields.ts";
import { decodeFurnace } from "./furnace.ts";
import { decodeLinxLending } from "./linx.ts";
import {
  decodeMyOnionComments,
  decodeMyOnionFeeCollector,
  decodeMyOnionLauncher,
  decodeMyOnionProfiles,
  decodeMyOnionRouter,
  decodeMyOnionUpgradable,
} from "./myonion.ts";
import { decodeWormholeGovernance } from "./wormhole.ts";

export { inferAlphBanXOps } from "./alphbanx.ts";
export { type DecodeFailure, type DecodeResult, isFailure } from "./fields.ts";
export { inferWormholeRedemptions } from "./wormhole.ts";

/** Kinds whose contracts emit events this module decodes (the others have none, or are handled elsewhere). */
export const EVENT_DECODERS: Partial<Record<DecoderKind, EventDecoder>> = {
  "dia-price": decodeDiaPrice,
  "dia-random": decodeDiaRandom,
  furnace: decodeFurnace,
  "chainreaction-v2": decodeChainReactionV2,
  "chainreaction-v1": decodeChainReactionV1,
  "chainreaction-v1-factory": decodeChainReactionV1Factory,
  "chainreaction-v3-game": decodeChainReactionV3Game,
  "guessing-hub": decodeGuessingHub,
  "guessing-room": decodeGuessingRoom,
  deadrare: decodeDeadRare,
  "myonion-launcher": decodeMyOnionLauncher,
  "myonion-router": decodeMyOnionRouter,
  "myonion-fee-handler": decodeMyOnionUpgradable,
  "myonion-fee-collector": decodeMyOnionFeeCollector,
  "myonion-comments": decodeMyOnionComments,
  "myonion-profiles": decodeMyOnionProfiles,
  "linx-lending": decodeLinxLending,
  "wormhole-governance": decodeWormholeGovernance,
};
