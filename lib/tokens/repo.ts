/**
 * The registry repository: tokens, categories, dapps, chains, contracts and NFTs in Postgres. One object built from a `Pg`, used by the API route groups, seeding and the pipeline.
 */
import type { Pg } from "../stores/postgres.ts";
import { type CatalogRepo, createCatalogRepo } from "./catalog-repo.ts";
import { createOnchainRepo, type OnchainRepo } from "./onchain-repo.ts";
import { createTokensRepo, type TokensRepo } from "./tokens-repo.ts";

export type { Category, Chain, Dapp, DappInput, DappUpdate } from "./catalog-repo.ts";
export type {
  Contract,
  ContractInput,
  NftCollection,
  NftCollectionInput,
  NftToken,
  NftTokenInput,
} from "./onchain-repo.ts";
export { ALEPHIUM_CHAIN_ID, MAINNET_NETWORK_ID, MAX_CATEGORIES } from "./repo-shared.ts";
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
} from "./tokens-repo.ts";

export type RegistryRepo = TokensRepo & CatalogRepo & OnchainRepo;

export function createRegistryRepo(pg: Pg): RegistryRepo {
  return { ...createTokensRepo(pg), ...createCatalogRepo(pg), ...createOnchainRepo(pg) };
}
