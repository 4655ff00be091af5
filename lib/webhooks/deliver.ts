/**
 * One webhook POST, signed as the Standard Webhooks specification says: `webhook-id` (the message id, the same for
 * every attempt of one batch), `webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature`
 * (`v1,` + base64 HMAC-SHA256 over `<id>.<timestamp>.<body>`, keyed with the base64-decoded part of the secret after
 * `whsec_`). The connection goes to the addresses the policy checked, never to a second DNS answer.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { AddressPolicy, ResolvedAddress } from "./address.ts";

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** The message id of the batch that ends at `lastEventId`: stable across retries, distinct per batch. */
export function messageId(webhookId: string, lastEventId: string): string {
  return `msg_${createHash("sha256").update(`${webhookId}:${lastEventId}`).digest("base64url").slice(0, 27)}`;
}

/** `v1,<base64 HMAC-SHA256>` of one message. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

export interface DeliveryResult {
  ok: boolean;
  /** HTTP status, null when no response came (refused address, connection error, timeout). */
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export interface DeliveryRequest {
  url: string;
  secret: string;
  messageId: string;
  body: string;
  timeoutMs: number;
}

/** Bytes of a response body read (and dropped) before the connection is closed. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/** Answers the connection's lookup with the checked addresses only (also NFT metadata fetches, lib/nfts). */
export function pinned(addresses: ResolvedAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  }) as unknown as LookupFunction;
}

export async function deliver(policy: AddressPolicy, req: DeliveryRequest): Promise<DeliveryResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let target: Awaited<ReturnType<AddressPolicy["resolve"]>>;
  try {
    target = await policy.resolve(req.url);
  } catch (error) {
    return { ok: false, status: null, error: `refused: ${(error as Error).message}`, latencyMs: elapsed() };
  }
  const timestamp = Math.floor(Date.now() / 1000);
  const send = target.url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<DeliveryResult, "latencyMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: elapsed() });
    };
    const r = send(
      target.url,
      {
        method: "POST",
        lookup: pinned(target.addresses),
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(req.body),
          "user-agent": "alephium-indexer-webhooks/1",
          "webhook-id": req.messageId,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": sign(req.secret, req.messageId, timestamp, req.body),
        },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        const done = () =>
          finish({
            ok: status >= 200 && status < 300,
            status,
            error: status >= 200 && status < 300 ? null : `HTTP ${status}`,
          });
        res.on("end", done);
        res.on("close", done);
        res.on("error", done);
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, status: null, error: `timeout: no complete response within ${req.timeoutMs} ms` });
      r.destroy();
    }, req.timeoutMs);
    r.on("error", (error: NodeJS.ErrnoException) =>
      finish({ ok: false, status: null, error: `${error.code ?? "error"}: ${error.message}`.slice(0, 500) }),
    );
    r.end(req.body);
  });
}
