/** System group: plans and API keys (SPEC.md "System: plans, keys"). */
import { Type } from "@sinclair/typebox";
import { badRequest, forbidden, notFound } from "../../../lib/errors.ts";
import type { ApiKey, KeyWithPlan } from "../../../lib/repos/keys.ts";
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

const present = (key: ApiKey) => ({
  ...key,
  active: !key.revoked_at && (!key.valid_until || Date.parse(key.valid_until) > Date.now()),
});

export async function systemRoutes(app: App, deps: ApiDeps): Promise<void> {
  app.addSchema(Plan);
  app.addSchema(Key);

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
    async () => ({ plans: await deps.keys!.listPlans() }),
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
    async (request) => ({ ok: true, plan: await deps.keys!.upsertPlan(request.body) }),
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
      return { keys: (await deps.keys!.listKeys(userId)).map(present) };
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
      deps.keys!.createKey({
        userId: request.body.user_id,
        planId: request.body.plan_id,
        level: request.body.level ?? "user",
        ...("valid_until" in request.body
          ? { validUntil: (request.body.valid_until as string | null) ?? null }
          : {}),
      }),
  );

  const ownerOrAdmin = async (keyId: string, caller: KeyWithPlan | null) => {
    const key = await deps.keys!.getKey(keyId);
    if (!key) throw notFound(`API key ${keyId} not found`, { keyId });
    if (caller && caller.level !== "admin" && caller.user_id !== key.user_id) {
      throw forbidden("not_key_owner", "Only the key's owner or an admin may change its origins.");
    }
  };

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
        await ownerOrAdmin(request.params.keyid, request.apiKey);
        const key =
          action === "add"
            ? await deps.keys!.addOrigin(request.params.keyid, request.body.origin)
            : await deps.keys!.removeOrigin(request.params.keyid, request.body.origin);
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
      key: present(await deps.keys!.setPlan(request.params.keyid, request.body.plan_id)),
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
    async (request) => ({ ok: true, key: present(await deps.keys!.revoke(request.params.keyid)) }),
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
      return { ok: true, key: present(await deps.keys!.update(request.params.keyid, body)) };
    },
  );
}
