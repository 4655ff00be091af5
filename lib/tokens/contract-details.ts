/**
 * A contract's record as the AlphScan explorer reads it (`GET /contract/{address}/details`, issue 44): the registry's
 * row with its parent, children count, depth, dapp, token, NFT registry entry and last upgrade, and its state (the
 * node's `GET /contracts/{address}/state`) as parsed fields, named where the layout is known.
 */
import { addressFromContractId, hexToString, type node } from "@alephium/web3";
import { displayImage } from "../nfts/metadata.ts";
import type { Pg } from "../stores/postgres.ts";
import type { Contract, RegistryRepo } from "./repo.ts";
import { HEX_ID } from "./repo-shared.ts";

/** The record's `contract`: every field the client reads, null when unknown. */
export interface ContractDetails {
  address: string;
  contract_id: string;
  parent_address: string | null;
  n_childs: number;
  /** Depth below the first contract without a parent: 0 for a contract a script deployed, 1 for its child… */
  level: number;
  dapp: string | null;
  dapp_name: string | null;
  interface_id: string | null;
  contract_name: string | null;
  kind: string;
  token_symbol: string | null;
  minter: string | null;
  mint_tx: string | null;
  created_tx: string | null;
  created_at: number | null;
  last_upgrade_date: string | null;
  token_lp_kind: string | null;
  nft_registry_kind: string | null;
  nft_registry_collection_address: string | null;
  nft_registry_name: string | null;
  nft_registry_image: string | null;
  dia_oracle_display: Record<string, string | null> | null;
  token_metadata: { website: string | null; name: string | null; decimals: number | null } | null;
  contract_metadata: { registered: boolean; label: string | null; updated_at: number };
}

/** One state field, in the node's order: immutable fields first, then mutable ones. */
export interface ContractField {
  field_index: number;
  field_name: string | null;
  mutable: boolean;
  type: string;
  /** The value as the node gives it (a ByteVec in hex, a number in decimal). */
  value_text: string;
  /** A readable form: a ByteVec's UTF-8 text when it is printable, else the same as value_text. */
  parsed_value_text: string;
  /** A 32-byte ByteVec or an Address read as a contract: its address, label and token symbol when known. */
  resolved_address: string | null;
  resolved_label: string | null;
  resolved_token_symbol: string | null;
}

/**
 * Field names of the layouts we know: the fungible-token standard's first immutable fields (interface 0001) and
 * the devnet DEX pair's (token ids and factory; reserves, last block time, liquidity).
 */
function layoutOf(c: Contract): { imm: string[]; mut: string[] } {
  if (c.std_interface_id?.startsWith("0001"))
    return { imm: ["symbol", "name", "decimals", "totalSupply"], mut: [] };
  if (c.kind === "pool")
    return {
      imm: ["token0Id", "token1Id", "factory"],
      mut: ["reserve0", "reserve1", "blockTimeStampLast", "totalSupply"],
    };
  return { imm: [], mut: [] };
}

const PRINTABLE = /^[\x20-\x7e]+$/;

function readable(hex: string): string | null {
  if (hex.length === 0 || hex.length % 2 !== 0) return null;
  try {
    const text = hexToString(hex);
    return PRINTABLE.test(text) ? text : null;
  } catch {
    return null;
  }
}

export async function contractDetails(
  pg: Pg,
  registry: RegistryRepo,
  contract: Contract,
  options: { ipfsGateway: string },
): Promise<ContractDetails> {
  const [dapp, token, nft, collection, extra] = await Promise.all([
    contract.dapp_id ? registry.getDapp(contract.dapp_id, { includeDeleted: true }) : null,
    registry.getToken(contract.contract_id, { includeDeleted: true }),
    registry.getNftToken(contract.contract_id),
    registry.getNftCollection(contract.address),
    pg.query<{ code_since_ts: unknown; level: unknown }>(
      "contract_details_extra",
      `WITH RECURSIVE up(address, parent_address, depth) AS (
         SELECT address, parent_address, 0 FROM contracts WHERE address = $1
         UNION ALL SELECT c.address, c.parent_address, up.depth + 1 FROM contracts c JOIN up ON c.address = up.parent_address
           WHERE up.depth < 64)
       SELECT (SELECT code_since_ts FROM normalize_contract_dapps WHERE address = $1) AS code_since_ts,
         (SELECT max(depth) FROM up)::int + CASE WHEN (SELECT parent_address FROM up ORDER BY depth DESC LIMIT 1)
           IS NULL THEN 0 ELSE 1 END AS level`,
      [contract.address],
    ),
  ]);
  const since = extra[0]?.code_since_ts;
  const label = contract.label;
  // An NFT's or a collection's fetched metadata (its URI's JSON, when read) names it where the registry does not.
  const fetched = await registry.nftMetadata([nft?.uri, collection?.uri]);
  const okMeta = (uri: string | null | undefined) => {
    const row = uri ? fetched.get(uri) : undefined;
    return row?.state === "ok" ? row : null;
  };
  const nftMeta = okMeta(nft?.uri);
  const collectionMeta = okMeta(collection?.uri);
  const nftName = collection
    ? (collection.name ?? collectionMeta?.name ?? null)
    : (nft?.name ?? nftMeta?.name ?? null);
  const nftImage = collection
    ? (collection.image ?? collectionMeta?.image ?? null)
    : (nft?.image ?? nftMeta?.image ?? null);
  return {
    address: contract.address,
    contract_id: contract.contract_id,
    parent_address: contract.parent_address,
    n_childs: contract.n_childs,
    level: Number(extra[0]?.level ?? 0),
    dapp: contract.dapp_id,
    dapp_name: dapp?.name ?? null,
    interface_id: contract.std_interface_id,
    contract_name: label ?? token?.name ?? nftName,
    kind: contract.kind,
    token_symbol: token?.symbol ?? token?.symbolOnChain ?? null,
    minter: token?.minter ?? nft?.minter ?? null,
    mint_tx: token?.mintTx ?? nft?.mint_tx ?? null,
    created_tx: contract.created_tx,
    created_at: contract.created_at,
    last_upgrade_date: since === null || since === undefined ? null : new Date(Number(since)).toISOString(),
    token_lp_kind: contract.kind === "pool" ? "dex_pair" : null,
    nft_registry_kind: collection ? "collection" : nft ? "nft" : null,
    nft_registry_collection_address: collection ? collection.address : (nft?.collection_address ?? null),
    nft_registry_name: nftName,
    nft_registry_image: displayImage(nftImage, options.ipfsGateway),
    dia_oracle_display: null,
    token_metadata: token ? { website: token.website, name: token.name, decimals: token.decimals } : null,
    contract_metadata: { registered: contract.registered, label, updated_at: contract.updated_at },
  };
}

/** The node's state as parsed fields; 32-byte ids and addresses resolved against the registry. */
export async function stateFields(
  registry: RegistryRepo,
  contract: Contract,
  state: node.ContractState,
): Promise<ContractField[]> {
  const layout = layoutOf(contract);
  const values = [
    ...state.immFields.map((v, i) => ({ v, name: layout.imm[i] ?? null, mutable: false })),
    ...state.mutFields.map((v, i) => ({ v, name: layout.mut[i] ?? null, mutable: true })),
  ];
  const out: ContractField[] = [];
  for (const [index, { v, name, mutable }] of values.entries()) {
    const value = String(v.value);
    let parsed = value;
    let resolved: string | null = null;
    if (v.type === "ByteVec") {
      parsed = readable(value) ?? value;
      if (HEX_ID.test(value)) resolved = addressFromContractId(value.toLowerCase());
    } else if (v.type === "Address") resolved = value;
    const known = resolved ? await registry.getContract(resolved) : null;
    const token = known ? await registry.getToken(known.contract_id) : null;
    out.push({
      field_index: index,
      field_name: name,
      mutable,
      type: v.type,
      value_text: value,
      parsed_value_text: parsed,
      resolved_address: known ? known.address : v.type === "Address" ? value : null,
      resolved_label: known?.label ?? null,
      resolved_token_symbol: token?.symbol ?? token?.symbolOnChain ?? null,
    });
  }
  return out;
}
