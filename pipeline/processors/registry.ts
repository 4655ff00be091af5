/**
 * Registry processor (discovery): reads `alephium.events.v1` and records what the chain announces.
 * - `contract/created` events → `contracts` (kind token when the same tx minted its token; the parent, the
 *   contract that created it, when the event names one);
 * - `token/genesis_mint` events → `tokens`, unregistered until an admin registers them, with minter,
 *   mint tx and mint time, and the fungible-token metadata the node gives (multicall methods 0..3);
 * - contracts created with the NFT collection interface (0002…) → `nft_collections`, and those with the
 *   NFT interface (0003) → `nft_tokens` of their parent collection (a parent without the collection interface,
 *   such as the Token Furnace, gets a collection row too); a Token Furnace burn that minted a BurnerNFT gives the
 *   NFT its traits (`token_burned`, `amount_burned`); an NFT's token URI and index (INFT methods 0 and 1) and a
 *   collection's URI and supply (INFTCollection methods 0 and 1) are asked of the node, and each URI waits in the
 *   NFT metadata cache for the job worker's fetch (lib/nfts/metadata-repo.ts, pipeline/jobs/nft-metadata.ts).
 * Upserts are idempotent and never overwrite what an admin edited (see lib/tokens/tokens-repo.ts).
 */
import { hexToString, NodeProvider } from "@alephium/web3";
import type { ContractCreatedPayload } from "../../lib/chain/taxonomy.ts";
import { withRetry } from "../../lib/retry.ts";
import type {
  ContractInput,
  DiscoveredToken,
  NftCollectionInput,
  NftTokenInput,
} from "../../lib/tokens/repo.ts";
import { createRegistryRepo } from "../../lib/tokens/repo.ts";
import type { PipelineDeps } from "../deps.ts";
import { nodeError } from "../ingest/node-client.ts";
import { CONSUMER_GROUPS, type EventsMessage } from "../messages.ts";
import { contractIdOf } from "../normalize/chain-utils.ts";
import { defineProcessor } from "../processor.ts";

/** Standard interface ids (`@std(id=…)`): INFTCollection 0002 (000201 with royalty), INFT 0003. */
const NFT_COLLECTION_IFACE = "0002";
const NFT_IFACE = "0003";

export interface TokenMetadata {
  symbol: string | null;
  name: string | null;
  decimals: number | null;
  totalSupply: string | null;
}

export type MetadataSource = (tokenId: string) => Promise<TokenMetadata | null>;

/** What an NFT contract says of itself: its token URI and, when it answers, its collection and index. */
export interface NftUris {
  tokenUri: string | null;
  nftIndex: string | null;
}

/** What an NFT collection contract says of itself. */
export interface CollectionUris {
  collectionUri: string | null;
  totalSupply: string | null;
}

export interface NftUriSource {
  nft(tokenId: string): Promise<NftUris | null>;
  collection(collectionId: string): Promise<CollectionUris | null>;
}

/** Longest URI kept (a data: URI carries its whole document); a longer one, or one with a NUL, is not stored. */
const MAX_URI_CHARS = 1_048_576;
const storableUri = (uri: string | null | undefined): string | null =>
  uri && uri.length <= MAX_URI_CHARS && !uri.includes("\u0000") ? uri.trim() || null : null;

/** One node call with `retries` retries and, when given, a limit per attempt; throws the last error. */
async function nodeCall<T>(
  label: string,
  call: () => Promise<T>,
  options: { retries?: number; timeoutMs?: number },
): Promise<T> {
  const once = () => {
    const attempt = call().catch((error: unknown) => {
      // The contract answered (a failed call, a deprecated NFT): asking again gives the same answer.
      if (/^(Failed to call contract|Deprecated NFT)/.test((error as Error)?.message ?? "")) throw error;
      throw nodeError(label, error);
    });
    if (options.timeoutMs === undefined) return attempt;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${label} timed out`)), options.timeoutMs);
    });
    return Promise.race([attempt, timeout]).finally(() => clearTimeout(timer));
  };
  return withRetry(once, { retries: options.retries ?? 3, baseMs: 200, maxMs: 2_000 });
}

/**
 * NFT and collection URIs from the node (`fetchNFTMetaData`, `fetchNFTCollectionMetaData` of @alephium/web3); null
 * when the contract does not answer the interface's methods (a deprecated NFT, a parent that is no collection).
 */
export function nodeNftUriSource(
  deps: Pick<PipelineDeps, "config" | "log">,
  options: { retries?: number; timeoutMs?: number } = {},
): NftUriSource {
  const provider = new NodeProvider(deps.config.NODE_URL, deps.config.NODE_API_KEY || undefined);
  return {
    async nft(tokenId) {
      try {
        const m = await nodeCall("nft-metadata", () => provider.fetchNFTMetaData(tokenId), options);
        return { tokenUri: storableUri(m.tokenUri), nftIndex: m.nftIndex.toString() };
      } catch (error) {
        deps.log.debug({ token_id: tokenId, err: String(error) }, "No token URI for NFT.");
        return null;
      }
    },
    async collection(collectionId) {
      try {
        const m = await nodeCall(
          "nft-collection-metadata",
          () => provider.fetchNFTCollectionMetaData(collectionId),
          options,
        );
        return { collectionUri: storableUri(m.collectionUri), totalSupply: m.totalSupply.toString() };
      } catch (error) {
        deps.log.debug({ collection_id: collectionId, err: String(error) }, "No collection URI.");
        return null;
      }
    },
  };
}

/**
 * Fungible-token metadata from the node; null when the contract does not implement the interface.
 * `retries` (default 3) retries a failed call; `timeoutMs` gives up on one attempt (default: no limit).
 */
export function nodeMetadataSource(
  deps: Pick<PipelineDeps, "config" | "log">,
  options: { retries?: number; timeoutMs?: number } = {},
): MetadataSource {
  const provider = new NodeProvider(deps.config.NODE_URL, deps.config.NODE_API_KEY || undefined);
  return async (tokenId) => {
    try {
      const m = await nodeCall(
        "fungible-metadata",
        () => provider.fetchFungibleTokenMetaData(tokenId),
        options,
      );
      return {
        symbol: hexToString(m.symbol),
        name: hexToString(m.name),
        decimals: m.decimals,
        totalSupply: m.totalSupply.toString(),
      };
    } catch (error) {
      deps.log.debug({ token_id: tokenId, err: String(error) }, "No fungible metadata for token.");
      return null;
    }
  };
}

interface RegistryState {
  repo: ReturnType<typeof createRegistryRepo>;
  metadata: MetadataSource;
  uris: NftUriSource;
}

export const registryProcessor = defineProcessor<EventsMessage, RegistryState>({
  name: "registry",
  topic: "events",
  group: CONSUMER_GROUPS.registry,
  codec: (codecs) => codecs.events,
  setup: (deps) => ({
    repo: createRegistryRepo(deps.pg),
    metadata: nodeMetadataSource(deps),
    uris: nodeNftUriSource(deps),
  }),
  async handle(messages, { deps, state }) {
    const contracts: ContractInput[] = [];
    const tokens: DiscoveredToken[] = [];
    const collections: NftCollectionInput[] = [];
    const nfts: NftTokenInput[] = [];
    const parentsOfNfts = new Set<string>();
    const burnerTraits = new Map<string, NonNullable<NftTokenInput["traits"]>>();
    for (const m of messages) {
      if (m.kind !== "block") continue;
      const minted = new Set(
        m.events
          .filter((e) => e.category === "token" && e.sub_kind === "genesis_mint")
          .map((e) => e.token_id),
      );
      for (const e of m.events) {
        if (e.category === "contract" && e.sub_kind === "created") {
          const payload = JSON.parse(e.payload_json) as Partial<ContractCreatedPayload>;
          const address = payload.contract_address ?? e.to;
          const contractId = contractIdOf(address);
          if (!contractId) continue;
          const token = m.events.find((x) => x.tx_id === e.tx_id && x.sub_kind === "genesis_mint");
          const iface = payload.std_interface_id ?? "";
          const parentId = payload.parent_address ? contractIdOf(payload.parent_address) : undefined;
          const nftKind = iface.startsWith(NFT_COLLECTION_IFACE)
            ? "nft_collection"
            : iface.startsWith(NFT_IFACE) && parentId
              ? "nft"
              : undefined;
          if (nftKind === "nft_collection") {
            collections.push({
              collectionId: contractId,
              address,
              stdInterfaceId: iface,
              createdTx: e.tx_id,
              createdAt: m.block_timestamp,
            });
          } else if (nftKind === "nft" && payload.parent_address) {
            // A contract that creates NFTs is their collection even without the collection interface (the Token
            // Furnace creates its BurnerNFTs so); an existing row keeps its own facts.
            parentsOfNfts.add(payload.parent_address);
            nfts.push({
              tokenId: contractId,
              collectionAddress: payload.parent_address,
              minter: e.from || null,
              mintTx: e.tx_id,
              mintTime: m.block_timestamp,
            });
          }
          contracts.push({
            contractId,
            address,
            dappId: e.dapp_id === "alephium" || e.dapp_id === "unknown" ? null : e.dapp_id,
            kind: nftKind ?? (token && minted.has(token.token_id) ? "token" : "unknown"),
            stdInterfaceId: payload.std_interface_id || null,
            createdTx: e.tx_id,
            createdAt: m.block_timestamp,
            parentAddress: parentId ? payload.parent_address : null,
          });
        }
        if (e.category === "token" && e.sub_kind === "burn" && e.type === "furnace_burn" && e.with) {
          // A burn that minted a BurnerNFT: the NFT's traits are what it burned.
          burnerTraits.set(e.with, [
            { trait_key: "token_burned", value_text: e.token_id },
            { trait_key: "amount_burned", value_text: e.amount },
          ]);
        }
        if (e.category === "token" && e.sub_kind === "genesis_mint") {
          const meta = await state.metadata(e.token_id);
          tokens.push({
            id: e.token_id,
            minter: e.from || null,
            mintTx: e.tx_id,
            mintTime: m.block_timestamp,
            decimals: meta?.decimals ?? null,
            name: meta?.name ?? null,
            symbol: meta?.symbol ?? null,
            totalSupply: meta?.totalSupply ?? e.amount,
          });
        }
      }
    }
    if (contracts.length > 0) await state.repo.upsertContracts(contracts);
    for (const c of collections) {
      const uris = await state.uris.collection(c.collectionId);
      await state.repo.upsertNftCollection({
        ...c,
        uri: uris?.collectionUri ?? null,
        totalSupply: uris?.totalSupply ?? null,
      });
    }
    for (const parent of parentsOfNfts) {
      const id = contractIdOf(parent);
      if (id && !(await state.repo.getNftCollection(parent)))
        await state.repo.upsertNftCollection({ collectionId: id, address: parent });
    }
    for (const n of nfts) {
      const address = [...burnerTraits.keys()].find((a) => contractIdOf(a) === n.tokenId);
      if (address) n.traits = burnerTraits.get(address)!;
      const uris = await state.uris.nft(n.tokenId);
      n.uri = uris?.tokenUri ?? null;
      n.nftIndex = uris?.nftIndex ?? null;
    }
    if (nfts.length > 0) await state.repo.upsertNftTokens(nfts);
    if (tokens.length > 0) await state.repo.upsertDiscoveredTokens(tokens);
    deps.metrics.pipelineRows.inc({ stage: "registry", table: "tokens" }, tokens.length);
  },
});
