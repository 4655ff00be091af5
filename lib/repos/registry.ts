/**
 * The registry repository: tokens, categories, dapps, chains, contracts and NFTs in Postgres. One object built from a `Pg`, used by the API route groups, seeding and the pipeline.
 */
import type { Pg } from "../stores/postgres.ts";
import { type CatalogRepo, createCatalogRepo } from "./registry-catalog.ts";
import { createOnchainRepo, type OnchainRepo } from "./registry-onchain.ts";
import { createTokensRepo, type TokensRepo } from "./registry-tokens.ts";

export type { Category, Chain, Dapp, DappInput, DappUpdate } from "./registry-catalog.ts";
export type {
  Contract,
  ContractInput,
  NftCollection,
  NftCollectionInput,
  NftToken,
  NftTokenInput,
} from "./registry-onchain.ts";
export { ALEPHIUM_CHAIN_ID, MAINNET_NETWORK_ID, MAX_CATEGORIES } from "./registry-shared.ts";
export type {
  BridgedRow,
  DiscoveredToken,
  ListedToken,
  Token,
  TokenListEntry,
  TokenListQuery,
  TokenSort,
  TokenUpdate,
  UpsertOutcome,
} from "./registry-tokens.ts";

export type RegistryRepo = TokensRepo & CatalogRepo & OnchainRepo;

export function createRegistryRepo(pg: Pg): RegistryRepo {
  return { ...createTokensRepo(pg), ...createCatalogRepo(pg), ...createOnchainRepo(pg) };
}
