// Test passes: embedded and server (address allocation under concurrent creates from two connection pools on PostgreSQL).
/**
 * WireGuard peers: creation with the client configuration shown once, address allocation under
 * concurrent creates from two API instances on one database (two connection pools on PostgreSQL),
 * revocation, a full subnet, the routes' error cases, and keys and configurations checked by Debian's
 * wireguard-tools (`wg pubkey`, `wg-quick strip`).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../lib/config.ts";
import { parseIpv4 } from "../../lib/net.ts";
import { createPostgres } from "../../lib/stores/postgres.ts";
import { generateKeyPair } from "../../lib/wireguard/keys.ts";
import { createTestApp, type TestApp } from "../helpers/app.ts";
import { openTestCh, openTestPg, quietLog, type TestCh, type TestPg } from "../helpers/stores.ts";

const hasTool = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return r.error === undefined && r.status === 0;
};
const WG_TOOLS = hasTool("wg", ["--version"]) && hasTool("bash", ["-c", "command -v wg-quick"]);
if (!WG_TOOLS)
  console.warn(
    "[skip notice] WireGuard keys and configurations through wireguard-tools: `wg` or `wg-quick` is not installed (apt-get install wireguard-tools; .ci/run installs it)",
  );

const SERVER = generateKeyPair();
const WG_ENV = {
  WG_SERVER_PUBLIC_KEY: SERVER.publicKey,
  WG_ENDPOINT: "vpn.example.com:51820",
  WG_DNS: "10.87.0.1",
};

interface PeerBody {
  peer_id: string;
  user_id: string;
  name: string;
  public_key: string;
  address: string;
  active: boolean;
  created_at: string;
  revoked_at: string | null;
}
interface Created {
  peer: PeerBody;
  private_key: string;
  client_config: string;
}

/** `Key = value` lines of a wg configuration, by section. */
function sections(text: string): { name: string; keys: Record<string, string> }[] {
  const out: { name: string; keys: Record<string, string> }[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const section = /^\[(\w+)\]$/.exec(line);
    if (section) out.push({ name: section[1] ?? "", keys: {} });
    else {
      const [k, ...v] = line.split("=");
      const last = out.at(-1);
      if (!last) throw new Error(`line outside a section: ${line}`);
      last.keys[(k ?? "").trim()] = v.join("=").trim();
    }
  }
  return out;
}

describe("WireGuard peers", () => {
  let pg: TestPg;
  let ch: TestCh;
  let second: TestPg;
  let a: TestApp;
  let b: TestApp;
  let off: TestApp;
  let dir = "";

  beforeAll(async () => {
    pg = await openTestPg();
    ch = await openTestCh();
    // A second API process: its own connection pool on the same PostgreSQL database (PGlite: the same store).
    second = pg.url
      ? {
          pg: await createPostgres({ url: pg.url, dataDir: "", poolSize: 5, log: quietLog }),
          url: pg.url,
          close: async () => undefined,
        }
      : pg;
    a = await createTestApp({ stores: { pg, ch }, env: WG_ENV });
    b = await createTestApp({ stores: { pg: second, ch }, env: WG_ENV });
    off = await createTestApp({ stores: { pg, ch } });
    await a.deps.keys!.createKey({ userId: "acme", planId: "enterprise", level: "user" });
    dir = mkdtempSync(join(tmpdir(), "wg-test-"));
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await off?.close();
    if (second && second !== pg) await second.pg.close();
    await pg?.close();
    await ch?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const create = (t: TestApp, body: Record<string, unknown>) =>
    t.app.inject({
      method: "POST",
      url: "/system/wireguard/peers",
      headers: t.auth(t.adminKey),
      payload: body,
    });
  const serverPeers = async (t: TestApp) => {
    const r = await t.app.inject({ url: "/system/wireguard/server-peers", headers: t.auth(t.adminKey) });
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toMatch(/^text\/plain/);
    return r.body;
  };

  it("creates a peer and returns its client configuration once", async () => {
    const r = await create(a, { user_id: "acme", name: "laptop of ada" });
    expect(r.statusCode).toBe(200);
    expect(r.headers["cache-control"]).toBe("no-store");
    const body = r.json() as Created;
    expect(body.peer).toMatchObject({
      user_id: "acme",
      name: "laptop of ada",
      active: true,
      revoked_at: null,
    });
    expect(body.peer.address).toBe("10.87.0.2");
    expect(body.private_key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(body.peer.public_key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    const [iface, peer] = sections(body.client_config);
    expect(iface).toEqual({
      name: "Interface",
      keys: { PrivateKey: body.private_key, Address: "10.87.0.2/32", DNS: "10.87.0.1" },
    });
    expect(peer).toEqual({
      name: "Peer",
      keys: {
        PublicKey: SERVER.publicKey,
        Endpoint: "vpn.example.com:51820",
        AllowedIPs: "10.87.0.0/24",
        PersistentKeepalive: "25",
      },
    });

    // Never stored, never shown again.
    const rows = await pg.pg.query("test_wg_row", "SELECT * FROM wireguard_peers WHERE peer_id = $1", [
      body.peer.peer_id,
    ]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(body.private_key);
    const shown = await a.app.inject({
      url: `/system/wireguard/peers/${body.peer.peer_id}`,
      headers: a.auth(a.adminKey),
    });
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toEqual({ peer: body.peer });
    expect(shown.body).not.toContain(body.private_key);
    expect(await serverPeers(a)).toContain(`PublicKey = ${body.peer.public_key}\nAllowedIPs = 10.87.0.2/32`);
  });

  it("gives distinct addresses to concurrent creates from two API instances", async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        create(i % 2 === 0 ? a : b, { user_id: "acme", name: `peer ${i}` }),
      ),
    );
    expect(replies.map((r) => r.statusCode)).toEqual(Array(40).fill(200));
    const addresses = replies.map((r) => (r.json() as Created).peer.address);
    expect(new Set(addresses).size).toBe(40);
    for (const address of addresses) {
      const n = parseIpv4(address);
      expect(n, address).not.toBeNull();
      // Inside 10.87.0.0/24, past the network address and the server's 10.87.0.1, before the broadcast address.
      expect(n! - parseIpv4("10.87.0.0")!, address).toBeGreaterThanOrEqual(2);
      expect(n! - parseIpv4("10.87.0.0")!, address).toBeLessThanOrEqual(254);
    }
    expect(addresses).not.toContain("10.87.0.2"); // the first test's peer keeps it
    const keys = replies.map((r) => (r.json() as Created).peer.public_key);
    expect(new Set(keys).size).toBe(40);
    const listed = await b.app.inject({
      url: "/system/wireguard/peers?user_id=acme&state=active&pageSize=500",
      headers: b.auth(b.adminKey),
    });
    expect(listed.json().total).toBe(41);
  });

  it("revokes a peer: gone from the server's sections, listed as revoked, idempotent", async () => {
    const created = (await create(a, { user_id: "acme", name: "to revoke" })).json() as Created;
    expect(await serverPeers(a)).toContain(created.peer.public_key);
    const revoke = () =>
      b.app.inject({
        method: "POST",
        url: `/system/wireguard/peers/${created.peer.peer_id}/revoke`,
        headers: b.auth(b.adminKey),
      });
    const first = await revoke();
    expect(first.statusCode).toBe(200);
    expect(first.json().peer).toMatchObject({ active: false, address: created.peer.address });
    expect(first.json().peer.revoked_at).toEqual(expect.any(String));
    const again = await revoke();
    expect(again.statusCode).toBe(200);
    expect(again.json().peer.revoked_at).toBe(first.json().peer.revoked_at);

    const text = await serverPeers(a);
    expect(text).not.toContain(created.peer.public_key);
    expect(text.match(/^\[Peer\]$/gm)).toHaveLength(41);
    const list = async (query: string) =>
      (
        await a.app.inject({ url: `/system/wireguard/peers?${query}`, headers: a.auth(a.adminKey) })
      ).json() as { peers: PeerBody[]; total: number };
    const revoked = await list("state=revoked");
    expect(revoked.peers.map((p) => p.peer_id)).toEqual([created.peer.peer_id]);
    expect((await list("state=active&pageSize=500")).peers.map((p) => p.peer_id)).not.toContain(
      created.peer.peer_id,
    );
    const all = await list("pageSize=10&page=1");
    expect(all.total).toBe(42);
    expect(all.peers).toHaveLength(10);
    // Newest first.
    expect(all.peers[0]?.peer_id).toBe(created.peer.peer_id);
    expect((await list("pageSize=10&page=5")).peers).toHaveLength(2);
    expect((await list("user_id=nobody")).total).toBe(0);
  });

  it("hands out new addresses before reusing revoked ones, and answers 409 on a full subnet", async () => {
    // 10.99.0.0/29: the server takes .1, peers .2 to .6 (.7 is the broadcast address).
    const small = await createTestApp({ stores: { pg, ch }, env: { ...WG_ENV, WG_SUBNET: "10.99.0.0/29" } });
    try {
      const make = async () => {
        const r = await create(small, { user_id: "acme", name: "small" });
        return { status: r.statusCode, body: r.json() };
      };
      const revoke = (id: string) =>
        small.app.inject({
          method: "POST",
          url: `/system/wireguard/peers/${id}/revoke`,
          headers: small.auth(small.adminKey),
        });
      const p2 = (await make()).body as Created;
      const p3 = (await make()).body as Created;
      expect([p2.peer.address, p3.peer.address]).toEqual(["10.99.0.2", "10.99.0.3"]);
      expect((await revoke(p3.peer.peer_id)).statusCode).toBe(200);
      const next = [];
      for (let i = 0; i < 4; i++) next.push(((await make()).body as Created).peer.address);
      // .3 comes back only after .4, .5 and .6 have been handed out.
      expect(next).toEqual(["10.99.0.4", "10.99.0.5", "10.99.0.6", "10.99.0.3"]);
      const full = await make();
      expect(full.status).toBe(409);
      expect(full.body).toMatchObject({ code: "wireguard_subnet_full" });
      expect(full.body.detail).toContain("10.99.0.0/29");
      // The /29 peers' client configuration routes the small subnet.
      expect(p2.client_config).toContain("AllowedIPs = 10.99.0.0/29");
    } finally {
      await small.close();
    }
  });

  it("refuses unknown owners, bad input, missing keys and user keys", async () => {
    const unknown = await create(a, { user_id: "nobody", name: "x" });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({ code: "unknown_owner" });
    expect(unknown.json().detail).toContain("nobody");
    // An owner whose only key is revoked is not a key owner any more.
    const gone = await a.deps.keys!.createKey({ userId: "former", planId: "pro", level: "user" });
    await a.deps.keys!.revoke(gone.keyId);
    expect((await create(a, { user_id: "former", name: "x" })).json()).toMatchObject({
      code: "unknown_owner",
    });

    const bad: [Record<string, unknown>, string][] = [
      [{ name: "x" }, "/user_id"],
      [{ user_id: "acme" }, "/name"],
      [{ user_id: "acme", name: "" }, "/name"],
      [{ user_id: "acme", name: "two\nlines" }, "/name"],
      [{ user_id: "acme", name: "x", private_key: "k" }, "/private_key"],
    ];
    for (const [payload, path] of bad) {
      const r = await create(a, payload);
      expect(r.statusCode, JSON.stringify(payload)).toBe(400);
      expect(r.json().errors[0].path).toBe(path);
    }
    const badQuery = await a.app.inject({
      url: "/system/wireguard/peers?state=gone",
      headers: a.auth(a.adminKey),
    });
    expect(badQuery.statusCode).toBe(400);
    expect(badQuery.json().detail).toContain("state");

    const routes = [
      { method: "POST" as const, url: "/system/wireguard/peers", payload: { user_id: "acme", name: "x" } },
      { method: "GET" as const, url: "/system/wireguard/peers" },
      { method: "GET" as const, url: "/system/wireguard/server-peers" },
      { method: "GET" as const, url: `/system/wireguard/peers/${crypto.randomUUID()}` },
      { method: "POST" as const, url: `/system/wireguard/peers/${crypto.randomUUID()}/revoke` },
    ];
    for (const route of routes) {
      expect((await a.app.inject(route)).statusCode, `${route.url} without a key`).toBe(401);
      const user = await a.app.inject({ ...route, headers: a.auth(a.userKey) });
      expect(user.statusCode, `${route.url} with a user key`).toBe(403);
    }
    for (const route of routes.slice(3)) {
      const r = await a.app.inject({ ...route, headers: a.auth(a.adminKey) });
      expect(r.statusCode, route.url).toBe(404);
      expect(r.json().code).toBe("not_found");
    }
    const notUuid = await a.app.inject({ url: "/system/wireguard/peers/x1", headers: a.auth(a.adminKey) });
    expect(notUuid.statusCode).toBe(400);
    expect(notUuid.json().detail).toContain("peerid");
  });

  it("answers 503 naming the missing keys when the server is not configured; list and revoke still work", async () => {
    const r = await create(off, { user_id: "acme", name: "x" });
    expect(r.statusCode).toBe(503);
    expect(r.json().code).toBe("wireguard_not_configured");
    expect(r.json().detail).toContain("WG_SERVER_PUBLIC_KEY");
    expect(r.json().detail).toContain("WG_ENDPOINT");
    const list = await off.app.inject({ url: "/system/wireguard/peers", headers: off.auth(off.adminKey) });
    expect(list.statusCode).toBe(200);
    const target = (list.json() as { peers: PeerBody[] }).peers.find((p) => p.active)!;
    const revoked = await off.app.inject({
      method: "POST",
      url: `/system/wireguard/peers/${target.peer_id}/revoke`,
      headers: off.auth(off.adminKey),
      payload: {},
    });
    expect(revoked.statusCode).toBe(200);
    expect(await serverPeers(off)).not.toContain(target.public_key);

    const endpointOnly = await createTestApp({
      stores: { pg, ch },
      env: { WG_ENDPOINT: "vpn.example.com:51820" },
    });
    try {
      const one = await create(endpointOnly, { user_id: "acme", name: "x" });
      expect(one.statusCode).toBe(503);
      expect(one.json().detail).toContain("WG_SERVER_PUBLIC_KEY");
      expect(one.json().detail).not.toContain("WG_ENDPOINT");
    } finally {
      await endpointOnly.close();
    }
  });

  it("refuses bad WireGuard settings at start, naming the key", () => {
    const bad: Record<string, string>[] = [
      { WG_SERVER_PUBLIC_KEY: "not-a-key" },
      { WG_SERVER_PUBLIC_KEY: `${SERVER.publicKey.slice(0, 42)}B=` },
      { WG_ENDPOINT: "vpn.example.com" },
      { WG_ENDPOINT: "vpn.example.com:70000" },
      { WG_ENDPOINT: "[zz::1]:51820" },
      { WG_SUBNET: "10.87.0.0/31" },
      { WG_SUBNET: "10.87.0.300/24" },
      { WG_SUBNET: "fd00::/64" },
      { WG_ALLOWED_IPS: "10.0.0.0/33" },
      { WG_DNS: "1.1.1.1\nPostUp = rm -rf /" },
    ];
    for (const env of bad) {
      const [key] = Object.keys(env);
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(new RegExp(`Invalid configuration ${key}=`));
    }
    const good = loadConfig({
      WG_SERVER_PUBLIC_KEY: SERVER.publicKey,
      WG_ENDPOINT: "[2001:db8::1]:51820",
      WG_SUBNET: "10.40.8.0/22",
      WG_ALLOWED_IPS: "10.40.8.0/22, fd00::/64",
      WG_DNS: "10.40.8.1, internal.example",
      WG_PERSISTENT_KEEPALIVE: "0",
    });
    expect(good.WG_SUBNET).toBe("10.40.8.0/22");
  });

  it("keeps an owner's user_id with line breaks inside the comments of both texts", async () => {
    const owner = "evil\n[Peer]\nPublicKey = x\rAllowedIPs = 0.0.0.0/0";
    await a.deps.keys!.createKey({ userId: owner, planId: "pro", level: "user" });
    const r = await create(a, { user_id: owner, name: "ok" });
    expect(r.statusCode).toBe(200);
    const body = r.json() as Created;
    expect(body.peer.user_id).toBe(owner);
    expect(sections(body.client_config).map((s) => s.name)).toEqual(["Interface", "Peer"]);
    expect(sections(body.client_config)[1]?.keys.AllowedIPs).toBe("10.87.0.0/24");
    expect(body.client_config.split("\n")[0]).toMatch(/^# .*evil\?\[Peer\]\?PublicKey = x\?AllowedIPs/);
    const server = sections(await serverPeers(a));
    const active = (
      await a.app.inject({
        url: "/system/wireguard/peers?state=active&pageSize=500",
        headers: a.auth(a.adminKey),
      })
    ).json() as { total: number };
    expect(server).toHaveLength(active.total);
    expect(server.every((s) => s.name === "Peer" && Object.keys(s.keys).length === 2)).toBe(true);
  });

  it.skipIf(!WG_TOOLS)(
    "keys and configurations pass wireguard-tools (wg pubkey, wg-quick strip)",
    async () => {
      const created = (await create(a, { user_id: "acme", name: 'tools "test" ]\n' })).statusCode;
      expect(created).toBe(400); // a name is one line
      const r = await create(a, { user_id: "acme", name: "tools [test] # = check" });
      expect(r.statusCode).toBe(200);
      const body = r.json() as Created;
      const pubkey = spawnSync("wg", ["pubkey"], { input: `${body.private_key}\n`, encoding: "utf8" });
      expect(pubkey.status, pubkey.stderr).toBe(0);
      expect(pubkey.stdout.trim()).toBe(body.peer.public_key);
      const serverPub = spawnSync("wg", ["pubkey"], { input: `${SERVER.privateKey}\n`, encoding: "utf8" });
      expect(serverPub.stdout.trim()).toBe(SERVER.publicKey);

      // `wg setconf` accepts only these keys; wg-quick strip removes the wg-quick ones (Address, DNS ...).
      const WG_KEYS = {
        Interface: ["PrivateKey", "ListenPort", "FwMark"],
        Peer: ["PublicKey", "PresharedKey", "AllowedIPs", "Endpoint", "PersistentKeepalive"],
      };
      const strip = (name: string, text: string) => {
        const file = join(dir, `${name}.conf`);
        writeFileSync(file, text, { mode: 0o600 });
        const out = spawnSync("wg-quick", ["strip", file], { encoding: "utf8" });
        expect(out.status, out.stderr).toBe(0);
        const parsed = sections(out.stdout);
        for (const s of parsed) {
          expect(Object.keys(WG_KEYS)).toContain(s.name);
          for (const key of Object.keys(s.keys)) expect(WG_KEYS[s.name as "Peer"]).toContain(key);
        }
        return parsed;
      };
      const client = strip("wgtest0", body.client_config);
      expect(client).toEqual([
        { name: "Interface", keys: { PrivateKey: body.private_key } },
        {
          name: "Peer",
          keys: {
            PublicKey: SERVER.publicKey,
            Endpoint: "vpn.example.com:51820",
            AllowedIPs: "10.87.0.0/24",
            PersistentKeepalive: "25",
          },
        },
      ]);

      // The server's sections after an [Interface] of the server, as docs/wireguard.md's `wg syncconf` line applies them.
      const peers = await serverPeers(a);
      const server = strip(
        "wgtest1",
        `[Interface]\nPrivateKey = ${SERVER.privateKey}\nListenPort = 51820\nAddress = 10.87.0.1/24\n\n${peers}`,
      );
      const active = (
        await a.app.inject({
          url: "/system/wireguard/peers?state=active&pageSize=500",
          headers: a.auth(a.adminKey),
        })
      ).json() as { peers: PeerBody[] };
      expect(server[0]).toEqual({
        name: "Interface",
        keys: { PrivateKey: SERVER.privateKey, ListenPort: "51820" },
      });
      expect(
        server
          .slice(1)
          .map((s) => `${s.keys.PublicKey} ${s.keys.AllowedIPs}`)
          .sort(),
      ).toEqual(active.peers.map((p) => `${p.public_key} ${p.address}/32`).sort());
      expect(server.slice(1).map((s) => s.keys.PublicKey)).toContain(body.peer.public_key);
    },
  );
});
