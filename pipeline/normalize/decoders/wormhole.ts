/**
 * Wormhole ("Alephium Bridge", alephium/wormhole-fork@5cb35cf, every mainnet contract bytecode-verified): only
 * Governance emits, 0 `WormholeMessage(sender, targetChainId, sequence, nonce, payload, consistencyLevel)`. The
 * fork's transfer payload is `01 ‖ amount (32, normalized to 8 decimals) ‖ tokenId (32) ‖ tokenChainId (2) ‖
 * len(to) (2) ‖ to ‖ fee (32)` (`bridge_token_pool.ral`), with no recipient chain (the message's target chain is
 * it); an attestation is `02 ‖ tokenId (32) ‖ chainId (2) ‖ decimals (1) ‖ symbol (32) ‖ name (32)`.
 * Transfers in emit nothing: they are read from the method a script calls (TokenBridgeForChain 7
 * `completeTransfer`, a BridgeRewardRouter's 0 `completeTransfer`), their amounts from the tx's outputs.
 */
import { subContractId } from "@alephium/web3";
import { DAPP_UNKNOWN } from "../../../lib/chain/taxonomy.ts";
import { ALPH_TOKEN_ID } from "../../../lib/chain/types.ts";
import type { DecoderKind } from "../../../lib/dapps/kinds.ts";
import { type ContractEvent, type Draft, dappOf, draft, isAssetOutput, type TxScope } from "../draft.ts";
import { scriptApprovals, scriptCalls, scriptInstrs } from "./alphbanx.ts";
import { type DecodeResult, fieldsOf, HEX64, isFields, utf8 } from "./fields.ts";

/** Wormhole chain id of Alephium in the fork: a token of this chain is native, its address is its id. */
export const ALEPHIUM_CHAIN_ID = 255;
/** Wormhole amounts carry at most this many decimals. */
export const WORMHOLE_DECIMALS = 8;

export interface TokenTransfer {
  amount: bigint;
  /** The token's address on its origin chain, 32 bytes hex. */
  token_address: string;
  token_chain: number;
  /** The recipient's bytes on the target chain, hex (20 bytes for an EVM address). */
  recipient: string;
  /** Relayer (arbiter) fee, normalized like the amount. */
  fee: bigint;
}

/** The token transfer a fork payload carries, or undefined when it is another message or malformed. */
export function tokenTransferOf(hex: string): TokenTransfer | undefined {
  const b = Buffer.from(hex, "hex");
  // 1 + 32 amount + 32 token + 2 chain + 2 length + to + 32 fee.
  if (b[0] !== 1 || b.length < 69) return undefined;
  const length = b.readUInt16BE(67);
  if (b.length !== 69 + length + 32) return undefined;
  const word = (at: number) => b.subarray(at, at + 32).toString("hex");
  return {
    amount: BigInt(`0x${word(1)}`),
    token_address: word(33),
    token_chain: b.readUInt16BE(65),
    recipient: b.subarray(69, 69 + length).toString("hex"),
    fee: BigInt(`0x${word(69 + length)}`),
  };
}

export interface Attestation {
  token_address: string;
  token_chain: number;
  decimals: number;
  symbol: string;
  name: string;
}

/** The token attestation a payload carries (id 2, 100 bytes), or undefined. */
export function attestationOf(hex: string): Attestation | undefined {
  const b = Buffer.from(hex, "hex");
  if (b[0] !== 2 || b.length !== 100) return undefined;
  // Symbol and name are 32 bytes, right-padded with zeros.
  const text = (at: number) => {
    const bytes = b.subarray(at, at + 32);
    const end = bytes.indexOf(0);
    const used = bytes.subarray(0, end < 0 ? 32 : end).toString("hex");
    return utf8(used) ?? used;
  };
  return {
    token_address: b.subarray(1, 33).toString("hex"),
    token_chain: b.readUInt16BE(33),
    decimals: b[35]!,
    symbol: text(36),
    name: text(68),
  };
}

/**
 * The amount a transfer moved, in the token's own units, from its 8-decimal Wormhole amount: ALPH has 18
 * decimals; another token's scale is read from what the script approved of it (the pool keeps
 * `normalized × 10^(decimals − 8)`, so the approval divided by the one power of ten that gives the normalized
 * amount names the scale). Undefined when neither tells (the payload then says so).
 */
export function transferAmountOf(s: TxScope, tokenId: string, normalized: bigint): bigint | undefined {
  if (tokenId === ALPH_TOKEN_ID) return normalized * 10n ** BigInt(18 - WORMHOLE_DECIMALS);
  const script = s.tx.unsigned.scriptOpt;
  const instrs = script === undefined ? undefined : scriptInstrs(script);
  const approved = instrs && scriptApprovals(instrs).amounts.get(tokenId);
  if (approved === undefined || normalized === 0n) return undefined;
  for (let scale = 1n; scale <= 10n ** 70n; scale *= 10n) {
    const units = approved / scale;
    if (units === normalized) return normalized * scale;
    if (units < normalized) return undefined;
  }
  return undefined;
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
  const targetChain = f.big(1) <= 65535n ? Number(f.big(1)) : null;
  const message = {
    sequence: f.big(2).toString(),
    target_chain_id: targetChain,
    nonce: f.str(3).toLowerCase(),
    consistency_level: f.big(5) <= 255n ? Number(f.big(5)) : null,
    sender: emitter,
  };
  const bridged = HEX64.test(emitter);
  const transfer = bridged ? tokenTransferOf(payloadHex) : undefined;
  if (transfer) {
    const tokenId = alephiumTokenIdOf(emitter, transfer.token_chain, transfer.token_address);
    const amount = transferAmountOf(s, tokenId, transfer.amount);
    const evm = transfer.recipient.length === 40;
    return [
      draft("bridge", "transfer_out", "wormhole", {
        ...common,
        to: evm ? `0x${transfer.recipient}` : "",
        token_id: tokenId,
        amount: amount ?? transfer.amount,
        payload: {
          ...message,
          payload_id: 1,
          token_chain_id: transfer.token_chain,
          origin_token_hex: `0x${transfer.token_address}`,
          recipient_hex: `0x${transfer.recipient}`,
          recipient_chain_id: targetChain,
          fee_wormhole: transfer.fee.toString(),
          amount_wormhole: transfer.amount.toString(),
          // False when the token's decimals could not be read from the tx: `amount` is then the 8-decimal one.
          amount_in_token_units: amount !== undefined,
        },
      }),
    ];
  }
  const attestation = bridged ? attestationOf(payloadHex) : undefined;
  if (attestation) {
    return [
      draft("bridge", "attestation", "wormhole", {
        ...common,
        token_id: alephiumTokenIdOf(emitter, attestation.token_chain, attestation.token_address),
        payload: {
          ...message,
          payload_id: 2,
          token_chain_id: attestation.token_chain,
          origin_token_hex: `0x${attestation.token_address}`,
          decimals: attestation.decimals,
          symbol: attestation.symbol,
          name: attestation.name,
        },
      }),
    ];
  }
  return [
    draft("bridge", "message", "wormhole", {
      ...common,
      payload: {
        ...message,
        payload_id: payloadHex ? Number.parseInt(payloadHex.slice(0, 2), 16) : null,
        payload_hex: payloadHex,
      },
    }),
  ];
}

/** The methods that redeem a transfer in: the called contract's kind → `completeTransfer`'s method index. */
const COMPLETE_TRANSFER: Partial<Record<DecoderKind, number>> = {
  "wormhole-bridge-for-chain": 7,
  "wormhole-reward-router": 0,
};

/**
 * Transfers in of a successful script tx that calls `completeTransfer` on a TokenBridgeForChain (method 7) or a
 * BridgeRewardRouter (method 0): one `transfer_in` per recipient and token of the tx's generated asset outputs
 * (the recipient, and the relayer's fee when another address redeems). ALPH counts only in outputs without tokens
 * to someone other than the signer, since the signer's left-over approved ALPH comes back the same way.
 */
export function inferWormholeRedemptions(s: TxScope, decoded: readonly Draft[]): Draft[] {
  const { tx } = s;
  if (!tx.scriptExecutionOk || tx.unsigned.scriptOpt === undefined) return [];
  if (decoded.some((d) => d.type === "wormhole")) return [];
  const instrs = scriptInstrs(tx.unsigned.scriptOpt);
  const call =
    instrs &&
    scriptCalls(instrs).find((c) => {
      const kind = s.decoders.kindOf(c.contract_address);
      return kind !== undefined && COMPLETE_TRANSFER[kind] === c.method_index;
    });
  if (!call) return [];
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
  const kind = s.decoders.kindOf(call.contract_address);
  const dapp = dappOf(s, call.contract_address, DAPP_UNKNOWN);
  return [...legs.values()].map((leg) =>
    draft("bridge", "transfer_in", "wormhole", {
      dapp_id: dapp,
      from: s.sender,
      to: leg.to,
      with: call.contract_address,
      token_id: leg.token,
      amount: leg.amount,
      payload: {
        method: "completeTransfer",
        method_index: call.method_index,
        via: kind === "wormhole-reward-router" ? "reward_router" : "token_bridge_for_chain",
      },
    }),
  );
}
