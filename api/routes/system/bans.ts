/** Banned group: admins list, add and lift bans of key owners, Telegram users and IP ranges. */
import { BlockList } from "node:net";
import { Type } from "@sinclair/typebox";
import { BAN_KINDS, BAN_STATES, type BanKind, normalizeBanValue } from "../../../lib/bans/repo.ts";
import { AppError, badRequest, notFound } from "../../../lib/errors.ts";
import type { KeyWithPlan } from "../../../lib/keys/repo.ts";
import { clientAddress, parseIpRange } from "../../../lib/net.ts";
import { requireDb } from "../../require-db.ts";
import { DateTime, NoBody, Nullable, StringEnum } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const ENFORCEMENT =
  "A `user` ban refuses every key of that owner (`user_id` of the keys) on user and admin routes; an `ip` " +
  "ban refuses every request from an address in the range on every route, public ones, the documentation " +
  "and unknown paths included; a `telegram` ban makes the bot ignore that Telegram user (the bot's " +
  "`/ban` and `/unban` write the same bans). A refused request answers 403 with code `banned` and " +
  "`details: { kind, reason, expires_at, ban_id }`, checked before rate limiting (an address ban " +
  "before anything else, an owner's ban right after the key is found). The client address is the " +
  "socket's peer, or the `X-Forwarded-For` address when the deployment sets TRUST_PROXY. Each API " +
  "process keeps the active bans in memory: a change made through it applies at once, one made " +
  "through another process (another replica, the bot) within BANS_REFRESH_MS (default 5 s); an " +
  "expiry applies at its time everywhere.";

const BanSchema = Type.Object(
  {
    ban_id: Type.String({ format: "uuid" }),
    kind: StringEnum(BAN_KINDS, {
      description: "`user`: a key owner (user_id); `telegram`: a Telegram user id; `ip`: an IP range.",
    }),
    value: Type.String({
      description:
        "The target as stored: the user_id, the Telegram user id, or the range in canonical CIDR form (`203.0.113.0/24`, `2001:db8::/32`; one address is /32 or /128).",
    }),
    reason: Type.String(),
    expires_at: Nullable(DateTime("The ban stops applying at this time; null = until lifted.")),
    created_by: Type.String({
      description:
        "Who added it: `<user_id> (key <prefix>)` through the API, `telegram:<id>` by the bot, `automatic` after repeated 429s.",
    }),
    created_at: DateTime(),
    lifted_at: Nullable(DateTime("Set when an admin lifted the ban.")),
    lifted_by: Nullable(Type.String()),
    state: StringEnum(BAN_STATES, {
      description: "`active` applies now; `expired` is past expires_at; `lifted` was removed.",
    }),
  },
  { $id: "Ban", title: "Ban" },
);

const BanIdParams = Type.Object({
  banid: Type.String({ format: "uuid", description: "Ban id (`ban_id`)." }),
});
const BanResult = Type.Object({ ok: Type.Boolean(), ban: Type.Ref("Ban") });

/** Ranges wider than these need `force` (a /0 bans everyone). */
const NARROWEST_UNFORCED = { ipv4: 8, ipv6: 16 } as const;
/** Ten years, in seconds. */
const MAX_DURATION_S = 315_360_000;

const who = (caller: KeyWithPlan | null) => (caller ? `${caller.user_id} (key ${caller.key_prefix})` : "api");

function needsForce(code: string, message: string) {
  return new AppError(code, `${message}; send "force": true to ban anyway`, {
    status: 400,
    details: { field: "force" },
  });
}

export async function banRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(BanSchema);

  app.get(
    "/system/bans",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Banned"],
        summary: "List bans, newest first",
        description:
          "Every ban, newest first, at most `limit`; filter by `kind`, `state` and a target (`value`, " +
          "with `kind`: written as when adding, so `203.0.113.7` finds the ban of `203.0.113.7/32`). " +
          "Next page: `to` = the `created_at` of the last ban received. " +
          ENFORCEMENT,
        querystring: Type.Object({
          kind: Type.Optional(StringEnum(BAN_KINDS)),
          state: Type.Optional(StringEnum(BAN_STATES)),
          value: Type.Optional(
            Type.String({ minLength: 1, maxLength: 200, description: "A target, with `kind`." }),
          ),
          from: Type.Optional(DateTime("Created at or after.")),
          to: Type.Optional(DateTime("Created before.")),
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
        }),
        response: { 200: Type.Object({ bans: Type.Array(Type.Ref("Ban")) }), 400: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const q = request.query;
      if (q.value !== undefined && !q.kind) {
        throw badRequest("Invalid querystring: value needs kind (user, telegram or ip)", { field: "value" });
      }
      const value = q.value !== undefined && q.kind ? normalizeBanValue(q.kind, q.value) : undefined;
      return { bans: await need("bansRepo").list({ ...q, value }) };
    },
  );

  app.get(
    "/system/bans/:banid",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Banned"],
        summary: "Show one ban",
        params: BanIdParams,
        response: { 200: BanResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const ban = await need("bansRepo").get(request.params.banid);
      if (!ban) throw notFound(`Ban ${request.params.banid} not found`, { ban_id: request.params.banid });
      return { ok: true, ban };
    },
  );

  app.post(
    "/system/bans",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Banned"],
        summary: "Ban a key owner, a Telegram user or an IP address or range",
        description:
          "`value` per kind: `user` a non-empty user_id; `telegram` a positive integer; `ip` an IPv4 or " +
          "IPv6 address or CIDR range, stored in canonical form with host bits cleared (`203.0.113.7/24` " +
          "is stored `203.0.113.0/24`; `::ffff:1.2.3.4` is the IPv4 address `1.2.3.4/32`). Optional " +
          "expiry: `expires_at` (in the future) or `duration_s`, not both; without either the ban lasts " +
          "until lifted. 409 `already_banned` when the target has an active ban (lift it to change it). " +
          'Against lock-outs, these need `"force": true` (400 otherwise): a range wider than /8 (IPv4) ' +
          "or /16 (IPv6), `0.0.0.0/0` and `::/0` included (`ban_too_wide`); a range holding the caller's " +
          "own address, or the caller's own user_id (`ban_locks_out_caller`). An admin locked out anyway " +
          "lifts the ban from another address or key, or in the database (docs/operations.md, Bans). " +
          ENFORCEMENT,
        body: Type.Object(
          {
            kind: StringEnum(BAN_KINDS),
            value: Type.String({ minLength: 1, maxLength: 200, description: "The target (see above)." }),
            reason: Type.String({
              minLength: 1,
              maxLength: 500,
              description: "Shown to the banned client in the 403 body.",
            }),
            expires_at: Type.Optional(DateTime("The ban stops applying at this time (future).")),
            duration_s: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: MAX_DURATION_S,
                description: "The ban stops applying this many seconds from now.",
              }),
            ),
            force: Type.Optional(
              Type.Boolean({ default: false, description: "Ban even a very wide range or yourself." }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: BanResult, 400: Type.Ref("Problem"), 409: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const body = request.body;
      const kind = body.kind as BanKind;
      if (body.expires_at !== undefined && body.duration_s !== undefined) {
        throw badRequest("Invalid body: duration_s cannot be sent with expires_at; send one", {
          field: "duration_s",
        });
      }
      let expiresAt: string | null = null;
      if (body.expires_at !== undefined) {
        const ms = Date.parse(body.expires_at);
        if (!(ms > Date.now())) {
          throw badRequest(`Invalid body: expires_at ${body.expires_at} is not in the future`, {
            field: "expires_at",
          });
        }
        expiresAt = new Date(ms).toISOString();
      } else if (body.duration_s !== undefined) {
        expiresAt = new Date(Date.now() + body.duration_s * 1000).toISOString();
      }
      const value = normalizeBanValue(kind, body.value);
      const caller = request.apiKey;
      if (!body.force) {
        if (kind === "user" && caller && value === caller.user_id) {
          throw needsForce("ban_locks_out_caller", `Banning user ${value} would refuse your own key`);
        }
        if (kind === "ip") {
          const range = parseIpRange(value) as Exclude<ReturnType<typeof parseIpRange>, string>;
          if (range.prefix < NARROWEST_UNFORCED[range.family]) {
            throw needsForce(
              "ban_too_wide",
              `${value} is wider than /${NARROWEST_UNFORCED[range.family]} and would ban a large part of the Internet`,
            );
          }
          const self = clientAddress(request.ip);
          const list = new BlockList();
          list.addSubnet(range.network, range.prefix, range.family);
          if (self && list.check(self.address, self.family)) {
            throw needsForce(
              "ban_locks_out_caller",
              `${value} holds your own address ${request.ip} and would refuse your requests`,
            );
          }
        }
      }
      const ban = await need("bans").add({
        kind,
        value,
        reason: body.reason,
        expiresAt,
        createdBy: who(caller),
      });
      return { ok: true, ban };
    },
  );

  app.post(
    "/system/bans/:banid/delete",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["Banned"],
        summary: "Lift a ban (it stops applying; kept for the record)",
        description:
          "The ban stops applying at once in this API process, within BANS_REFRESH_MS in the others. The " +
          "row stays, `state` `lifted`, with `lifted_at` and `lifted_by`; lifting a lifted ban changes " +
          "nothing. 404 for an unknown id.",
        params: BanIdParams,
        body: NoBody,
        response: { 200: BanResult, 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const ban = await need("bans").lift(request.params.banid, who(request.apiKey));
      if (!ban) throw notFound(`Ban ${request.params.banid} not found`, { ban_id: request.params.banid });
      return { ok: true, ban };
    },
  );
}
