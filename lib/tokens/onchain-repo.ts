/**
 * Objects the pipeline discovers on chain (Postgres): contracts with their dapp attribution, NFT
 * collections and NFT tokens. Every write is an
 * idempotent upsert: replaying a block range leaves the rows as one clean pass did.
 */
import { binToHex, contractIdFromAddress } from "@alephium/web3";
import { badRequest } from "../errors.ts";
import { createNftMetadataRepo, enqueueNftMetadata, type NftMetadataRow } from "../nfts/metadata-repo.ts";
import type { Pg } from "../stores/postgres.ts";
import { contractAddressOf, groupOfContractId, HEX_ID, now, num, pageWithTotal } from "./repo-shared.ts";

/** A contract as the pipeline reports it; `address` and `group` are derived from the id when absent. */
export interface ContractInput {
  contractId: string;
  address?: string;
  group?: number;
  dappId?: string | null;
  /** For example `token`, `pool`, `nft_collection`, `nft`, `unknown`. */
  kind?: string;
  stdInterfaceId?: string | null;
  createdTx?: string | null;
  createdAt?: number | null;
  registered?: boolean;
  label?: string | null;
  /** The contract that created it (its ContractCreated event's parent); set once, never overwritten. */
  parentAddress?: string | null;
}

export interface Contract {
  address: string;
  contract_id: string;
  group: number;
  dapp_id: string | null;
  kind: string;
  std_interface_id: string | null;
  created_tx: string | null;
  created_at: number | null;
  registered: boolean;
  label: string | null;
  /** The creating contract, null when a script deployed it (or it was seen before parents were stored). */
  parent_address: string | null;
  /** Contracts it created. */
  n_childs: number;
  updated_at: number;
}

export interface NftCollectionInput {
  collectionId: string;
  address?: string;
  uri?: string | null;
  name?: string | null;
  description?: string | null;
  image?: string | null;
  stdInterfaceId?: string | null;
  totalSupply?: string | null;
  createdTx?: string | null;
  createdAt?: number | null;
}

export interface NftCollection {
  address: string;
  collection_id: string;
  uri: string | null;
  name: string | null;
  description: string | null;
  image: string | null;
  std_interface_id: string | null;
  total_supply: string | null;
  created_tx: string | null;
  created_at: number | null;
  /** NFT tokens of the collection known to the registry. */
  token_count: number;
  updated_at: number;
}

export interface NftTokenInput {
  tokenId: string;
  collectionAddress: string;
  nftIndex?: string | null;
  uri?: string | null;
  name?: string | null;
  image?: string | null;
  minter?: string | null;
  mintTx?: string | null;
  mintTime?: number | null;
  traits?: { trait_key: string; value_text: string }[] | null;
}

export interface NftToken {
  token_id: string;
  collection_address: string;
  nft_index: string | null;
  uri: string | null;
  name: string | null;
  image: string | null;
  minter: string | null;
  mint_tx: string | null;
  mint_time: number | null;
  /** The token URI's attributes, when known. */
  traits: { trait_key: string; value_text: string }[] | null;
  updated_at: number;
}

export interface OnchainRepo {
  /** Upserts contracts; given values win, absent ones keep what is stored; the creation facts never change. */
  upsertContracts(rows: ContractInput[]): Promise<number>;
  /** Every contract attributed to a dapp (the pipeline's attribution map). */
  listContractDapps(): Promise<{ address: string; dapp_id: string }[]>;
  getContract(address: string): Promise<Contract | null>;
  /** Contracts created by `address`, oldest first. */
  listContractChildren(
    address: string,
    q: { page: number; pageSize: number },
  ): Promise<{ contracts: Contract[]; total: number }>;
  /** The trait keys of a collection's NFTs, each with its values and how many NFTs carry each. */
  nftTraitDefinitions(
    collectionAddress: string,
  ): Promise<{ trait_key: string; count: number; values: { value_text: string; count: number }[] }[]>;
  /** The NFT metadata cache's rows of these token or collection URIs, by URI (lib/nfts/metadata-repo.ts). */
  nftMetadata(uris: Iterable<string | null | undefined>): Promise<Map<string, NftMetadataRow>>;
  /** One NFT by its contract address or 64-hex token id. */
  getNftToken(addressOrId: string): Promise<NftToken | null>;
  upsertNftCollection(row: NftCollectionInput): Promise<NftCollection>;
  upsertNftTokens(rows: NftTokenInput[]): Promise<number>;
  listNftCollections(q: { page: number; pageSize: number; search?: string }): Promise<{
    collections: NftCollection[];
    total: number;
  }>;
  getNftCollection(address: string): Promise<NftCollection | null>;
  listNftTokens(
    address: string,
    q: { page: number; pageSize: number },
  ): Promise<{ tokens: NftToken[]; total: number }>;
}

type Raw<T> = { [K in keyof T]: unknown };

const toContract = (r: Raw<Contract>): Contract =>
  ({
    ...r,
    group: Number(r.group),
    created_at: num(r.created_at),
    n_childs: Number(r.n_childs ?? 0),
    updated_at: num(r.updated_at) ?? 0,
  }) as Contract;
const toCollection = (r: Raw<NftCollection>): NftCollection =>
  ({
    ...r,
    created_at: num(r.created_at),
    updated_at: num(r.updated_at) ?? 0,
    token_count: Number(r.token_count ?? 0),
  }) as NftCollection;
const toNftToken = (r: Raw<NftToken>): NftToken =>
  ({
    ...r,
    mint_time: num(r.mint_time),
    traits: typeof r.traits === "string" ? JSON.parse(r.traits) : (r.traits ?? null),
    updated_at: num(r.updated_at) ?? 0,
  }) as NftToken;

const CONTRACT_SELECT = `SELECT c.address, c.contract_id, c.group_index AS "group", c.dapp_id, c.kind, c.std_interface_id,
  c.created_tx, c.created_at, c.registered, c.label, c.parent_address,
  (SELECT count(*) FROM contracts k WHERE k.parent_address = c.address)::int AS n_childs, c.updated_at FROM contracts c`;

const COLLECTION_SELECT = `SELECT n.*, (SELECT count(*) FROM nft_tokens k WHERE k.collection_address = n.address)::int
  AS token_count FROM nft_collections n`;

function contractIdOfAddress(address: string): string | null {
  try {
    return binToHex(contractIdFromAddress(address));
  } catch {
    return null;
  }
}

function hexId(id: string, what: string): string {
  if (!HEX_ID.test(id)) throw badRequest(`${what} ${id} is not 64 hex characters`);
  return id.toLowerCase();
}

export function createOnchainRepo(pg: Pg): OnchainRepo {
  const getNftCollection = async (address: string) => {
    const rows = await pg.query<Raw<NftCollection>>(
      "nft_collections_get",
      `${COLLECTION_SELECT} WHERE n.address = $1`,
      [address],
    );
    return rows[0] ? toCollection(rows[0]) : null;
  };

  const metadata = createNftMetadataRepo(pg);

  return {
    nftMetadata: (uris) => metadata.get(uris),

    async upsertContracts(rows) {
      const byAddress = new Map<string, Record<string, unknown>>();
      for (const r of rows) {
        const id = hexId(r.contractId, "Contract id");
        const address = r.address ?? contractAddressOf(id);
        byAddress.set(address, {
          address,
          contract_id: id,
          group_index: r.group ?? groupOfContractId(id),
          dapp_id: r.dappId ?? null,
          kind: r.kind ?? null,
          std_interface_id: r.stdInterfaceId ?? null,
          created_tx: r.createdTx ?? null,
          created_at: r.createdAt ?? null,
          registered: r.registered ?? null,
          label: r.label ?? null,
          parent_address: r.parentAddress ?? null,
        });
      }
      if (byAddress.size === 0) return 0;
      const next = {
        dapp_id: "COALESCE(EXCLUDED.dapp_id, c.dapp_id)",
        kind: "CASE WHEN EXCLUDED.kind = 'unknown' THEN c.kind ELSE EXCLUDED.kind END",
        std_interface_id: "COALESCE(EXCLUDED.std_interface_id, c.std_interface_id)",
        created_tx: "COALESCE(c.created_tx, EXCLUDED.created_tx)",
        created_at: "COALESCE(c.created_at, EXCLUDED.created_at)",
        registered: "c.registered OR EXCLUDED.registered",
        label: "COALESCE(EXCLUDED.label, c.label)",
        parent_address: "COALESCE(c.parent_address, EXCLUDED.parent_address)",
      };
      const cols = Object.keys(next) as (keyof typeof next)[];
      // The WHERE makes a replay a no-op: updated_at moves only when a value really changes.
      const result = await pg.query(
        "contracts_upsert",
        `INSERT INTO contracts AS c (address, contract_id, group_index, dapp_id, kind, std_interface_id, created_tx,
           created_at, registered, label, parent_address, updated_at)
         SELECT x.address, x.contract_id, x.group_index, x.dapp_id, COALESCE(x.kind, 'unknown'), x.std_interface_id,
           x.created_tx, x.created_at, COALESCE(x.registered, false), x.label, x.parent_address, $2
         FROM jsonb_to_recordset($1::jsonb) AS x(address text, contract_id text, group_index integer, dapp_id text,
           kind text, std_interface_id text, created_tx text, created_at bigint, registered boolean, label text,
           parent_address text)
         ON CONFLICT (address) DO UPDATE SET ${cols.map((k) => `${k} = ${next[k]}`).join(", ")},
           updated_at = EXCLUDED.updated_at
         WHERE (${cols.map((k) => `c.${k}`).join(", ")}) IS DISTINCT FROM (${cols.map((k) => next[k]).join(", ")})
         RETURNING c.address`,
        [JSON.stringify([...byAddress.values()]), now()],
      );
      return result.length;
    },

    listContractDapps: () =>
      pg.query<{ address: string; dapp_id: string }>(
        "contracts_dapps",
        "SELECT address, dapp_id FROM contracts WHERE dapp_id IS NOT NULL ORDER BY address",
      ),

    async getContract(address) {
      const rows = await pg.query<Raw<Contract>>(
        "contracts_get",
        `${CONTRACT_SELECT} WHERE c.address = $1 OR c.contract_id = lower($1)`,
        [address],
      );
      return rows[0] ? toContract(rows[0]) : null;
    },

    async listContractChildren(address, q) {
      const { rows, total } = await pageWithTotal<Raw<Contract>>(pg, "contracts_children", {
        select: (limit) =>
          `${CONTRACT_SELECT} WHERE c.parent_address = $1 ORDER BY c.created_at NULLS LAST, c.address ${limit}`,
        from: "FROM contracts c WHERE c.parent_address = $1",
        params: [address],
        page: q.page,
        pageSize: q.pageSize,
      });
      return { contracts: rows.map(toContract), total };
    },

    async nftTraitDefinitions(collectionAddress) {
      const rows = await pg.query<{ trait_key: string; value_text: string; n: unknown }>(
        "nft_trait_definitions",
        `SELECT t->>'trait_key' AS trait_key, t->>'value_text' AS value_text, count(*)::int AS n
         FROM (SELECT CASE WHEN jsonb_typeof(k.traits) = 'array' AND jsonb_array_length(k.traits) > 0 THEN k.traits
                 ELSE m.attributes END AS traits
               FROM nft_tokens k LEFT JOIN nft_metadata m
                 ON k.uri IS NOT NULL AND m.uri_sha256 = encode(sha256(convert_to(k.uri, 'UTF8')), 'hex')
                   AND m.state = 'ok'
               WHERE k.collection_address = $1) AS k, jsonb_array_elements(k.traits) AS t
         WHERE jsonb_typeof(k.traits) = 'array'
         GROUP BY 1, 2 ORDER BY 1, 2`,
        [collectionAddress],
      );
      const byKey = new Map<
        string,
        { trait_key: string; count: number; values: { value_text: string; count: number }[] }
      >();
      for (const r of rows) {
        const def = byKey.get(r.trait_key) ?? { trait_key: r.trait_key, count: 0, values: [] };
        def.count += Number(r.n);
        def.values.push({ value_text: r.value_text, count: Number(r.n) });
        byKey.set(r.trait_key, def);
      }
      return [...byKey.values()];
    },

    async getNftToken(address) {
      const id = HEX_ID.test(address) ? address.toLowerCase() : contractIdOfAddress(address);
      if (!id) return null;
      const rows = await pg.query<Raw<NftToken>>(
        "nft_tokens_get",
        "SELECT * FROM nft_tokens WHERE token_id = $1",
        [id],
      );
      return rows[0] ? toNftToken(rows[0]) : null;
    },

    async upsertNftCollection(row) {
      const id = hexId(row.collectionId, "Collection id");
      const address = row.address ?? contractAddressOf(id);
      await pg.query(
        "nft_collections_upsert",
        `INSERT INTO nft_collections AS n (address, collection_id, uri, name, description, image, std_interface_id,
           total_supply, created_tx, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (address) DO UPDATE SET uri = COALESCE(EXCLUDED.uri, n.uri), name = COALESCE(EXCLUDED.name, n.name),
           description = COALESCE(EXCLUDED.description, n.description), image = COALESCE(EXCLUDED.image, n.image),
           std_interface_id = COALESCE(EXCLUDED.std_interface_id, n.std_interface_id),
           total_supply = COALESCE(EXCLUDED.total_supply, n.total_supply),
           created_tx = COALESCE(n.created_tx, EXCLUDED.created_tx), created_at = COALESCE(n.created_at, EXCLUDED.created_at),
           updated_at = EXCLUDED.updated_at`,
        [
          address,
          id,
          row.uri ?? null,
          row.name ?? null,
          row.description ?? null,
          row.image ?? null,
          row.stdInterfaceId ?? null,
          row.totalSupply ?? null,
          row.createdTx ?? null,
          row.createdAt ?? null,
          now(),
        ],
      );
      await enqueueNftMetadata(pg, [row.uri]);
      return (await getNftCollection(address)) as NftCollection;
    },

    async upsertNftTokens(rows) {
      const unique = new Map<string, Record<string, unknown>>();
      for (const r of rows) {
        const id = hexId(r.tokenId, "NFT token id");
        unique.set(id, {
          token_id: id,
          collection_address: r.collectionAddress,
          nft_index: r.nftIndex ?? null,
          uri: r.uri ?? null,
          name: r.name ?? null,
          image: r.image ?? null,
          minter: r.minter ?? null,
          mint_tx: r.mintTx ?? null,
          mint_time: r.mintTime ?? null,
          traits: r.traits ?? null,
        });
      }
      if (unique.size === 0) return 0;
      const result = await pg.query(
        "nft_tokens_upsert",
        `INSERT INTO nft_tokens AS k (token_id, collection_address, nft_index, uri, name, image, minter, mint_tx,
           mint_time, traits, updated_at)
         SELECT x.*, $2 FROM jsonb_to_recordset($1::jsonb) AS x(token_id text, collection_address text, nft_index text,
           uri text, name text, image text, minter text, mint_tx text, mint_time bigint, traits jsonb)
         ON CONFLICT (token_id) DO UPDATE SET nft_index = COALESCE(EXCLUDED.nft_index, k.nft_index),
           uri = COALESCE(EXCLUDED.uri, k.uri), name = COALESCE(EXCLUDED.name, k.name),
           image = COALESCE(EXCLUDED.image, k.image), minter = COALESCE(k.minter, EXCLUDED.minter),
           mint_tx = COALESCE(k.mint_tx, EXCLUDED.mint_tx), mint_time = COALESCE(k.mint_time, EXCLUDED.mint_time),
           traits = COALESCE(EXCLUDED.traits, k.traits), updated_at = EXCLUDED.updated_at
         RETURNING k.token_id`,
        [JSON.stringify([...unique.values()]), now()],
      );
      await enqueueNftMetadata(
        pg,
        [...unique.values()].map((r) => r.uri as string | null),
      );
      return result.length;
    },

    async listNftCollections(q) {
      const params: (string | number)[] = [];
      let where = "TRUE";
      if (q.search) {
        params.push(q.search.toLowerCase());
        where = `(position($1 in lower(n.address)) > 0 OR position($1 in n.collection_id) > 0
          OR position($1 in lower(coalesce(n.name, ''))) > 0)`;
      }
      const { rows, total } = await pageWithTotal<Raw<NftCollection>>(pg, "nft_collections", {
        select: (limit) =>
          `${COLLECTION_SELECT} WHERE ${where} ORDER BY lower(n.name) NULLS LAST, n.address ${limit}`,
        from: `FROM nft_collections n WHERE ${where}`,
        params,
        page: q.page,
        pageSize: q.pageSize,
      });
      return { collections: rows.map(toCollection), total };
    },

    getNftCollection,

    async listNftTokens(address, q) {
      const { rows, total } = await pageWithTotal<Raw<NftToken>>(pg, "nft_tokens", {
        select: (limit) =>
          `SELECT * FROM nft_tokens WHERE collection_address = $1
           ORDER BY length(nft_index) NULLS LAST, nft_index, token_id ${limit}`,
        from: "FROM nft_tokens WHERE collection_address = $1",
        params: [address],
        page: q.page,
        pageSize: q.pageSize,
      });
      return { tokens: rows.map(toNftToken), total };
    },
  };
}
