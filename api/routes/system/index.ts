/** System group: plans and API keys (SPEC.md "System: plans, keys"). */
import { Type } from "@sinclair/typebox";
import { badRequest, forbidden, notFound } from "../../../lib/errors.ts";
import type { ApiKey, KeyWithPlan } from "../../../lib/keys/repo.ts";
import type { UsageGranularity } from "../../../lib/keys/usage-repo.ts";
import { requireDb } from "../../require-db.ts";
import { AliasOf, DateTime, INT32_MAX, NoBody, Nullable, StringEnum } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const Plan = Type.Object(
  {
    plan_id: Type.String(),
    name: Type.String(),
    rpm: Type.Integer({ description: "Requests allowed per minute." }),
    rpd: Type.Integer({ description: "Requests allowed per day." }),
    price: Type.String({ description: "Price in USD per validity period (decimal string)." }),
    price_alph: Type.String({ description: "Price in ALPH per validity period (decimal string)." }),
    validity_days: Type.Integer({ description: "Days a payment keeps a key valid." }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: "ApiPlan", title: "ApiPlan" },
);

const Key = Type.Object(
  {
    key_id: Type.String({ format: "uuid" }),
    key_prefix: Type.String({ description: "First characters of the raw key, for display." }),
    user_id: Type.String(),
    plan_id: Type.String(),
    level: StringEnum(["user", "admin"]),
    allowed_origins: Type.Array(Type.String(), {
      description: "Browser origins allowed; empty allows every origin.",
    }),
    valid_until: Nullable(DateTime("Key stops working after this time; null = no end.")),
    last_payment_at: Nullable(DateTime()),
    revoked_at: Nullable(DateTime("Set when the key was revoked.")),
    active: Type.Boolean({ description: "Not revoked and not past valid_until." }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: "ApiKey", title: "ApiKey" },
);

const PlanId = Type.String({ pattern: "^[a-z0-9_-]{1,64}$", description: "Plan id." });
const KeyPlanId = StringEnum(["free", "pro", "enterprise"], { description: "Plan of the new key." });
const UserId = Type.String({ minLength: 1, maxLength: 200, description: "Owner of the new key." });

const KeyIdParams = Type.Object({
  keyid: Type.String({ format: "uuid", description: "Key id (`keyId` at creation)." }),
});
const KeyResult = Type.Object({ ok: Type.Boolean(), key: Type.Ref("ApiKey") });
const Origin = Type.Object(
  {
    origin: Type.String({
      pattern: "^https?://[^/\\s?#]+$",
      maxLength: 255,
      description: "Browser origin: scheme://host[:port], no path.",
    }),
  },
  { additionalProperties: false },
);

const USAGE_WINDOWS = { "1h": 3_600_000, "24h": 86_400_000, "7d": 604_800_000, "30d": 2_592_000_000 };
const STEP_MS: Record<UsageGranularity, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** The longest span `from`/`to` may cover, and the most buckets one answer holds. */
const USAGE_MAX_SPAN_MS = 31 * 86_400_000;
const USAGE_MAX_BUCKETS = 1_500;

const UsageCounts = {
  requests: Type.Integer({ description: "Requests charged to the key's allowance, the 429s included." }),
  rate_limited: Type.Integer({ description: "Requests answered 429 (allowance spent)." }),
};
const MaxPerMinute = Type.Integer({
  description: "Requests in the busiest minute (compare with `limits.rpm`).",
});
const KeyUsage = Type.Object(
  {
    key_id: Type.String({ format: "uuid" }),
    user_id: Type.String(),
    plan_id: Type.String(),
    limits: Type.Object(
      {
        rpm: Type.Integer({ description: "Requests allowed per minute by the key's plan." }),
        rpd: Type.Integer({ description: "Requests allowed per day by the key's plan." }),
      },
      { description: "The plan's allowance, as enforced now." },
    ),
    valid_until: Nullable(DateTime("Key stops working after this time; null = no end.")),
    active: Type.Boolean({ description: "Not revoked and not past valid_until." }),
    from: DateTime("Start of the first bucket (the window's start, rounded down to the granularity, UTC)."),
    to: DateTime("End of the window (exclusive)."),
    granularity: StringEnum(["minute", "hour", "day"]),
    totals: Type.Object(
      { ...UsageCounts, max_per_minute: MaxPerMinute },
      { description: "Over the whole window." },
    ),
    last_24h: Type.Object(UsageCounts, {
      description:
        "Over the last 24 hours, whatever the window (compare with `limits.rpd`; the bot's /keys shows it).",
    }),
    buckets: Type.Array(
      Type.Object({
        start: DateTime("Start of the bucket (UTC)."),
        ...UsageCounts,
        max_per_minute: MaxPerMinute,
      }),
      { description: "Every bucket of the window, oldest first, empty ones included (zeros)." },
    ),
  },
  { $id: "ApiKeyUsage", title: "ApiKeyUsage" },
);

const UsageQuery = Type.Object({
  window: Type.Optional(
    StringEnum(Object.keys(USAGE_WINDOWS) as ["1h", "24h", "7d", "30d"], {
      description:
        "The window ending now (default `24h` when neither `from` nor `to` is given); not with `from`/`to`.",
    }),
  ),
  from: Type.Optional(
    DateTime("Start of the window (default: `to` minus 24 hours); the window spans at most 31 days."),
  ),
  to: Type.Optional(DateTime("End of the window, exclusive (default: now).")),
  granularity: Type.Optional(
    StringEnum(["minute", "hour", "day"], {
      description:
        "Bucket size (UTC boundaries). Default by span: up to 6 hours `minute`, up to 8 days `hour`, else `day`. At most 1500 buckets: `minute` covers at most about a day.",
    }),
  ),
});

/** The window of a usage query: [from, to) in Unix ms, refused with a 400 naming the parameter. */
function usageWindow(
  query: { window?: keyof typeof USAGE_WINDOWS; from?: string; to?: string; granularity?: UsageGranularity },
  now: number,
): { fromMs: number; toMs: number; granularity: UsageGranularity } {
  if (query.window && (query.from !== undefined || query.to !== undefined)) {
    throw badRequest(`Give either window (${query.window}) or from/to, not both.`, { window: query.window });
  }
  let fromMs: number;
  let toMs: number;
  if (query.from === undefined && query.to === undefined) {
    toMs = now;
    fromMs = now - USAGE_WINDOWS[query.window ?? "24h"];
  } else {
    const parse = (name: "from" | "to", value: string) => {
      const ms = Date.parse(value);
      if (Number.isNaN(ms)) throw badRequest(`${name} (${value}) is not a date-time.`, { [name]: value });
      return ms;
    };
    toMs = query.to === undefined ? now : parse("to", query.to);
    fromMs = query.from === undefined ? toMs - USAGE_WINDOWS["24h"] : parse("from", query.from);
    if (!(fromMs < toMs)) throw badRequest(`from (${query.from}) must be before to (${query.to ?? "now"}).`);
    if (toMs - fromMs > USAGE_MAX_SPAN_MS) {
      throw badRequest(`from (${query.from}) to ${query.to ?? "now"} spans more than 31 days.`, {
        from: query.from,
        to: query.to,
      });
    }
  }
  const span = toMs - fromMs;
  const granularity =
    query.granularity ?? (span <= 6 * 3_600_000 ? "minute" : span <= 8 * 86_400_000 ? "hour" : "day");
  const step = STEP_MS[granularity];
  fromMs -= ((fromMs % step) + step) % step;
  const count = Math.ceil((toMs - fromMs) / step);
  if (count > USAGE_MAX_BUCKETS) {
    throw badRequest(
      `granularity=${granularity} gives ${count} buckets over this window, more than ${USAGE_MAX_BUCKETS}: use a coarser granularity or a shorter window.`,
      { granularity },
    );
  }
  return { fromMs, toMs, granularity };
}

const present = (key: ApiKey) => ({
  ...key,
  active: !key.revoked_at && (!key.valid_until || Date.parse(key.valid_until) > Date.now()),
});

export async function systemRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Plan);
  app.addSchema(Key);
  app.addSchema(KeyUsage);

  app.get(
    "/system/plans",
    {
      config: { access: "public", db: "required" },
      schema: {
        tags: ["Plans"],
        summary: "List plans with their limits and prices",
        response: { 200: Type.Object({ plans: Type.Array(Type.Ref("ApiPlan")) }) },
      },
    },
    async () => ({ plans: await need("keys").listPlans() }),
  );

  app.post(
    "/system/plans/upsert",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Plans"],
        summary: "Create or update a plan by id",
        body: Type.Object(
          {
            plan_id: PlanId,
            name: Type.String({ minLength: 1, maxLength: 200 }),
            rpm: Type.Integer({
              minimum: 1,
              maximum: INT32_MAX,
              description: "Requests allowed per minute.",
            }),
            rpd: Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "Requests allowed per day." }),
            price: Type.String({ pattern: "^\\d+(\\.\\d+)?$" }),
            price_alph: Type.String({ pattern: "^\\d+(\\.\\d+)?$" }),
            validity_days: Type.Integer({ minimum: 1, maximum: 3660 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ok: Type.Boolean(), plan: Type.Ref("ApiPlan") }) },
      },
    },
    async (request) => ({ ok: true, plan: await need("keys").upsertPlan(request.body) }),
  );

  app.get(
    "/system/keys",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Keys"],
        summary: "List API keys: your own, or a user's (admin)",
        querystring: Type.Object({
          user_id: Type.Optional(
            Type.String({ minLength: 1, maxLength: 200, description: "Admins only: list this user's keys." }),
          ),
        }),
        response: { 200: Type.Object({ keys: Type.Array(Type.Ref("ApiKey")) }) },
      },
    },
    async (request) => {
      const caller = request.apiKey;
      const wanted = request.query.user_id;
      if (wanted !== undefined && caller && caller.level !== "admin" && wanted !== caller.user_id) {
        throw forbidden("admin_required", "Only admins may list another user's keys.");
      }
      const userId = wanted ?? caller?.user_id;
      return { keys: (await need("keys").listKeys(userId)).map(present) };
    },
  );

  app.post(
    "/system/keys",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Keys"],
        summary: "Create an API key; the raw key is returned once",
        body: Type.Object(
          {
            user_id: UserId,
            plan_id: KeyPlanId,
            userId: AliasOf("user_id", UserId),
            planId: AliasOf("plan_id", KeyPlanId),
            level: Type.Optional(StringEnum(["user", "admin"], { default: "user" })),
            valid_until: Type.Optional(
              Nullable(
                DateTime(
                  "End of validity; absent: now + the plan's validity_days; null: no end. A payment extends it.",
                ),
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            key: Type.String({ description: "The raw key. Shown only in this response; store it now." }),
            keyId: Type.String({ format: "uuid" }),
            key_prefix: Type.String(),
            valid_until: Nullable(DateTime("End of validity; null = no end.")),
          }),
        },
      },
    },
    async (request) =>
      need("keys").createKey({
        userId: request.body.user_id,
        planId: request.body.plan_id,
        level: request.body.level ?? "user",
        ...("valid_until" in request.body
          ? { validUntil: (request.body.valid_until as string | null) ?? null }
          : {}),
      }),
  );

  const ownerOrAdmin = async (keyId: string, caller: KeyWithPlan | null, what: string) => {
    const key = await need("keys").getKey(keyId);
    if (!key) throw notFound(`API key ${keyId} not found`, { keyId });
    if (caller && caller.level !== "admin" && caller.user_id !== key.user_id) {
      throw forbidden("not_key_owner", `Only the key's owner or an admin may ${what} key ${keyId}.`);
    }
    return key;
  };

  app.get(
    "/system/keys/:keyid/usage",
    {
      config: { access: "user", db: "required" },
      schema: {
        tags: ["Keys"],
        summary:
          "A key's usage: requests and 429s per minute, hour or day, and its plan's limits (owner or admin)",
        description: [
          "Every request charged to the key's plan allowance is counted, per key and UTC minute, the 429s",
          "included (`rate_limited` counts those). Requests refused before the allowance (unknown, revoked or",
          "expired key, disallowed origin, a user key on an admin route) are not counted.",
          "",
          "Each API process counts in memory and adds its counts to PostgreSQL every `USAGE_FLUSH_MS`",
          "(default 5 s) and when it stops; the process answering flushes its own counts first, so requests",
          "served by other processes show within `USAGE_FLUSH_MS`. Minutes older than",
          "`USAGE_RETENTION_DAYS` (default 35) are deleted.",
          "",
          "The window: `window` (`1h`, `24h`, `7d`, `30d`, ending now; default `24h`), or `from`/`to`",
          "(date-times, at most 31 days apart). `granularity` picks the bucket size; at most 1500 buckets.",
          "",
          "The key's owner (a user key of the same `user_id`) or an admin key may read it: another user's",
          "key answers 403 `not_key_owner`, an unknown key 404.",
        ].join("\n"),
        params: KeyIdParams,
        querystring: UsageQuery,
        response: { 200: Type.Ref("ApiKeyUsage"), 403: Type.Ref("Problem"), 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const keyId = request.params.keyid;
      const now = Date.now();
      const { fromMs, toMs, granularity } = usageWindow(request.query, now);
      const key = await ownerOrAdmin(keyId, request.apiKey, "read the usage of");
      const plan = (await need("keys").listPlans()).find((p) => p.plan_id === key.plan_id);
      const usage = need("usage");
      const found = await usage.buckets(keyId, fromMs, toMs, granularity);
      const day = (await usage.last24h([keyId])).get(keyId);
      const byStart = new Map(found.map((b) => [b.startMs, b]));
      const step = STEP_MS[granularity];
      const buckets = [];
      for (let start = fromMs; start < toMs; start += step) {
        const b = byStart.get(start);
        buckets.push({
          start: new Date(start).toISOString(),
          requests: b?.requests ?? 0,
          rate_limited: b?.rateLimited ?? 0,
          max_per_minute: b?.maxPerMinute ?? 0,
        });
      }
      const { active } = present(key);
      return {
        key_id: key.key_id,
        user_id: key.user_id,
        plan_id: key.plan_id,
        limits: { rpm: plan?.rpm ?? 0, rpd: plan?.rpd ?? 0 },
        valid_until: key.valid_until,
        active,
        from: new Date(fromMs).toISOString(),
        to: new Date(toMs).toISOString(),
        granularity,
        totals: {
          requests: buckets.reduce((n, b) => n + b.requests, 0),
          rate_limited: buckets.reduce((n, b) => n + b.rate_limited, 0),
          max_per_minute: buckets.reduce((n, b) => Math.max(n, b.max_per_minute), 0),
        },
        last_24h: { requests: day?.requests ?? 0, rate_limited: day?.rateLimited ?? 0 },
        buckets,
      };
    },
  );

  for (const action of ["add", "del"] as const) {
    app.post(
      `/system/key/:keyid/origin/${action}`,
      {
        config: { access: "user", db: "required" },
        schema: {
          tags: ["Keys"],
          summary:
            action === "add"
              ? "Allow a browser origin for a key (owner or admin)"
              : "Remove an allowed origin (owner or admin)",
          params: KeyIdParams,
          body: Origin,
          response: { 200: KeyResult, 404: Type.Ref("Problem") },
        },
      },
      async (request) => {
        await ownerOrAdmin(request.params.keyid, request.apiKey, "change the origins of");
        const key =
          action === "add"
            ? await need("keys").addOrigin(request.params.keyid, request.body.origin)
            : await need("keys").removeOrigin(request.params.keyid, request.body.origin);
        return { ok: true, key: present(key) };
      },
    );
  }

  app.post(
    "/system/key/:keyid/plan/set",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Keys"],
        summary: "Move a key to another plan (no payment needed)",
        params: KeyIdParams,
        body: Type.Object(
          { plan_id: PlanId, planId: AliasOf("plan_id", PlanId) },
          { additionalProperties: false },
        ),
        response: { 200: KeyResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => ({
      ok: true,
      key: present(await need("keys").setPlan(request.params.keyid, request.body.plan_id)),
    }),
  );

  app.post(
    "/system/key/:keyid/delete",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Keys"],
        summary: "Revoke a key (it answers 403 from now on)",
        params: KeyIdParams,
        body: NoBody,
        response: { 200: KeyResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => ({ ok: true, key: present(await need("keys").revoke(request.params.keyid)) }),
  );

  app.post(
    "/system/key/:keyid/update",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Keys"],
        summary: "Set a key's validity end or last payment time (null clears)",
        params: KeyIdParams,
        body: Type.Object(
          {
            valid_until: Type.Optional(Nullable(DateTime())),
            last_payment_at: Type.Optional(Nullable(DateTime())),
          },
          { additionalProperties: false },
        ),
        response: { 200: KeyResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      if (Object.keys(request.body).length === 0)
        throw badRequest("No fields to update: send valid_until or last_payment_at.");
      const body = request.body as { valid_until?: string | null; last_payment_at?: string | null };
      return { ok: true, key: present(await need("keys").update(request.params.keyid, body)) };
    },
  );
}
