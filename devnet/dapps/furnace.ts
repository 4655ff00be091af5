/**
 * The devnet's Token Furnace (decoder kind `furnace`): one furnace per group, homed on chain g→g and deployed by
 * a user of that group in its first block. Now and then (about one block in {@link BURN_ONE_IN} of the chain) a
 * user of the group burns part of a devnet token it holds: the token leaves circulation (spent by the inputs,
 * in no output; the furnace holds nothing), and the furnace emits `Burned(caller: Address, tokenBurned: ByteVec,
 * amount: U256, nft: Bool, timestamp: U256 ms, as `blockTimeStamp!()` gives it)` (event 0) where `tokenBurned` is the hex of the ASCII text of
 * the 64-hex token id, as the mainnet contract's `convert()` makes it (generations 2 and 3); group 0's furnace
 * writes the raw 32-byte id, as mainnet's generation 1 does. One burn in three mints a BurnerNFT: the
 * same tx creates a sub-contract of the furnace at path `toByteVec!(nftIndex)` (a ContractCreated whose parent
 * is the furnace, interface 0003), its deposit paid by the burner. A BurnerNFT answers INFT's `getTokenUri`
 * (method 0) with a `data:application/json;base64,` token URI (name, description, an SVG image as a data: URI,
 * attributes) and `getCollectionIndex` (method 1) with its furnace and index ({@link furnaceNftCall}): strings made
 * from the NFT's own facts, no random draw.
 */
import { binToHex, codec, type node, subContractId } from "@alephium/web3";
import type { Accounts, Ledger } from "../ledger.ts";
import type { Rng } from "../random.ts";
import { addressVal, byteVec, type TxBuilder, USER_GAS_PRICE, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec, EventSpec } from "../types.ts";
import { asciiHex, boolVal, stateOf } from "./games-common.ts";
import type { DappState, DevnetFurnace } from "./games-types.ts";

/** A furnace's chain has a burn in about one block in this many (one every 3 min at 8 s blocks). */
const BURN_ONE_IN = 22;
/** Standard interface id of an NFT (the ContractCreated event's third field). */
const NFT_INTERFACE = "0003";

export interface Furnace {
  /** On a furnace's chain: deploys it (first block), then now and then a user's burn. */
  step(ctx: BlockCtx): void;
}

export function createFurnace(deps: {
  rng: Rng;
  planned: readonly DevnetFurnace[];
  accounts: Accounts;
  ledger: Ledger;
  builder: TxBuilder;
}): Furnace {
  const { rng, ledger, builder } = deps;

  const burn = (ctx: BlockCtx, furnace: ContractRec, group: number): void => {
    const holders = deps.accounts.usersByGroup[group]!.map((u) => ({
      u,
      bal: ledger.tokenBalance(u, ctx.ts),
    })).filter((h) => h.bal.size > 0);
    if (holders.length === 0) return;
    const { u: caller, bal } = rng.pick(holders);
    const [tokenId, have] = rng.pick([...bal].sort(([a], [b]) => a.localeCompare(b)));
    const amount = (have * BigInt(rng.int(1, 10))) / 100n;
    if (amount === 0n) return;
    const nft = rng.int(1, 3) === 1;
    const burned = new Map([[tokenId, amount]]);
    const event: EventSpec = {
      contractAddress: furnace.address,
      eventIndex: 0,
      fields: [
        addressVal(caller.address),
        // Group 0's furnace behaves as a generation 1 furnace: the id's raw 32 bytes, not its hex text.
        byteVec(group === 0 ? tokenId : asciiHex(tokenId)),
        u256(amount),
        boolVal(nft),
        u256(ctx.ts),
      ],
    };
    if (nft) {
      const state = stateOf(furnace, "furnace");
      const path = binToHex(codec.u256Codec.encode(BigInt(state.nfts)));
      const made = builder.deployContract(
        ctx,
        caller,
        "furnace-nft",
        subContractId(furnace.id, path, group),
        {
          parent: furnace,
          iface: NFT_INTERFACE,
          burn: burned,
          extraEvents: [event],
        },
      );
      if (made) {
        made.dapp = {
          kind: "furnace-nft",
          index: state.nfts,
          group,
          furnaceId: furnace.id,
          tokenBurned: tokenId,
          amount: amount.toString(),
        };
        ledger.touchContract(ctx, furnace);
        state.nfts += 1;
        furnace.counter += 1;
      }
      return;
    }
    const gas = builder.userGas(40000);
    const g = ledger.gather(caller, ctx.ts, BigInt(gas) * USER_GAS_PRICE, burned);
    if (!g) return;
    ledger.touchContract(ctx, furnace);
    furnace.counter += 1;
    builder.commitTx(ctx, {
      inputs: g.inputs,
      contractInputs: [],
      fixed: [g.change],
      generated: [],
      scriptOpt: builder.script(),
      gasAmount: gas,
      gasPrice: USER_GAS_PRICE,
      ok: true,
      events: [event],
      burned,
    });
  };

  return {
    step(ctx) {
      const planned = deps.planned.find((f) => f.chainIndex === ctx.chainIndex);
      if (!planned) return;
      const furnace = ledger.contractById(planned.id);
      if (!furnace) {
        const made = builder.deployContract(
          ctx,
          rng.pick(deps.accounts.usersByGroup[planned.group]!),
          "furnace",
          planned.id,
          { iface: "" },
        );
        if (made) made.dapp = { kind: "furnace", nfts: 0 };
        return;
      }
      if (rng.int(1, BURN_ONE_IN) === 1) burn(ctx, furnace, planned.group);
    },
  };
}

/** A BurnerNFT's image: an SVG flame with its index, as a data: URI (its colour from the index and the group). */
function burnerNftImage(index: number, group: number): string {
  const hue = (index * 47 + group * 90) % 360;
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">` +
    `<rect width="256" height="256" fill="hsl(${hue},45%,14%)"/>` +
    `<path d="M128 36c22 44 62 64 62 118a62 62 0 0 1-124 0c0-34 18-50 30-74 8 22 18 30 28 34-4-30-8-52 4-78z" fill="hsl(${(hue + 20) % 360},90%,55%)"/>` +
    `<text x="128" y="238" font-family="monospace" font-size="20" fill="#fff" text-anchor="middle">#${index}</text></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`;
}

/** A BurnerNFT's token URI: its JSON (name, description, image, attributes) as a base64 data: URI. */
export function burnerNftTokenUri(s: Extract<DappState, { kind: "furnace-nft" }>): string {
  const doc = {
    name: `BurnerNFT #${s.index}`,
    description: `Minted by the devnet's group ${s.group} Token Furnace for burning ${s.amount} units of token ${s.tokenBurned}.`,
    image: burnerNftImage(s.index, s.group),
    attributes: [
      { trait_type: "furnace_group", value: s.group },
      { trait_type: "index", value: s.index },
    ],
  };
  return `data:application/json;base64,${Buffer.from(JSON.stringify(doc), "utf8").toString("base64")}`;
}

/**
 * A BurnerNFT's answer to a read-only call (call-contract double): INFT's `getTokenUri` (0) and
 * `getCollectionIndex` (1: the furnace's id, the index); undefined for any other contract or method.
 */
export function furnaceNftCall(c: ContractRec, methodIndex: number): node.Val[] | undefined {
  if (c.dapp?.kind !== "furnace-nft") return undefined;
  if (methodIndex === 0) return [byteVec(asciiHex(burnerNftTokenUri(c.dapp)))];
  if (methodIndex === 1) return [byteVec(c.dapp.furnaceId), u256(BigInt(c.dapp.index))];
  return undefined;
}
