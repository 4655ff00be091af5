/**
 * Webhook delivery on the job queue (pg-boss, queue `webhook`), beside the reindex worker and started with it.
 *
 * Each active webhook is one chain of queue messages `{ webhook_id, step }`, one in flight at a time. A handler:
 * 1. claims the step (the webhook must still be active and at that step; the claim increments `attempts`, and every
 *    later write of the handler checks step and attempt: a duplicate or late handler writes nothing);
 * 2. reads up to WEBHOOK_BATCH matching events after the webhook's cursor (`after_id`) under the watermark, as a
 *    poller of `/events/all?poll=1` would (on a retry: exactly the pending batch, up to `pending_last_id`);
 * 3. POSTs them, signed (deliver.ts), to the URL, whose addresses are checked again first;
 * 4. on a 2xx, in one transaction: moves the cursor to the batch's last id, clears the pending batch, resets the
 *    failures and logs the attempt. After a full batch the same handler goes back to 2 (up to WEBHOOK_STEP_BATCHES
 *    batches, and not past half of WEBHOOK_EXPIRE_S); its last acknowledgement also bumps the step and sends the
 *    next step's message (at once after a full batch, after WEBHOOK_POLL_S otherwise); when nothing matched, only
 *    those last two, after WEBHOOK_POLL_S;
 * 5. on a non-2xx, a timeout or a refused address: logs the attempt and throws, so pg-boss retries the message with
 *    exponential backoff (WEBHOOK_RETRY_LIMIT, WEBHOOK_RETRY_DELAY_S). A message whose last retry failed goes to the
 *    dead-letter queue, whose handler disables the webhook (if still at that step) with the last error.
 * The cursor is never ahead of a 2xx, a batch is re-sent until one, and any number of worker processes may run:
 * pg-boss hands each message to one of them (a message expired after WEBHOOK_EXPIRE_S is retried, and the fencing
 * keeps the late handler's writes out).
 *
 * Live: a caught-up webhook's next message waits WEBHOOK_POLL_S, but a worker process whose delivery loops left such
 * a message waiting reads the events' ceiling every WEBHOOK_WAKE_MS until that message is due and, on a step (new
 * events served), makes every such waiting message due at once and wakes its delivery loops: the messages themselves,
 * their steps and fencing are unchanged, only their start comes sooner (a message waiting out a retry's backoff is
 * not touched). A step seen while a batch was on its way sends the next message due at once instead of after
 * WEBHOOK_POLL_S. With no caught-up message waiting (no webhook, or every one catching up or backing off) the wake
 * reads nothing; a process learns at its start of the messages earlier processes left waiting.
 */

import type PgBoss from "pg-boss";
import type { Config } from "../../lib/config.ts";
import { createLabelCache } from "../../lib/events/label-cache.ts";
import { createEventsReader } from "../../lib/events/reader.ts";
import { createEventsService, type EventsPage, type EventsService } from "../../lib/events/service.ts";
import { WEBHOOK_DEAD_QUEUE, WEBHOOK_QUEUE } from "../../lib/jobs/queue.ts";
import { startTeam, type Team } from "../../lib/jobs/team.ts";
import { createAddressLabelsRepo } from "../../lib/labels/repo.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Metrics } from "../../lib/metrics.ts";
import { sleep } from "../../lib/retry.ts";
import type { Ch } from "../../lib/stores/clickhouse.ts";
import type { Pg } from "../../lib/stores/postgres.ts";
import { createAddressPolicy } from "../../lib/webhooks/address.ts";
import { deliver, messageId } from "../../lib/webhooks/deliver.ts";
import {
  createWebhooksRepo,
  type DeliveryLog,
  type StoredWebhook,
  type WebhookMessage,
} from "../../lib/webhooks/repo.ts";

/** The dead-letter queue polls this many times less often than the delivery queue (JOBS_POLL_S). */
const DEAD_LETTER_POLL_FACTOR = 15;

export interface WebhookDeliveryDeps {
  boss: PgBoss;
  pg: Pg;
  ch: Ch;
  config: Config;
  log: Logger;
  /** The events as served; built from the stores when absent (no tail: each step reads the store). */
  events?: EventsService;
  /** Counts delivery attempts (`alephium_webhook_deliveries_total`) when given. */
  metrics?: Metrics;
}

/**
 * The events service of a worker process: as the API's (api/deps.ts), without the in-memory tail or page cache.
 * `watermarkCacheMs` 0 reads the watermark for every page (the wake's reads, a message's first batch); the reads of
 * the next batch while one is posted reuse it for up to WEBHOOK_WAKE_MS (stale-while-revalidate), so a webhook
 * catching up does not wait for a watermark read per batch.
 */
export function workerEventsService(pg: Pg, ch: Ch, config: Config, watermarkCacheMs = 0): EventsService {
  return createEventsService({
    reader: createEventsReader(ch),
    labels: createLabelCache(createAddressLabelsRepo(pg), { checkMs: config.EVENTS_PAGE_CACHE_MS }),
    tail: null,
    hydration: config.PAYLOAD_HYDRATION,
    watermarkCacheMs,
    pageCacheMs: 0,
  });
}

/**
 * Registers the delivery handlers (WEBHOOK_CONCURRENCY of them) and the dead-letter handler on a started boss, and
 * starts the wake on steps; `stop` ends the wake (before the boss stops).
 */
export async function startWebhookDelivery(deps: WebhookDeliveryDeps): Promise<{ stop(): Promise<void> }> {
  const { boss, config } = deps;
  if (config.WEBHOOK_CONCURRENCY === 0) return { stop: async () => {} };
  const log = deps.log.child({ component: "webhooks" });
  const events = deps.events ?? workerEventsService(deps.pg, deps.ch, config);
  const ahead = deps.events ?? workerEventsService(deps.pg, deps.ch, config, config.WEBHOOK_WAKE_MS);
  const repo = createWebhooksRepo(deps.pg, config, async () => boss);
  const policy = createAddressPolicy(config.WEBHOOK_ALLOWED_CIDRS);
  /** The delivery loop (started below, once its handler exists). */
  let deliveries: Team | undefined;
  /** Lets the delivery loop of this process fetch at once instead of at its next poll. */
  const notify = () => deliveries?.notify();
  /** The highest ceiling the wake saw: a page read under a lower one missed events already served. */
  let seen = "";
  /** The delay of a caught-up webhook's next message: none when a step came after its page was read. */
  const pollDelay = (ceiling: string | undefined) =>
    ceiling !== undefined && seen > ceiling ? 0 : config.WEBHOOK_POLL_S;
  /** Until when (ms) a caught-up message this process knows of waits: the wake reads the ceiling until then. */
  let waitingUntil = 0;
  let rouse: (() => void) | null = null;
  /** A caught-up message now waits `delayS`, its page read under `ceiling`: the wake watches for a step above it. */
  const waiting = (delayS: number, ceiling: string | undefined) => {
    if (delayS <= 0) return;
    if (ceiling !== undefined && ceiling > seen) seen = ceiling;
    // Until a worker has taken the message (its next poll after the start, JOBS_POLL_S) and left the next one waiting.
    waitingUntil = Math.max(waitingUntil, Date.now() + (delayS + config.JOBS_POLL_S + 1) * 1000);
    rouse?.();
    // The delivery loop fetches it when it is due, not at its next poll (one loop polls where one per delivery did).
    const timer = setTimeout(
      () => {
        dueTimers.delete(timer);
        notify();
      },
      delayS * 1000 + 50,
    );
    timer.unref();
    dueTimers.add(timer);
  };
  const dueTimers = new Set<NodeJS.Timeout>();

  /** A webhook's next batch of matching events after `afterId` under the watermark, as a poller reads it. */
  const read = (hook: StoredWebhook, afterId: string, service = events) =>
    service.page(hook.filters, { limit: config.WEBHOOK_BATCH, afterId, poll: true });

  /**
   * Sends the next batch of a claimed webhook (read now, or `prefetched` while the previous batch was posted):
   * `empty` when nothing matched (the step idled), `stopped` when the webhook moved on meanwhile, else the
   * acknowledged batch's log entry, whether it was full, the ceiling it was read under and the next batch's read when
   * it was full. Throws on a failure.
   */

  async function sendBatch(
    hook: StoredWebhook,
    prefetched: Promise<EventsPage> | null,
  ): Promise<
    | "empty"
    | "stopped"
    | { entry: DeliveryLog; full: boolean; ceiling?: string; next: Promise<EventsPage> | null }
  > {
    let ids: readonly string[];
    let docs: readonly string[];
    let ceiling: string | undefined;
    try {
      ({ ids, docs, ceiling } = await (prefetched ?? read(hook, hook.after_id)));
    } catch (error) {
      // The service's own stores failing is no failure of the receiver: the step is tried again later, the pending
      // batch and the failure count kept. When even that cannot be written, pg-boss retries the message.
      log.warn(
        { err: error, webhook_id: hook.webhook_id },
        "Webhook events could not be read; trying later.",
      );
      if (await repo.idle(hook, config.WEBHOOK_RETRY_DELAY_S, false)) return "stopped";
      throw error;
    }
    const pending = hook.pending_last_id;
    if (pending) {
      const n = ids.findIndex((id) => id > pending);
      const upTo = n < 0 ? ids.length : n;
      // A pending batch whose events a reorg withdrew is replaced by the next one (with its own message id).
      if (upTo > 0) {
        ids = ids.slice(0, upTo);
        docs = docs.slice(0, upTo);
      }
    }
    const lastId = ids.at(-1);
    if (!lastId) {
      const delay = pollDelay(ceiling);
      await repo.idle(hook, delay, true);
      if (delay === 0) notify();
      else waiting(delay, ceiling);
      return "empty";
    }
    const full = ids.length >= config.WEBHOOK_BATCH;
    // Catching up, the next batch is read while this one is posted (the page after its last id: what the next
    // sendBatch would read once this one is acknowledged); dropped when this one fails.
    const next = full && !pending ? read(hook, lastId, ahead) : null;
    next?.catch(() => undefined);
    if (pending !== lastId && !(await repo.setPending(hook, lastId))) return "stopped";
    const id = messageId(hook.webhook_id, lastId);
    const result = await deliver(policy, {
      url: hook.url,
      secret: hook.secret,
      messageId: id,
      body: `{"webhook_id":${JSON.stringify(hook.webhook_id)},"events":[${docs.join(",")}]}`,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    });
    deps.metrics?.webhookDeliveries.inc({ outcome: result.ok ? "ok" : "failed" });
    const entry: DeliveryLog = {
      messageId: id,
      firstEventId: ids[0]!,
      lastEventId: lastId,
      eventCount: ids.length,
      attempt: hook.attempts,
      ok: result.ok,
      status: result.status,
      error: result.error,
      latencyMs: result.latencyMs,
    };
    if (!result.ok) {
      await repo.failed(hook, entry);
      throw new Error(`webhook ${hook.webhook_id} delivery failed: ${result.error}`);
    }
    return { entry, full, ...(ceiling ? { ceiling } : {}), next };
  }

  // A message catching up sends full batches back to back (WEBHOOK_STEP_BATCHES), each acknowledged on its own 2xx,
  // instead of one batch per queue hop; it hands over before pg-boss would expire it (the last POST may take
  // WEBHOOK_TIMEOUT_MS), so a slow receiver never has two handlers of one webhook.
  const budgetMs = Math.max(0, config.WEBHOOK_EXPIRE_S * 500 - config.WEBHOOK_TIMEOUT_MS);

  async function step(m: WebhookMessage): Promise<void> {
    let hook = await repo.claim(m);
    if (!hook) return; // deleted, disabled, or the chain moved past this message
    const started = Date.now();
    let prefetched: Promise<EventsPage> | null = null;
    for (let sent = 1; ; sent++) {
      const batch = await sendBatch(hook, prefetched);
      if (batch === "empty" || batch === "stopped") return;
      const more = batch.full && sent < config.WEBHOOK_STEP_BATCHES && Date.now() - started < budgetMs;
      if (!more) {
        const delay = batch.full ? 0 : pollDelay(batch.ceiling);
        await repo.acknowledge(hook, batch.entry, delay);
        if (delay === 0) notify();
        else waiting(delay, batch.ceiling);
        return;
      }
      if (!(await repo.advance(hook, batch.entry))) return;
      prefetched = batch.next;
      hook = {
        ...hook,
        after_id: batch.entry.lastEventId,
        pending_last_id: null,
        failures: 0,
        last_error: null,
      };
    }
  }

  const handler: PgBoss.WorkWithMetadataHandler<WebhookMessage> = async ([job]) => {
    if (!job) return;
    try {
      await step(job.data);
    } catch (error) {
      log.warn(
        {
          err: error,
          webhook_id: job.data.webhook_id,
          retry: job.retryCount,
          final: job.retryCount >= job.retryLimit,
        },
        "Webhook delivery failed.",
      );
      throw error;
    }
  };
  // One polling loop for the WEBHOOK_CONCURRENCY deliveries (lib/jobs/team.ts). The dead-letter queue polls rarely:
  // a message this process fails for the last time wakes it at once (pg-boss moves it there in the same statement);
  // only letters made elsewhere (an expiry in maintenance, another process) wait for its poll.
  const dead = startTeam<WebhookMessage>(
    boss,
    WEBHOOK_DEAD_QUEUE,
    { size: 1, pollingIntervalSeconds: config.JOBS_POLL_S * DEAD_LETTER_POLL_FACTOR, log },
    async (job) => {
      // A dead letter carries the retry limit of the message that failed.
      const hook = await repo.exhausted(job.data, job.retryLimit);
      if (hook) log.warn({ webhook_id: hook.webhook_id, reason: hook.disabled_reason }, "Webhook disabled.");
    },
  );
  deliveries = startTeam<WebhookMessage>(
    boss,
    WEBHOOK_QUEUE,
    {
      size: config.WEBHOOK_CONCURRENCY,
      pollingIntervalSeconds: config.JOBS_POLL_S,
      log,
      settled: (job, error) => {
        if (error !== undefined && job.retryCount >= job.retryLimit) dead.notify();
      },
    },
    (job) => handler([job]),
  );

  // The wake: while a caught-up message waits, one ceiling read per WEBHOOK_WAKE_MS; on a step, one statement makes
  // every caught-up webhook's waiting message due (state `created` with a later start; retries wait in state
  // `retry`, untouched). With none waiting it rests, reading nothing, until a delivery loop leaves one waiting.
  const stopping = new AbortController();
  const rest = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        rouse = null;
        stopping.signal.removeEventListener("abort", done);
        resolve();
      };
      rouse = done;
      stopping.signal.addEventListener("abort", done);
    });
  const wake = async () => {
    try {
      // Messages earlier processes left waiting.
      const [row] = await deps.pg.query<{ until: string | null }>(
        "webhook_wake_waiting",
        `SELECT (extract(epoch FROM max(start_after)) * 1000)::bigint AS until FROM pgboss.job
          WHERE name = $1 AND state = 'created' AND start_after > now()`,
        [WEBHOOK_QUEUE],
      );
      if (row?.until) waitingUntil = Math.max(waitingUntil, Number(row.until));
    } catch (error) {
      log.debug({ err: error }, "Webhook wake: the waiting messages could not be read.");
    }
    while (!stopping.signal.aborted) {
      if (Date.now() >= waitingUntil) {
        await rest();
        continue;
      }
      try {
        const ceiling = await events.ceiling();
        if (seen !== "" && ceiling > seen) {
          seen = ceiling;
          const [due] = await deps.pg.query<{ n: number }>(
            "webhook_wake",
            `WITH due AS (
               UPDATE pgboss.job SET start_after = now()
                WHERE name = $1 AND state = 'created' AND start_after > now() RETURNING 1)
             SELECT count(*)::int AS n FROM due`,
            [WEBHOOK_QUEUE],
          );
          if ((due?.n ?? 0) > 0) notify();
        } else if (ceiling > seen) seen = ceiling;
      } catch (error) {
        log.debug({ err: error }, "Webhook wake: the ceiling could not be read; trying again.");
      }
      await sleep(config.WEBHOOK_WAKE_MS, stopping.signal).catch(() => undefined);
    }
  };
  const waking = config.WEBHOOK_WAKE_MS > 0 ? wake() : Promise.resolve();
  return {
    async stop() {
      stopping.abort();
      for (const timer of dueTimers) clearTimeout(timer);
      await waking;
      await deliveries?.stop();
      await dead.stop();
    },
  };
}
