/**
 * Seeds the registry from the official `@alephium/token-list` package, the Wormhole bridge mapping and a
 * small list of dapps and categories. Idempotent: a second run writes nothing, and fields an admin edited
 * (tokens.admin_edited_fields) keep the admin's values. Called at the API's first start and by `registry seed`.
 */
import { ALPH, mainnet, type TokenInfo, type TokenList } from "@alephium/token-list";
import { binToHex, contractIdFromAddress } from "@alephium/web3";
import type { Logger } from "../logger.ts";
import type { Pg } from "../stores/postgres.ts";
import { WORMHOLE_MAINNET_IMPORTS, wormholeMainnetRows } from "./bridge.ts";
import { KNOWN_DAPP_CONTRACTS } from "./known-contracts.ts";
import { createRegistryRepo, type ListedToken } from "./repo.ts";

/** Categories created by seeding (admins may delete or re-order them; seeding never undoes that). */
export const SEED_CATEGORIES = [
  { id: "stablecoin", sort_order: 10 },
  { id: "defi", sort_order: 20 },
  { id: "dex", sort_order: 30 },
  { id: "bridged", sort_order: 40 },
  { id: "oracle", sort_order: 50 },
  { id: "meme", sort_order: 60 },
  { id: "gaming", sort_order: 70 },
  { id: "nft", sort_order: 80 },
] as const;

/** Dapps created by seeding: the dapp groups of the interface plus the dapps the normalizer attributes. */
export const SEED_DAPPS = [
  { id: "ayin", name: "Ayin", website: "https://www.ayin.app", categories: ["dex", "defi"] },
  { id: "elexium", name: "Elexium", website: "https://www.elexium.finance", categories: ["dex", "defi"] },
  { id: "alphbanx", name: "AlphBanX", website: "https://alphbanx.com", categories: ["defi", "stablecoin"] },
  { id: "dia-oracle", name: "DIA Oracle", website: "https://www.diadata.org", categories: ["oracle"] },
  { id: "furnace", name: "Token Furnace", website: null, categories: ["defi"] },
  { id: "chainreaction", name: "Chain Reaction", website: null, categories: ["gaming"] },
  { id: "wormhole", name: "Alephium Bridge (Wormhole)", website: null, categories: ["bridged"] },
  { id: "myonion", name: "MyOnion.fun", website: null, categories: ["meme"] },
  { id: "deadrare", name: "DeadRare", website: null, categories: ["nft"] },
  { id: "linx", name: "Linx lending", website: null, categories: ["defi"] },
] as const;

/** Tokens of the list that belong to a seeded dapp (by token id). */
const TOKEN_DAPPS: Record<string, string> = {
  "1a281053ba8601a658368594da034c2e99a0fb951b86498d05e76aedfe666800": "ayin", // AYIN
  "5bf2f559ae714dab83ff36bed4d9e634dfda3ca9ed755d60f00be89e2a20bd00": "ayin", // xAYIN
  cad22f7c98f13fe249c25199c61190a9fb4341f8af9b1c17fcff4cd4b2c3d200: "elexium", // EX
  "9b3070a93fd5127d8c39561870432fdbc79f598ca8dbf2a3398fc100dfd45f00": "alphbanx", // ABX
  c7d1dab489ee40ca4e6554efc64a64e73a9f0ddfdec9e544c82c1c6742ccc500: "alphbanx", // ABD
  a7af44d2756d69dedf4ea4cf8e6415f1188b80e99f217d0b73e270b9c0408300: "myonion", // ONION
};

const STABLECOIN = /^(USDT|USDC|DAI|ABD)/i;

export interface SeedReport {
  /** Rows inserted or changed by this run (0 everywhere on a re-run). */
  tokens: number;
  bridged: number;
  categories: number;
  dapps: number;
  tokenCategories: number;
  contracts: number;
}

export interface SeedDeps {
  pg: Pg;
  log?: Logger;
}

/** The list's entries carry optional fields the package's TokenInfo type does not declare. */
type ListEntry = TokenInfo & {
  nameOnChain?: string;
  symbolOnChain?: string;
  originChain?: string;
  unchainedLogoURI?: string;
};

/** Maps the official list to registry rows; ALPH is added when the list lacks it. Pure. */
export function listedTokens(list: TokenList): (ListedToken & { dapp: string | null })[] {
  const entries = list.tokens as ListEntry[];
  const all = entries.some((t) => /^0{64}$/.test(t.id)) ? entries : [ALPH as ListEntry, ...entries];
  const bridged = new Set(WORMHOLE_MAINNET_IMPORTS.map((w) => w.bridgeTokenId));
  return all.map((t) => ({
    id: t.id.toLowerCase(),
    networkId: list.networkId,
    name: t.name,
    symbol: t.symbol,
    decimals: t.decimals,
    description: t.description ?? null,
    logoURI: t.logoURI ?? null,
    nameOnChain: t.nameOnChain ?? null,
    symbolOnChain: t.symbolOnChain ?? null,
    originChain: t.originChain ?? null,
    unchainedLogoURI: t.unchainedLogoURI ?? null,
    dapp: TOKEN_DAPPS[t.id] ?? (bridged.has(t.id) ? "wormhole" : null),
  }));
}

/** Seed category links: bridged tokens → bridged, stablecoins → stablecoin, dapp tokens → defi. Pure. */
export function seedTokenCategoryLinks(
  tokens: { id: string; symbol: string; dapp: string | null }[],
): { tokenId: string; categoryId: string }[] {
  return tokens.flatMap((t) => {
    const ids: string[] = [];
    if (STABLECOIN.test(t.symbol)) ids.push("stablecoin");
    if (t.dapp === "wormhole") ids.push("bridged");
    else if (t.dapp === "myonion") ids.push("meme");
    else if (t.dapp) ids.push("defi");
    return ids.map((categoryId) => ({ tokenId: t.id, categoryId }));
  });
}

/** Seeds (or re-seeds) the registry. Safe to run any number of times and concurrently with the API. */
export async function seedRegistry(deps: SeedDeps, options: { list?: TokenList } = {}): Promise<SeedReport> {
  const repo = createRegistryRepo(deps.pg);
  const tokens = listedTokens(options.list ?? mainnet);
  const categories = await repo.seedCategories([...SEED_CATEGORIES]);
  const dapps = await repo.seedDapps(
    SEED_DAPPS.map((d) => ({ id: d.id, name: d.name, website: d.website, categories: [...d.categories] })),
  );
  const written = await repo.upsertListedTokens(tokens);
  const bridged = await repo.upsertBridgedRows(wormholeMainnetRows());
  const tokenCategories = await repo.seedTokenCategories(seedTokenCategoryLinks(tokens));
  // Contract → dapp attribution the normalizer reads; re-seeding sets these known attributions again.
  const contracts = await repo.upsertContracts(
    KNOWN_DAPP_CONTRACTS.map((c) => ({
      contractId: binToHex(contractIdFromAddress(c.contract_address)),
      address: c.contract_address,
      dappId: c.dapp_id,
      label: c.label,
      registered: true,
    })),
  );
  const report = { tokens: written, bridged, categories, dapps, tokenCategories, contracts };
  deps.log?.info({ ...report, list_size: tokens.length }, "Registry seeded.");
  return report;
}

/** Seeds only when the registry holds no token yet (the API's first start). */
export async function seedRegistryIfEmpty(deps: SeedDeps): Promise<SeedReport | null> {
  if ((await createRegistryRepo(deps.pg).countTokens()) > 0) return null;
  return seedRegistry(deps);
}
