/**
 * WireGuard group: private access for key owners (enterprise customers, data engineers reaching
 * ClickHouse through the tunnel). Admins create a peer (the key pair is generated here and the private
 * key is returned once, never stored), list and revoke peers, and fetch the server's [Peer] sections.
 */
import { Type } from "@sinclair/typebox";
import { AppError, notFound } from "../../../lib/errors.ts";
import {
  generateKeyPair,
  renderClientConfig,
  renderServerPeers,
  wireguardSettings,
} from "../../../lib/wireguard/keys.ts";
import type { WireGuardPeer } from "../../../lib/wireguard/peers.ts";
import { requireDb } from "../../require-db.ts";
import { DateTime, NoBody, Nullable, StringEnum } from "../../schemas.ts";
import type { ApiDeps, App } from "../../types.ts";

const Peer = Type.Object(
  {
    peer_id: Type.String({ format: "uuid" }),
    user_id: Type.String({ description: "Owner: the `user_id` of API keys." }),
    name: Type.String({ description: "Label given at creation (device, person, purpose)." }),
    public_key: Type.String({ description: "The peer's WireGuard public key (base64)." }),
    address: Type.String({
      description: "The peer's tunnel address in WG_SUBNET; the server allows it as `<address>/32`.",
    }),
    active: Type.Boolean({ description: "Not revoked: listed in the server's [Peer] sections." }),
    created_at: DateTime(),
    revoked_at: Nullable(DateTime("Set when the peer was revoked.")),
  },
  { $id: "WireGuardPeer", title: "WireGuardPeer" },
);

const PeerIdParams = Type.Object({
  peerid: Type.String({ format: "uuid", description: "Peer id (`peer_id`)." }),
});

const present = (peer: WireGuardPeer) => ({ ...peer, active: peer.revoked_at === null });

const SYNC_USAGE =
  'Keep the server\'s `/etc/wireguard/wg0.conf` to its [Interface] (PrivateKey, ListenPort, `Address = <first host of WG_SUBNET>/<prefix>`), then after each change run `curl -fsS -H "X-API-Key: $ADMIN_KEY" -H "Authorization: Bearer $ADMIN_KEY" https://<api>/system/wireguard/server-peers > /etc/wireguard/wg0-peers.conf && wg syncconf wg0 <(wg-quick strip wg0; cat /etc/wireguard/wg0-peers.conf)`: `wg syncconf` adds new peers, removes revoked ones and leaves the sessions of the others alone.';

export async function wireguardRoutes(app: App, deps: ApiDeps): Promise<void> {
  const need = requireDb(deps);
  app.addSchema(Peer);
  const settings = wireguardSettings(deps.config);

  app.post(
    "/system/wireguard/peers",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["WireGuard"],
        summary: "Create a WireGuard peer for a key owner; its client configuration is returned once",
        description: [
          `Generates an X25519 key pair, gives the peer the next free address of WG_SUBNET (the server's interface takes its first host address, 10.87.0.1 in the default 10.87.0.0/24; peers get the following ones up to the last before the broadcast address, one /32 each), stores the public key and returns the peer with \`private_key\` and \`client_config\` (a \`wg-quick\` file: [Interface] PrivateKey, Address /32, DNS; [Peer] the server's PublicKey, Endpoint, AllowedIPs, PersistentKeepalive). The private key is not stored anywhere: this response is the only copy (it is sent with \`Cache-Control: no-store\`); a lost configuration means revoking the peer and creating another.`,
          "Addresses are handed out in order: new addresses first, and only once every address of the subnet has been handed out is the lowest address no active peer holds reused (a revoked peer's address). Concurrent creates, in any number of API processes on one PostgreSQL, never get the same address (one transaction under an advisory lock, and a unique index on the active peers' addresses).",
          "The new peer reaches the server once the server's [Peer] sections are applied (GET /system/wireguard/server-peers).",
          "Errors: 400 `unknown_owner` when no API key that is not revoked has this `user_id`; 409 `wireguard_subnet_full` when every address is held by an active peer; 503 `wireguard_not_configured` naming the missing keys when WG_SERVER_PUBLIC_KEY or WG_ENDPOINT is not set (listing and revoking still work).",
        ].join("\n\n"),
        body: Type.Object(
          {
            user_id: Type.String({
              minLength: 1,
              maxLength: 200,
              description: "Owner: the `user_id` of one of their API keys.",
            }),
            name: Type.String({
              minLength: 1,
              maxLength: 64,
              pattern: "^[^\\u0000-\\u001F\\u007F]+$",
              description: "Label of the peer (a laptop, a person, a service); one line.",
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            peer: Type.Ref("WireGuardPeer"),
            private_key: Type.String({
              description: "The peer's private key (base64). Shown only in this response; store it now.",
            }),
            client_config: Type.String({
              description:
                "The client's `wg-quick` configuration, with the private key: save it as `/etc/wireguard/<name>.conf` (`wg-quick up <name>`) or import it in a WireGuard app. Shown only in this response.",
            }),
          }),
          409: Type.Ref("Problem"),
        },
      },
    },
    async (request, reply) => {
      if (settings.missing.length > 0) {
        throw new AppError(
          "wireguard_not_configured",
          `WireGuard peers cannot be created on this deployment: set ${settings.missing.join(" and ")} (the server's public key and the host:port clients connect to).`,
          { status: 503 },
        );
      }
      const { user_id: userId, name } = request.body;
      if (!(await need("wireguard").ownerHasKey(userId))) {
        throw new AppError(
          "unknown_owner",
          `user_id ${JSON.stringify(userId)} owns no API key that is not revoked; create a key for the owner first.`,
          { status: 400, details: { user_id: userId } },
        );
      }
      const keys = generateKeyPair();
      const peer = await need("wireguard").create({
        userId,
        name,
        publicKey: keys.publicKey,
        subnet: settings.subnet,
      });
      reply.header("cache-control", "no-store");
      return {
        peer: present(peer),
        private_key: keys.privateKey,
        client_config: renderClientConfig(peer, keys.privateKey, settings),
      };
    },
  );

  app.get(
    "/system/wireguard/peers",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["WireGuard"],
        summary: "List WireGuard peers, newest first",
        description:
          "Peers with their owner, address and state; revoked peers stay listed with `revoked_at` (an address maps to one peer at any moment). `total` counts every match; `page` and `pageSize` echo the request.",
        querystring: Type.Object({
          user_id: Type.Optional(
            Type.String({ minLength: 1, maxLength: 200, description: "Only this owner's peers." }),
          ),
          state: StringEnum(["active", "revoked", "all"], {
            default: "all",
            description: "`active` (not revoked), `revoked`, or `all`.",
          }),
          page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: "1-based page." }),
          pageSize: Type.Integer({ minimum: 1, maximum: 500, default: 100, description: "Peers per page." }),
        }),
        response: {
          200: Type.Object({
            peers: Type.Array(Type.Ref("WireGuardPeer")),
            total: Type.Integer(),
            page: Type.Integer(),
            pageSize: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const { user_id, state, page, pageSize } = request.query;
      const { peers, total } = await need("wireguard").list({
        ...(user_id === undefined ? {} : { userId: user_id }),
        state,
        limit: pageSize,
        offset: (page - 1) * pageSize,
      });
      return { peers: peers.map(present), total, page, pageSize };
    },
  );

  app.get(
    "/system/wireguard/peers/:peerid",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["WireGuard"],
        summary: "Show a WireGuard peer (without its private key, which is not kept)",
        params: PeerIdParams,
        response: { 200: Type.Object({ peer: Type.Ref("WireGuardPeer") }), 404: Type.Ref("Problem") },
      },
    },
    async (request) => {
      const peer = await need("wireguard").get(request.params.peerid);
      if (!peer) {
        throw notFound(`WireGuard peer ${request.params.peerid} not found`, {
          peer_id: request.params.peerid,
        });
      }
      return { peer: present(peer) };
    },
  );

  app.post(
    "/system/wireguard/peers/:peerid/revoke",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["WireGuard"],
        summary: "Revoke a WireGuard peer (dropped from the server's [Peer] sections)",
        description: `Sets \`revoked_at\`; the peer leaves GET /system/wireguard/server-peers at once and loses the tunnel when the server applies them (\`wg syncconf\`). Idempotent: revoking a revoked peer answers 200 with its first \`revoked_at\`. 404 for an unknown peer. A revoked peer cannot be re-activated: create a new one.`,
        params: PeerIdParams,
        body: NoBody,
        response: {
          200: Type.Object({ ok: Type.Boolean(), peer: Type.Ref("WireGuardPeer") }),
          404: Type.Ref("Problem"),
        },
      },
    },
    async (request) => ({ ok: true, peer: present(await need("wireguard").revoke(request.params.peerid)) }),
  );

  app.get(
    "/system/wireguard/server-peers",
    {
      config: { access: "admin", db: "required" },
      schema: {
        tags: ["WireGuard"],
        summary: "The server's [Peer] sections of the active peers, for `wg syncconf`",
        description: `A \`text/plain\` configuration fragment: a comment header, then one [Peer] section per active peer (PublicKey, \`AllowedIPs = <address>/32\`), ordered by address; empty of sections when no peer is active. ${SYNC_USAGE} Works without WG_SERVER_PUBLIC_KEY and WG_ENDPOINT.`,
        response: {
          200: {
            description: "[Peer] sections in `wg` configuration syntax.",
            content: { "text/plain": { schema: Type.String() } },
          },
        },
      },
    },
    async (_request, reply) => {
      const peers = await need("wireguard").listActive();
      reply.type("text/plain; charset=utf-8").header("cache-control", "no-store");
      return renderServerPeers(peers, settings);
    },
  );
}
