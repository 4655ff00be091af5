/**
 * Webhooks as the API manages them: creation (the URL checked, the start cursor, the secret shown once), and the
 * owner's view: an owner (the `user_id` of API keys) sees and manages its own webhooks, an admin key all of them;
 * any other webhook is answered as unknown (404), never as forbidden, so ids do not leak.
 */
import type PgBoss from "pg-boss";
import { idCeiling } from "../chain/types.ts";
import type { Config } from "../config.ts";
import { notFound } from "../errors.ts";
import type { EventFilters } from "../events/reader.ts";
import type { EventsService } from "../events/service.ts";
import type { Pg } from "../stores/postgres.ts";
import { type AddressPolicy, createAddressPolicy } from "./address.ts";
import { newSecret } from "./deliver.ts";
import {
  createWebhooksRepo,
  type Delivery,
  type StoredWebhook,
  type Webhook,
  type WebhooksConfig,
  type WebhooksRepo,
} from "./repo.ts";

/** Who asks: the key's owner and level. */
export interface Viewer {
  user_id: string;
  key_id: string;
  level: "user" | "admin";
}

export interface NewWebhookInput {
  url: string;
  filters?: EventFilters;
  /** Start after this event id; absent: at the watermark (events from now on). */
  afterId?: string;
}

export interface WebhooksService {
  readonly repo: WebhooksRepo;
  readonly policy: AddressPolicy;
  create(viewer: Viewer, input: NewWebhookInput): Promise<{ webhook: Webhook; secret: string }>;
  list(
    viewer: Viewer,
    query: { limit: number; cursor?: string },
  ): Promise<{ webhooks: Webhook[]; next: string | null }>;
  get(viewer: Viewer, webhookId: string): Promise<Webhook>;
  remove(viewer: Viewer, webhookId: string): Promise<void>;
  enable(viewer: Viewer, webhookId: string): Promise<Webhook>;
  disable(viewer: Viewer, webhookId: string): Promise<Webhook>;
  deliveries(
    viewer: Viewer,
    webhookId: string,
    query: { limit: number; before?: number },
  ): Promise<Delivery[]>;
}

/** The API's view of a webhook: without its secret and its chain's fencing token. */
export function presentWebhook(hook: StoredWebhook): Webhook {
  const { secret: _s, step: _st, attempts: _a, ...view } = hook;
  return view;
}

/** Filters as stored: trimmed, without empty values, lists deduplicated. */
export function normalizeFilters(f: EventFilters = {}): EventFilters {
  const list = (v: string[] | undefined) => [...new Set((v ?? []).map((s) => s.trim()).filter(Boolean))];
  const text = (v: string | undefined) => v?.trim() || undefined;
  const out: EventFilters = {};
  if (text(f.dapp_id)) out.dapp_id = text(f.dapp_id)!;
  if (text(f.address)) out.address = text(f.address)!;
  if (text(f.token_address)) out.token_address = text(f.token_address)!;
  if (list(f.category).length) out.category = list(f.category);
  if (list(f.sub_kind).length) out.sub_kind = list(f.sub_kind);
  return out;
}

export function createWebhooksService(
  pg: Pg,
  config: WebhooksConfig & Pick<Config, "WEBHOOK_ALLOWED_CIDRS">,
  events: EventsService,
  boss: () => Promise<PgBoss>,
): WebhooksService {
  const repo = createWebhooksRepo(pg, config, boss);
  const policy = createAddressPolicy(config.WEBHOOK_ALLOWED_CIDRS);

  /** The webhook when the viewer may see it; 404 otherwise (another owner's webhook is unknown to it). */
  async function visible(viewer: Viewer, webhookId: string): Promise<StoredWebhook> {
    const hook = await repo.get(webhookId);
    if (!hook || (viewer.level !== "admin" && hook.user_id !== viewer.user_id)) {
      throw notFound(`Webhook ${webhookId} not found.`, { webhook_id: webhookId });
    }
    return hook;
  }

  return {
    repo,
    policy,
    async create(viewer, input) {
      const { url } = await policy.resolve(input.url, "url");
      const afterId = input.afterId ?? idCeiling(await events.watermark());
      const secret = newSecret();
      const hook = await repo.create({
        userId: viewer.user_id,
        keyId: viewer.key_id,
        url: url.toString(),
        filters: normalizeFilters(input.filters),
        afterId,
        secret,
      });
      return { webhook: presentWebhook(hook), secret };
    },
    async list(viewer, query) {
      const page = await repo.list({
        ...(viewer.level === "admin" ? {} : { userId: viewer.user_id }),
        limit: query.limit,
        ...(query.cursor ? { cursor: query.cursor } : {}),
      });
      return { webhooks: page.webhooks.map(presentWebhook), next: page.next };
    },
    get: async (viewer, webhookId) => presentWebhook(await visible(viewer, webhookId)),
    async remove(viewer, webhookId) {
      await visible(viewer, webhookId);
      await repo.remove(webhookId);
    },
    async enable(viewer, webhookId) {
      await visible(viewer, webhookId);
      const hook = await repo.enable(webhookId);
      if (!hook) throw notFound(`Webhook ${webhookId} not found.`, { webhook_id: webhookId });
      return presentWebhook(hook);
    },
    async disable(viewer, webhookId) {
      const current = await visible(viewer, webhookId);
      const who = current.user_id === viewer.user_id ? "its owner" : `an admin (${viewer.user_id})`;
      const hook = await repo.disable(webhookId, `disabled by ${who}`);
      if (!hook) throw notFound(`Webhook ${webhookId} not found.`, { webhook_id: webhookId });
      return presentWebhook(hook);
    },
    async deliveries(viewer, webhookId, query) {
      await visible(viewer, webhookId);
      return repo.deliveries(webhookId, query);
    },
  };
}
