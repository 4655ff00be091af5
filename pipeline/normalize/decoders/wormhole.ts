/**
 * Wormhole ("Alephium Bridge"): governance 0 `WormholeMessage(sender, targetChainId, sequence, nonce, payload,
 * consistencyLevel)` (published); a token-transfer payload (id 1, or 3 with payload) is a transfer out.
 * Redemptions emit nothing: they are inferred from a script tx that updates the TokenBridge or one of its
 * RemoteTokenPools and pays tokens to addresses.
 */
import { subContractId } from "@alephium/web3";
import { DAPP_UNKNOWN } from "../../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import { contractIdOf } from "../chain-utils.ts";
import {
  type ContractEvent,
  contractOutputs,
  type Draft,
  dappOf,
  draft,
  isAssetOutput,
  type TxScope,
} from "../draft.ts";
import { type DecodeResult, fieldsOf, HEX64, isFields } from "./fields.ts";

/** Wormhole chain id of Alephium in the fork: a token of this chain is native, its address is its id. */
export const ALEPHIUM_CHAIN_ID = 255;

export interface TokenTransfer {
  payload_id: 1 | 3;
  amount: bigint;
  /** The token's address on its origin chain, 32 bytes hex. */
  token_address: string;
  token_chain: number;
  recipient: string;
  recipient_chain: number;
  /** Relayer fee (payload 1); payload 3 has none: 0. */
  fee: bigint;
}

/** The token transfer a Wormhole payload carries, or undefined when it is another kind of message. */
export function tokenTransferOf(hex: string): TokenTransfer | undefined {
  const b = Buffer.from(hex, "hex");
  const id = b[0];
  // 1 + 32 amount + 32 token + 2 chain + 32 recipient + 2 chain (+ 32 fee for id 1, + 32 sender for id 3).
  if ((id !== 1 && id !== 3) || b.length < 133 || (id === 1 && b.length !== 133)) return undefined;
  const word = (at: number) => b.subarray(at, at + 32).toString("hex");
  return {
    payload_id: id,
    amount: BigInt(`0x${word(1)}`),
    token_address: word(33),
    token_chain: b.readUInt16BE(65),
    recipient: word(67),
    recipient_chain: b.readUInt16BE(99),
    fee: id === 1 ? BigInt(`0x${word(101)}`) : 0n,
  };
}

/** Alephium token id of a bridged token: native tokens keep their id, others are RemoteTokenPools of the bridge. */
export function alephiumTokenIdOf(tokenBridgeId: string, tokenChain: number, tokenAddress: string): string {
  if (tokenChain === ALEPHIUM_CHAIN_ID) return tokenAddress;
  const chain = tokenChain.toString(16).padStart(4, "0");
  // A sub-contract lives in its parent's group (0 for the mainnet bridge): the id's last byte.
  const group = Number.parseInt(tokenBridgeId.slice(-2), 16) % 4;
  return subContractId(tokenBridgeId, `02${chain}${tokenAddress}`, group);
}

export function decodeWormholeGovernance(s: TxScope, ev: ContractEvent): DecodeResult {
  if (ev.eventIndex !== 0) return undefined;
  const f = fieldsOf(ev, "WormholeMessage", ["ByteVec", "U256", "U256", "ByteVec", "ByteVec", "U256"]);
  if (!isFields(f)) return f;
  const emitter = f.str(0).toLowerCase();
  const payloadHex = f.str(4).toLowerCase();
  const common = {
    dapp_id: dappOf(s, ev.contractAddress, DAPP_UNKNOWN),
    from: s.sender,
    with: ev.contractAddress,
    contract_address: ev.contractAddress,
    contract_event_index: 0,
  };
  const message = {
    sequence: f.big(2).toString(),
    target_chain_id: Number(f.big(1)),
    nonce: f.str(3).toLowerCase(),
    consistency_level: Number(f.big(5)),
  };
  const transfer = HEX64.test(emitter) ? tokenTransferOf(payloadHex) : undefined;
  if (!transfer) {
    return [
      draft("bridge", "message", "wormhole", {
        ...common,
        payload: {
          ...message,
          sender: emitter,
          payload_id: payloadHex ? Number.parseInt(payloadHex.slice(0, 2), 16) : null,
          payload_hex: payloadHex,
        },
      }),
    ];
  }
  const tokenId = alephiumTokenIdOf(emitter, transfer.token_chain, transfer.token_address);
  return [
    draft("bridge", "transfer_out", "wormhole", {
      ...common,
      token_id: tokenId,
      amount: transfer.amount,
      payload: {
        ...message,
        token_chain_id: transfer.token_chain,
        origin_token_hex: `0x${transfer.token_address}`,
        recipient_hex: `0x${transfer.recipient}`,
        recipient_chain_id: transfer.recipient_chain,
        fee: transfer.fee.toString(),
        payload_id: transfer.payload_id,
        amount_wormhole: transfer.amount.toString(),
      },
    }),
  ];
}

/**
 * Redemptions of a successful script tx that updated a TokenBridge (kind wormhole-bridge) or one of its
 * RemoteTokenPools (a contract of the bridge's dapp holding its own token): one `transfer_in` per recipient and
 * token of the tx's generated asset outputs. ALPH counts only in outputs without tokens to someone other than
 * the signer, since the signer's left-over approved ALPH comes back the same way.
 */
export function inferWormholeRedemptions(s: TxScope, decoded: readonly Draft[]): Draft[] {
  const { tx } = s;
  if (!tx.scriptExecutionOk || tx.unsigned.scriptOpt === undefined) return [];
  if (decoded.some((d) => d.type === "wormhole")) return [];
  const bridges = s.decoders.addressesOf("wormhole-bridge");
  if (bridges.length === 0) return [];
  const bridgeDapps = new Set(bridges.map((b) => s.ctx.dapps.dappOf(b)).filter((d) => d !== undefined));
  const touched = contractOutputs(tx).find((o) => {
    if (s.decoders.kindOf(o.address) === "wormhole-bridge") return true;
    const dapp = s.ctx.dapps.dappOf(o.address);
    const ownId = contractIdOf(o.address);
    return dapp !== undefined && bridgeDapps.has(dapp) && o.tokens.some((t) => t.id === ownId);
  });
  if (!touched) return [];
  const legs = new Map<string, { to: string; token: string; amount: bigint }>();
  const add = (to: string, token: string, amount: bigint) => {
    if (amount === 0n || s.minted.has(token)) return;
    const key = `${to}\u0000${token}`;
    const leg = legs.get(key);
    if (leg) leg.amount += amount;
    else legs.set(key, { to, token, amount });
  };
  for (const o of tx.generatedOutputs) {
    if (!isAssetOutput(o)) continue;
    for (const t of o.tokens) add(o.address, t.id, BigInt(t.amount));
    if (o.tokens.length === 0 && o.address !== s.sender)
      add(o.address, ALPH_TOKEN_ID, BigInt(o.attoAlphAmount));
  }
  const dapp = dappOf(s, touched.address, DAPP_UNKNOWN);
  return [...legs.values()].map((leg) =>
    draft("bridge", "transfer_in", "wormhole", {
      dapp_id: dapp,
      from: s.sender,
      to: leg.to,
      with: touched.address,
      token_id: leg.token,
      amount: leg.amount,
      payload: { inferred: true },
    }),
  );
}
