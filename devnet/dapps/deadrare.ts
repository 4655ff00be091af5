/**
 * The devnet's DeadRare (NFT marketplace) on chain 1→1: the marketplace, a collection whose NFTs are its
 * sub-contracts issuing one unit each (minted to the group's users), then listings, sales, cancellations and
 * price updates. A listing is a sub-contract of the marketplace holding the NFT; a sale or a cancellation
 * destroys it (its deposit back to the seller). Sales pay the seller the price less a 2.5 % fee kept by the
 * marketplace.
 *
 * Events of the marketplace (dapp-spec.md): 0 listed(price, listingId, tokenId, collectionId, tokenOwner,
 * listingContractId), 1 sold(price, listingId, tokenId, collectionId, previousOwner, newOwner), 2 cancelled(
 * listingId, tokenId, collectionId, tokenOwner), 3 price updated(listingId, tokenId, collectionId, oldPrice,
 * newPrice).
 */
import type { node } from "@alephium/web3";
import { DUST_AMOUNT, MINIMAL_CONTRACT_DEPOSIT, ONE_ALPH, subContractId } from "@alephium/web3";
import { addressVal, byteVec, u256 } from "../tx-builder.ts";
import type { BlockCtx, ContractRec } from "../types.ts";
import type { DefiPlan } from "./defi-plan.ts";
import { callTx, type DappDeps, dappState, newDappContract, pickUser, scriptOf } from "./kit.ts";

const METHOD = { mint: 3, list: 4, buy: 5, cancel: 6, updatePrice: 7 } as const;
const FEE_PERMILLE = 25n;

export interface DeadRare {
  step(ctx: BlockCtx): void;
  call(c: ContractRec, methodIndex: number, args: node.Val[]): node.Val[] | undefined;
}

export function createDeadRare(deps: DappDeps & { plan: DefiPlan["deadrare"] }): DeadRare {
  const { rng, ledger, plan } = deps;
  const get = (id: string): ContractRec | undefined => ledger.contractById(id);
  const nftIds = new Set(plan.nfts.map((n) => n.id));

  const deploy = (ctx: BlockCtx, id: string, role: string): void => {
    const user = deps.accounts.usersByGroup[ctx.from]![0]!;
    callTx(deps, ctx, {
      user,
      gas: 100_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      created: [{ contract: newDappContract(ctx, rng, id, dappState(role)) }],
      script: deps.builder.script(),
    });
  };

  const mint = (ctx: BlockCtx, index: number): void => {
    const collection = get(plan.collection.id)!;
    const t = plan.nfts[index]!;
    const minter = pickUser(deps, ctx, () => true)!;
    const nft = newDappContract(ctx, rng, t.id, dappState("deadrare-nft", { index: BigInt(index) }), {
      token: { symbol: t.symbol, name: t.name, decimals: 0, totalSupply: 1n, minter: minter.address },
    });
    callTx(deps, ctx, {
      user: minter,
      gas: 80_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT + DUST_AMOUNT,
      touched: [collection],
      created: [{ contract: nft, parent: collection }],
      apply: () => {
        collection.counter += 1;
      },
      payouts: () => [{ address: minter.address, alph: DUST_AMOUNT, tokens: [[t.id, 1n]] }],
      script: scriptOf([
        { contractId: plan.collection.id, method: METHOD.mint, alph: MINIMAL_CONTRACT_DEPOSIT },
      ]),
      issuedToken: t.id,
    });
  };

  const listings = (): ContractRec[] =>
    [...ledger.contracts()]
      .filter((c) => c.defi?.role === "deadrare-listing")
      .sort((a, b) => Number((a.defi!.num["listingId"] ?? 0n) - (b.defi!.num["listingId"] ?? 0n)));

  const list = (ctx: BlockCtx): boolean => {
    const market = get(plan.marketplace.id)!;
    let nft = "";
    const seller = pickUser(deps, ctx, (_u, bal) => {
      nft = [...bal.keys()].sort().find((id) => nftIds.has(id)) ?? "";
      return nft !== "";
    });
    if (!seller) return false;
    const price = rng.bigint(5n, 400n) * ONE_ALPH;
    const listingId = BigInt(market.counter);
    const id = subContractId(market.id, nft + listingId.toString(16).padStart(16, "0"), ctx.from);
    const listing = newDappContract(
      ctx,
      rng,
      id,
      dappState("deadrare-listing", { price, listingId }, { seller: seller.address, nft }),
    );
    listing.tokens.set(nft, 1n);
    return callTx(deps, ctx, {
      user: seller,
      gas: 90_000,
      alphIn: MINIMAL_CONTRACT_DEPOSIT,
      tokensIn: [[nft, 1n]],
      touched: [market],
      created: [{ contract: listing, parent: market }],
      apply: () => {
        market.counter += 1;
      },
      events: () => [
        {
          contractAddress: market.address,
          eventIndex: 0,
          fields: [
            u256(price),
            u256(listingId),
            byteVec(nft),
            byteVec(plan.collection.id),
            addressVal(seller.address),
            byteVec(id),
          ],
        },
      ],
      script: scriptOf([
        {
          contractId: market.id,
          method: METHOD.list,
          alph: MINIMAL_CONTRACT_DEPOSIT,
          tokens: [[nft, 1n]],
          args: [{ bytes: nft }, { u256: price }],
        },
      ]),
    });
  };

  const buy = (ctx: BlockCtx, listing: ContractRec): boolean => {
    const market = get(plan.marketplace.id)!;
    const { price = 0n, listingId = 0n } = listing.defi!.num;
    const { seller = "", nft = "" } = listing.defi!.text;
    const buyer = pickUser(deps, ctx, (u) => u.address !== seller);
    if (!buyer) return false;
    const fee = (price * FEE_PERMILLE) / 1000n;
    const deposit = listing.alph;
    return callTx(deps, ctx, {
      user: buyer,
      gas: 90_000,
      alphIn: price,
      contracts: [listing, market],
      destroyed: [listing],
      apply: () => {
        market.alph += fee;
        listing.alph = 0n;
        listing.tokens.delete(nft);
      },
      payouts: () => [
        { address: buyer.address, tokens: [[nft, 1n]] },
        { address: seller, alph: price - fee + deposit },
      ],
      events: () => [
        {
          contractAddress: market.address,
          eventIndex: 1,
          fields: [
            u256(price),
            u256(listingId),
            byteVec(nft),
            byteVec(plan.collection.id),
            addressVal(seller),
            addressVal(buyer.address),
          ],
        },
      ],
      script: scriptOf([
        { contractId: market.id, method: METHOD.buy, alph: price, args: [{ u256: listingId }] },
      ]),
    });
  };

  const sellerOf = (listing: ContractRec) =>
    deps.accounts.userByAddress.get(listing.defi!.text["seller"] ?? "");

  const cancel = (ctx: BlockCtx, listing: ContractRec): boolean => {
    const market = get(plan.marketplace.id)!;
    const seller = sellerOf(listing);
    if (!seller) return false;
    const { listingId = 0n } = listing.defi!.num;
    const nft = listing.defi!.text["nft"] ?? "";
    const deposit = listing.alph;
    return callTx(deps, ctx, {
      user: seller,
      gas: 60_000,
      contracts: [listing],
      destroyed: [listing],
      apply: () => {
        listing.alph = 0n;
        listing.tokens.delete(nft);
      },
      payouts: () => [{ address: seller.address, alph: deposit, tokens: [[nft, 1n]] }],
      events: () => [
        {
          contractAddress: market.address,
          eventIndex: 2,
          fields: [u256(listingId), byteVec(nft), byteVec(plan.collection.id), addressVal(seller.address)],
        },
      ],
      script: scriptOf([{ contractId: market.id, method: METHOD.cancel, args: [{ u256: listingId }] }]),
    });
  };

  const updatePrice = (ctx: BlockCtx, listing: ContractRec): boolean => {
    const market = get(plan.marketplace.id)!;
    const seller = sellerOf(listing);
    if (!seller) return false;
    const { price = 0n, listingId = 0n } = listing.defi!.num;
    const nft = listing.defi!.text["nft"] ?? "";
    const next = (price * BigInt(rng.int(70, 95))) / 100n;
    return callTx(deps, ctx, {
      user: seller,
      gas: 50_000,
      touched: [listing],
      apply: () => {
        listing.defi!.num["price"] = next;
      },
      events: () => [
        {
          contractAddress: market.address,
          eventIndex: 3,
          fields: [u256(listingId), byteVec(nft), byteVec(plan.collection.id), u256(price), u256(next)],
        },
      ],
      script: scriptOf([
        { contractId: market.id, method: METHOD.updatePrice, args: [{ u256: listingId }, { u256: next }] },
      ]),
    });
  };

  return {
    step(ctx) {
      if (ctx.chainIndex !== plan.chainIndex) return;
      if (!get(plan.marketplace.id)) return deploy(ctx, plan.marketplace.id, "deadrare-marketplace");
      if (!get(plan.collection.id)) return deploy(ctx, plan.collection.id, "deadrare-collection");
      const unminted = plan.nfts.findIndex((n) => !get(n.id));
      if (unminted >= 0) return mint(ctx, unminted);
      // About two marketplace txs a minute.
      if (!rng.chance(0.25)) return;
      const open = listings();
      const r = rng.next();
      if (open.length === 0 || r < 0.4) list(ctx);
      else if (r < 0.75) buy(ctx, rng.pick(open));
      else if (r < 0.87) cancel(ctx, rng.pick(open));
      else updatePrice(ctx, rng.pick(open));
    },
    call(c, methodIndex) {
      // A listing: 0 → price, 1 → NFT token id.
      if (c.defi?.role !== "deadrare-listing") return undefined;
      if (methodIndex === 0) return [u256(c.defi.num["price"] ?? 0n)];
      if (methodIndex === 1) return [byteVec(c.defi.text["nft"] ?? "")];
      return undefined;
    },
  };
}
