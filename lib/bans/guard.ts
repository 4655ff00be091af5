/**
 * The bans one API process enforces, kept in memory: loaded at start, then reloaded every
 * BANS_REFRESH_MS, so a ban added or lifted through another process (another API replica, the bot)
 * applies here within that delay (plus one query). A change made through this guard reloads at once.
 * IP ranges are matched with `net.BlockList`; an expiry is checked at match time, so an expired ban
 * stops applying without waiting for a reload. A failed reload keeps the last bans (and logs).
 */
import { BlockList } from "node:net";
import type { Logger } from "../logger.ts";
import { clientAddress, parseIpRange } from "../net.ts";
import type { Ban, BansRepo, NewBan } from "./repo.ts";

interface Entry {
  ban: Ban;
  /** Unix ms; Infinity without an expiry. */
  expiresMs: number;
  /** IP bans: a list holding this ban's range alone (to name the ban that matched). */
  list?: BlockList;
}

export interface BanGuard {
  /** The ban that applies to a client address now, or null. */
  matchIp(ip: string): Ban | null;
  /** The ban that applies to a key owner now, or null. */
  matchUser(userId: string): Ban | null;
  /** Adds a ban through the repository; applies in this process at once. */
  add(input: NewBan): Promise<Ban>;
  /** Lifts a ban; applies in this process at once. Null when the id is unknown. */
  lift(banId: string, by: string): Promise<Ban | null>;
  /** Reloads the active bans now. */
  refresh(): Promise<void>;
  /** Loads the bans and starts the periodic reload (idempotent). */
  start(): Promise<void>;
  /** Stops the periodic reload. */
  close(): void;
}

export interface BanGuardOptions {
  repo: BansRepo;
  refreshMs: number;
  log: Logger;
  now?: () => number;
}

export function createBanGuard(options: BanGuardOptions): BanGuard {
  const { repo, log } = options;
  const now = options.now ?? Date.now;
  let all = new BlockList();
  let ips: Entry[] = [];
  let users = new Map<string, Entry[]>();
  let signature = "";
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;

  const install = (bans: Ban[]) => {
    const sig = bans
      .map((b) => `${b.ban_id}:${b.expires_at ?? ""}`)
      .sort()
      .join(",");
    if (sig === signature) return;
    const nextAll = new BlockList();
    const nextIps: Entry[] = [];
    const nextUsers = new Map<string, Entry[]>();
    for (const ban of bans) {
      const entry: Entry = { ban, expiresMs: ban.expires_at ? Date.parse(ban.expires_at) : Infinity };
      if (ban.kind === "ip") {
        const range = parseIpRange(ban.value);
        if (typeof range === "string") {
          log.warn({ ban_id: ban.ban_id, value: ban.value }, "Ban value is not an IP range; ignored.");
          continue;
        }
        entry.list = new BlockList();
        entry.list.addSubnet(range.network, range.prefix, range.family);
        nextAll.addSubnet(range.network, range.prefix, range.family);
        nextIps.push(entry);
      } else if (ban.kind === "user") {
        const list = nextUsers.get(ban.value) ?? [];
        list.push(entry);
        nextUsers.set(ban.value, list);
      }
    }
    all = nextAll;
    ips = nextIps;
    users = nextUsers;
    signature = sig;
  };

  const load = async () => {
    install(await repo.active());
  };
  const refresh = (): Promise<void> => {
    // Concurrent callers share one reload; a change made meanwhile gets a reload of its own after it.
    if (!inFlight) {
      inFlight = load().finally(() => {
        inFlight = null;
      });
    }
    return inFlight;
  };
  const refreshAfterChange = async () => {
    if (inFlight) await inFlight.catch(() => undefined);
    await refresh();
  };
  const live = (entries: Entry[] | undefined) => {
    const t = now();
    return entries?.find((e) => e.expiresMs > t)?.ban ?? null;
  };

  return {
    matchIp(ip) {
      const client = clientAddress(ip);
      if (!client || !all.check(client.address, client.family)) return null;
      return live(ips.filter((e) => e.list!.check(client.address, client.family)));
    },
    matchUser: (userId) => live(users.get(userId)),
    async add(input) {
      const ban = await repo.add(input);
      await refreshAfterChange();
      return ban;
    },
    async lift(banId, by) {
      const ban = await repo.lift(banId, by);
      if (ban) await refreshAfterChange();
      return ban;
    },
    refresh,
    async start() {
      if (timer) return;
      timer = setInterval(() => {
        refresh().catch((error) =>
          log.warn({ err: error }, "Bans reload failed; the last bans still apply."),
        );
      }, options.refreshMs);
      timer.unref();
      await refresh().catch((error) =>
        log.error({ err: error }, "Bans could not be loaded; retried every BANS_REFRESH_MS."),
      );
    },
    close() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
