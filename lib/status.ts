/**
 * What `/status` and the API's gauges read of the pipeline's own tables: the polled price sources' health, the known
 * contracts whose live code is not the code their decoder was read from, the newest events a decoder refused, and
 * the webhooks per state.
 */

import { idCeiling } from "./chain/types.ts";
import { createCodeHashBook } from "./dapps/code-hashes.ts";
import type { Metrics } from "./metrics.ts";
import type { Ch } from "./stores/clickhouse.ts";
import type { PgQueryable } from "./stores/postgres.ts";
import { KNOWN_DAPP_CONTRACTS } from "./tokens/known-contracts.ts";
import { WEBHOOK_STATES } from "./webhooks/repo.ts";

/** Health of the polled external price sources (exchanges, and EVM pool sources once polled), as their pollers recorded it. */
export async function priceSourcesStatus(pg: PgQueryable) {
  const rows = await pg.query<{
    id: string;
    status: "ok" | "degraded";
    last_ok_at: string | null;
    last_error: string | null;
    last_error_at: string | null;
  }>(
    "status_price_sources",
    `SELECT id, status, last_ok_at, last_error, last_error_at FROM price_sources
     WHERE enabled AND (kind = 'cex' OR (kind IN ('uniswap', 'pancakeswap')
       AND (last_ok_at IS NOT NULL OR last_error_at IS NOT NULL)))
     ORDER BY id`,
  );
  const n = (v: string | null) => (v === null ? null : Number(v));
  return rows.map((r) => ({
    id: r.id,
    status: r.status,
    last_ok_at: n(r.last_ok_at),
    last_error: r.last_error,
    last_error_at: n(r.last_error_at),
  }));
}

/**
 * Known contracts whose live code (learned from a block that migrated them) is not the code their decoder's layout
 * was read from: their events are published generic with `decode_error: "code_hash_changed"` until an operator
 * registers the new layout (a `decoder_contracts` row with the new `code_hash`).
 */
export async function codeHashChanges(pg: PgQueryable) {
  const [operator, baselines, learned] = await Promise.all([
    pg.query<{ contract_address: string; code_hash: string | null }>(
      "status_decoder_code_hashes",
      "SELECT contract_address, code_hash FROM decoder_contracts WHERE code_hash IS NOT NULL",
    ),
    pg.query<{ contract_address: string; code_hash: string }>(
      "status_code_baselines",
      "SELECT contract_address, code_hash FROM code_hash_baselines",
    ),
    pg.query<{
      address: string;
      dapp_id: string;
      code_hash: string;
      code_since_ts: string | null;
      code_source: string | null;
    }>(
      "status_live_code_hashes",
      `SELECT address, dapp_id, code_hash, code_since_ts, code_source FROM normalize_contract_dapps
       WHERE code_hash IS NOT NULL ORDER BY address`,
    ),
  ]);
  const book = createCodeHashBook(
    [...operator, ...KNOWN_DAPP_CONTRACTS, ...baselines],
    learned.map((r) => ({
      contract_address: r.address,
      code_hash: r.code_hash,
      since_ts: Number(r.code_since_ts ?? 0),
    })),
  );
  const rows = new Map(learned.map((r) => [r.address, r]));
  const labels = new Map(KNOWN_DAPP_CONTRACTS.map((r) => [r.contract_address, r.label]));
  return book.mismatches().map((m) => ({
    contract_address: m.contract_address,
    dapp_id: rows.get(m.contract_address)?.dapp_id ?? "unknown",
    label: labels.get(m.contract_address) ?? "",
    expected_code_hash: m.expected,
    live_code_hash: m.live,
    since_ts: m.since_ts,
    source: rows.get(m.contract_address)?.code_source === "node" ? ("node" as const) : ("migration" as const),
  }));
}

/** `alephium_webhooks{state}`: how many webhooks are active and disabled (every state shown, 0 included). */
export async function refreshWebhookGauge(pg: PgQueryable, metrics: Metrics): Promise<void> {
  const rows = await pg.query<{ state: string; n: number }>(
    "metrics.webhooks",
    "SELECT state, count(*)::int AS n FROM webhooks GROUP BY state",
  );
  for (const state of WEBHOOK_STATES)
    metrics.webhooks.set({ state }, rows.find((r) => r.state === state)?.n ?? 0);
}

/** How far back from the watermark `/status` looks for events a decoder refused (ids start with block times). */
export const RECENT_DECODE_ERRORS_MS = 7 * 86_400_000;

/**
 * The newest main-chain events a dapp decoder refused (published generic with a `decode_error`), newest first: one
 * read of the events' id range of the RECENT_DECODE_ERRORS_MS of block time before `until` (the watermark).
 */
export async function recentDecodeErrors(ch: Ch, until: number, limit = 10) {
  const rows = await ch.query<{
    id: string;
    dapp_id: string;
    contract_address: string;
    contract_event_index: number | null;
    decoder: string;
    reason: string;
    ts: string;
  }>(
    "status_recent_decode_errors",
    `SELECT id, dapp_id, contract_address, contract_event_index,
       JSONExtractString(payload, 'decoder') AS decoder, JSONExtractString(payload, 'decode_error') AS reason,
       toString(toUnixTimestamp64Milli(timestamp)) AS ts
     FROM events FINAL
     WHERE id > {from:String} AND type = 'undecoded' AND main_chain AND position(payload, '"decode_error"') > 0
     ORDER BY id DESC LIMIT {limit:UInt32}`,
    { from: idCeiling(until - RECENT_DECODE_ERRORS_MS), limit },
  );
  return rows.map((r) => ({
    id: r.id,
    dapp_id: r.dapp_id,
    contract_address: r.contract_address,
    contract_event_index: r.contract_event_index === null ? null : Number(r.contract_event_index),
    decoder: r.decoder,
    reason: r.reason,
    timestamp: Number(r.ts),
  }));
}
