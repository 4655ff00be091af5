/**
 * Webhooks as stored (`webhooks`, `webhook_deliveries`, postgres/0019): created with their first queue message in one
 * transaction (a webhook never exists without its chain), listed, shown, deleted, enabled and disabled; and the
 * delivery worker's writes, each fenced by the step and attempt its handler claimed (pipeline/jobs/webhook-delivery.ts).
 */

import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import type { Config } from "../config.ts";
import { createdPage } from "../created-cursor.ts";
import { AppError } from "../errors.ts";
import type { EventFilters } from "../events/reader.ts";
import { bossExecutor, WEBHOOK_DEAD_QUEUE, WEBHOOK_QUEUE } from "../jobs/queue.ts";
import type { Pg, PgQueryable } from "../stores/postgres.ts";

export const WEBHOOK_STATES = ["active", "disabled"] as const;
export type WebhookState = (typeof WEBHOOK_STATES)[number];

export interface Webhook {
  webhook_id: string;
  user_id: string;
  key_id: string;
  url: string;
  filters: EventFilters;
  after_id: string;
  pending_last_id: string | null;
  state: WebhookState;
  failures: number;
  last_error: string | null;
  disabled_reason: string | null;
  disabled_at: string | null;
  last_success_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A webhook with what only the worker sees: the secret and the fencing token. */
export interface StoredWebhook extends Webhook {
  secret: string;
  step: number;
  attempts: number;
}

export interface Delivery {
  delivery_id: number;
  message_id: string;
  first_event_id: string;
  last_event_id: string;
  event_count: number;
  attempt: number;
  ok: boolean;
  status: number | null;
  error: string | null;
  latency_ms: number;
  created_at: string;
}

/** The message a webhook queue job carries: which webhook, at which step of its chain (the fencing token). */
export interface WebhookMessage {
  webhook_id: string;
  step: number;
}

interface Row extends Omit<StoredWebhook, "created_at" | "updated_at" | "disabled_at" | "last_success_at"> {
  created_at: Date | string;
  updated_at: Date | string;
  disabled_at: Date | string | null;
  last_success_at: Date | string | null;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function toWebhook(r: Row): StoredWebhook {
  return {
    ...r,
    filters: (typeof r.filters === "string" ? JSON.parse(r.filters) : r.filters) as EventFilters,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    disabled_at: iso(r.disabled_at),
    last_success_at: iso(r.last_success_at),
  };
}

const COLUMNS = `webhook_id, user_id, key_id, url, filters, secret, after_id, pending_last_id, state, failures,
  last_error, disabled_reason, disabled_at, step, attempts, last_success_at, created_at, updated_at`;

/** Options of each queue message: retries with exponential backoff, expiry of a dead worker's, the dead letter. */
export function webhookSendOptions(
  config: Pick<Config, "WEBHOOK_EXPIRE_S" | "WEBHOOK_RETRY_DELAY_S" | "WEBHOOK_RETRY_LIMIT">,
  startAfterS = 0,
): PgBoss.SendOptions {
  return {
    retryLimit: config.WEBHOOK_RETRY_LIMIT,
    retryDelay: config.WEBHOOK_RETRY_DELAY_S,
    retryBackoff: true,
    expireInSeconds: config.WEBHOOK_EXPIRE_S,
    deadLetter: WEBHOOK_DEAD_QUEUE,
    ...(startAfterS > 0 ? { startAfter: startAfterS } : {}),
  };
}

async function sendStep(
  boss: PgBoss,
  config: Pick<Config, "WEBHOOK_EXPIRE_S" | "WEBHOOK_RETRY_DELAY_S" | "WEBHOOK_RETRY_LIMIT">,
  tx: PgQueryable,
  message: WebhookMessage,
  delayS = 0,
) {
  await boss.send(
    WEBHOOK_QUEUE,
    message as unknown as object,
    {
      ...webhookSendOptions(config, delayS),
      db: bossExecutor(tx),
    } as PgBoss.SendOptions,
  );
}

export interface NewWebhook {
  userId: string;
  keyId: string;
  url: string;
  filters: EventFilters;
  afterId: string;
  secret: string;
}

export interface DeliveryLog {
  messageId: string;
  firstEventId: string;
  lastEventId: string;
  eventCount: number;
  attempt: number;
  ok: boolean;
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export interface WebhooksRepo {
  /** Creates a webhook and its chain's first message; 409 `too_many_webhooks` past WEBHOOK_MAX_PER_OWNER. */
  create(input: NewWebhook): Promise<StoredWebhook>;
  get(webhookId: string): Promise<StoredWebhook | null>;
  /** Newest first; `userId` limits to one owner's. */
  list(query: { userId?: string; limit: number; cursor?: string }): Promise<{
    webhooks: StoredWebhook[];
    next: string | null;
  }>;
  /** Deletes a webhook and its delivery log; a message still queued for it then finds nothing and stops. */
  remove(webhookId: string): Promise<boolean>;
  /** Re-enables a disabled webhook (failures reset, a new chain from its cursor); an active one is unchanged. */
  enable(webhookId: string): Promise<StoredWebhook | null>;
  /** Disables an active webhook with a reason; its chain stops at its next message. */
  disable(webhookId: string, reason: string): Promise<StoredWebhook | null>;
  /** Newest first, below `before` (a delivery_id). */
  deliveries(webhookId: string, query: { limit: number; before?: number }): Promise<Delivery[]>;

  // The worker's writes. `claim` starts an attempt at the message's step; every other write checks the step and
  // the attempt it returned, and changes nothing (false) once the webhook moved on, was claimed again, disabled or
  // deleted.
  claim(message: WebhookMessage): Promise<StoredWebhook | null>;
  /** Records the batch being sent (its last id), so that a retry sends the same batch. */
  setPending(hook: StoredWebhook, lastId: string | null): Promise<boolean>;
  /**
   * After a 2xx of a batch the same handler follows with another (catching up): cursor to the batch's end, pending
   * cleared, failures reset, the attempt logged; step and attempt unchanged, no message sent; one transaction.
   */
  advance(hook: StoredWebhook, log: DeliveryLog): Promise<boolean>;
  /** After a 2xx: cursor to the batch's end, failures reset, the attempt logged, the next step sent; one transaction. */
  acknowledge(hook: StoredWebhook, log: DeliveryLog, nextDelayS: number): Promise<boolean>;
  /** Nothing sent: the next step after `delayS`; `clearPending` drops a pending batch whose events are gone. */
  idle(hook: StoredWebhook, delayS: number, clearPending: boolean): Promise<boolean>;
  /** A failed attempt: counted and logged; the queue retries the message. */
  failed(hook: StoredWebhook, log: DeliveryLog): Promise<boolean>;
  /** The message's last retry failed (its dead letter): the webhook is disabled if still at that step. */
  exhausted(message: WebhookMessage, retries: number): Promise<StoredWebhook | null>;
}

/** The settings of the webhooks' rows and messages. */
export type WebhooksConfig = Pick<
  Config,
  | "WEBHOOK_EXPIRE_S"
  | "WEBHOOK_LOG_KEEP"
  | "WEBHOOK_MAX_PER_OWNER"
  | "WEBHOOK_RETRY_DELAY_S"
  | "WEBHOOK_RETRY_LIMIT"
>;

export function createWebhooksRepo(
  pg: Pg,
  config: WebhooksConfig,
  boss: () => Promise<PgBoss>,
): WebhooksRepo {
  const one = async (label: string, tx: PgQueryable, sql: string, params: (string | number | null)[]) => {
    const row = (await tx.query<Row>(label, sql, params))[0];
    return row ? toWebhook(row) : null;
  };

  async function log(tx: PgQueryable, webhookId: string, l: DeliveryLog) {
    await tx.query(
      "webhook_deliveries_insert",
      `INSERT INTO webhook_deliveries (webhook_id, message_id, first_event_id, last_event_id, event_count, attempt, ok,
              status, error, latency_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        webhookId,
        l.messageId,
        l.firstEventId,
        l.lastEventId,
        l.eventCount,
        l.attempt,
        l.ok,
        l.status,
        l.error === null ? null : l.error.slice(0, 1000),
        l.latencyMs,
      ],
    );
    // Retention: the newest WEBHOOK_LOG_KEEP rows of this webhook.
    await tx.query(
      "webhook_deliveries_prune",
      `DELETE FROM webhook_deliveries WHERE webhook_id = $1 AND delivery_id <= (
         SELECT delivery_id FROM webhook_deliveries WHERE webhook_id = $1
          ORDER BY delivery_id DESC OFFSET $2 LIMIT 1)`,
      [webhookId, config.WEBHOOK_LOG_KEEP],
    );
  }

  return {
    async create(input) {
      const b = await boss();
      const webhookId = randomUUID();
      return pg.transaction(async (tx) => {
        // One owner's creates take turns, so two cannot both pass the count.
        await tx.query("webhooks_owner_lock", "SELECT pg_advisory_xact_lock(8739, hashtext($1))", [
          input.userId,
        ]);
        const [count] = await tx.query<{ n: string }>(
          "webhooks_owner_count",
          "SELECT count(*) AS n FROM webhooks WHERE user_id = $1",
          [input.userId],
        );
        if (Number(count?.n ?? 0) >= config.WEBHOOK_MAX_PER_OWNER) {
          throw new AppError(
            "too_many_webhooks",
            `Owner ${input.userId} already has ${count?.n} webhooks, the limit (WEBHOOK_MAX_PER_OWNER); delete one first.`,
            { status: 409, details: { limit: config.WEBHOOK_MAX_PER_OWNER } },
          );
        }
        const hook = await one(
          "webhooks_insert",
          tx,
          `INSERT INTO webhooks (webhook_id, user_id, key_id, url, filters, secret, after_id)
           VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7) RETURNING ${COLUMNS}`,
          [
            webhookId,
            input.userId,
            input.keyId,
            input.url,
            JSON.stringify(input.filters),
            input.secret,
            input.afterId,
          ],
        );
        await sendStep(b, config, tx, { webhook_id: webhookId, step: 0 });
        return hook!;
      });
    },

    get: (webhookId) =>
      one("webhooks_get", pg, `SELECT ${COLUMNS} FROM webhooks WHERE webhook_id = $1`, [webhookId]),

    async list(query) {
      const page = await createdPage(pg, {
        name: "webhooks_list",
        table: "webhooks",
        columns: COLUMNS,
        idColumn: "webhook_id",
        filters: query.userId !== undefined ? [["user_id = $?", query.userId]] : [],
        limit: query.limit,
        cursor: query.cursor,
        toItem: toWebhook,
        key: (hook) => [hook.created_at, hook.webhook_id],
      });
      return { webhooks: page.items, next: page.next };
    },

    async remove(webhookId) {
      const gone = await pg.query(
        "webhooks_delete",
        "DELETE FROM webhooks WHERE webhook_id = $1 RETURNING 1",
        [webhookId],
      );
      return gone.length > 0;
    },

    async enable(webhookId) {
      const b = await boss();
      return pg.transaction(async (tx) => {
        const hook = await one(
          "webhooks_enable",
          tx,
          `UPDATE webhooks SET state = 'active', failures = 0, disabled_reason = NULL, disabled_at = NULL,
                  step = step + 1, attempts = 0, updated_at = now()
            WHERE webhook_id = $1 AND state = 'disabled' RETURNING ${COLUMNS}`,
          [webhookId],
        );
        if (!hook)
          return one("webhooks_get", tx, `SELECT ${COLUMNS} FROM webhooks WHERE webhook_id = $1`, [
            webhookId,
          ]);
        await sendStep(b, config, tx, { webhook_id: webhookId, step: hook.step });
        return hook;
      });
    },

    async disable(webhookId, reason) {
      const hook = await one(
        "webhooks_disable",
        pg,
        `UPDATE webhooks SET state = 'disabled', disabled_reason = $2, disabled_at = now(), step = step + 1,
                attempts = 0, updated_at = now()
          WHERE webhook_id = $1 AND state = 'active' RETURNING ${COLUMNS}`,
        [webhookId, reason],
      );
      return hook ?? this.get(webhookId);
    },

    async deliveries(webhookId, query) {
      const rows = await pg.query<
        Omit<Delivery, "created_at" | "delivery_id"> & {
          delivery_id: string | number;
          created_at: Date | string;
        }
      >(
        "webhook_deliveries_list",
        `SELECT delivery_id, message_id, first_event_id, last_event_id, event_count, attempt, ok, status, error,
                latency_ms, created_at
           FROM webhook_deliveries WHERE webhook_id = $1 ${query.before !== undefined ? "AND delivery_id < $3" : ""}
          ORDER BY delivery_id DESC LIMIT $2`,
        query.before !== undefined ? [webhookId, query.limit, query.before] : [webhookId, query.limit],
      );
      return rows.map((r) => ({ ...r, delivery_id: Number(r.delivery_id), created_at: iso(r.created_at)! }));
    },

    claim: (m) =>
      one(
        "webhooks_claim",
        pg,
        `UPDATE webhooks SET attempts = attempts + 1, updated_at = now()
          WHERE webhook_id = $1 AND step = $2 AND state = 'active' RETURNING ${COLUMNS}`,
        [m.webhook_id, m.step],
      ),

    async setPending(hook, lastId) {
      const rows = await pg.query(
        "webhooks_pending",
        `UPDATE webhooks SET pending_last_id = $4, updated_at = now()
          WHERE webhook_id = $1 AND step = $2 AND attempts = $3 AND state = 'active' RETURNING 1`,
        [hook.webhook_id, hook.step, hook.attempts, lastId],
      );
      return rows.length > 0;
    },

    async advance(hook, l) {
      return pg.transaction(async (tx) => {
        const moved = await one(
          "webhooks_advance",
          tx,
          `UPDATE webhooks SET after_id = $4, pending_last_id = NULL, failures = 0, last_error = NULL,
                  last_success_at = now(), updated_at = now()
            WHERE webhook_id = $1 AND step = $2 AND attempts = $3 AND state = 'active' RETURNING ${COLUMNS}`,
          [hook.webhook_id, hook.step, hook.attempts, l.lastEventId],
        );
        if (!moved) return false;
        await log(tx, hook.webhook_id, l);
        return true;
      });
    },

    async acknowledge(hook, l, nextDelayS) {
      const b = await boss();
      return pg.transaction(async (tx) => {
        const moved = await one(
          "webhooks_ack",
          tx,
          `UPDATE webhooks SET after_id = $4, pending_last_id = NULL, failures = 0, last_error = NULL,
                  last_success_at = now(), step = step + 1, attempts = 0, updated_at = now()
            WHERE webhook_id = $1 AND step = $2 AND attempts = $3 AND state = 'active' RETURNING ${COLUMNS}`,
          [hook.webhook_id, hook.step, hook.attempts, l.lastEventId],
        );
        if (!moved) return false;
        await log(tx, hook.webhook_id, l);
        await sendStep(b, config, tx, { webhook_id: hook.webhook_id, step: moved.step }, nextDelayS);
        return true;
      });
    },

    async idle(hook, delayS, clearPending) {
      const b = await boss();
      return pg.transaction(async (tx) => {
        const moved = await one(
          "webhooks_idle",
          tx,
          `UPDATE webhooks SET step = step + 1, attempts = 0, updated_at = now(),
                  pending_last_id = CASE WHEN $4::int = 1 THEN NULL ELSE pending_last_id END
            WHERE webhook_id = $1 AND step = $2 AND attempts = $3 AND state = 'active' RETURNING ${COLUMNS}`,
          [hook.webhook_id, hook.step, hook.attempts, clearPending ? 1 : 0],
        );
        if (!moved) return false;
        await sendStep(b, config, tx, { webhook_id: hook.webhook_id, step: moved.step }, delayS);
        return true;
      });
    },

    async failed(hook, l) {
      return pg.transaction(async (tx) => {
        const counted = await one(
          "webhooks_failed",
          tx,
          `UPDATE webhooks SET failures = failures + 1, last_error = $4, updated_at = now()
            WHERE webhook_id = $1 AND step = $2 AND attempts = $3 AND state = 'active' RETURNING ${COLUMNS}`,
          [hook.webhook_id, hook.step, hook.attempts, (l.error ?? `HTTP ${l.status}`).slice(0, 1000)],
        );
        if (!counted) return false;
        await log(tx, hook.webhook_id, l);
        return true;
      });
    },

    exhausted: (m, retries) =>
      one(
        "webhooks_exhausted",
        pg,
        `UPDATE webhooks SET state = 'disabled', disabled_at = now(), step = step + 1, attempts = 0, updated_at = now(),
                disabled_reason = 'gave up after ' || $3::text || ' attempts at one batch; last error: '
                                  || coalesce(last_error, 'none recorded (the attempt expired)')
          WHERE webhook_id = $1 AND step = $2 AND state = 'active' RETURNING ${COLUMNS}`,
        [m.webhook_id, m.step, retries + 1],
      ),
  };
}
