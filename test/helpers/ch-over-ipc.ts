/**
 * The test's chDB reached from child processes: chDB opens a data directory in one process only and CI has no
 * ClickHouse server, so processes that must share one database (processor replicas killed with SIGKILL) send their
 * `Ch` calls over the Node IPC channel to the process that holds chDB, which runs them on the real engine and
 * answers. A call is one message, sent whole or not at all: a child killed mid-call leaves its last statement
 * either unsent or run, as a ClickHouse server would after a client died with its request sent.
 */
import type { ChildProcess } from "node:child_process";
import { AppError } from "../../lib/errors.ts";
import type { Ch, ChParams, RawQueryOptions } from "../../lib/stores/clickhouse.ts";

type Call =
  | { op: "query"; label: string; sql: string; params?: ChParams }
  | { op: "queryRaw"; label: string; sql: string; options: RawQueryOptions }
  | { op: "command"; label: string; sql: string; params?: ChParams }
  | { op: "insert"; label: string; table: string; rows: readonly object[] };

interface Request {
  t: "ch";
  id: number;
  call: Call;
}

interface Reply {
  t: "ch";
  id: number;
  value?: unknown;
  error?: {
    code: string;
    message: string;
    status: number;
    retryable: boolean;
    details?: Record<string, unknown>;
  };
}

const isRequest = (m: unknown): m is Request =>
  typeof m === "object" && m !== null && (m as Request).t === "ch" && "call" in m;
const isReply = (m: unknown): m is Reply =>
  typeof m === "object" && m !== null && (m as Reply).t === "ch" && !("call" in m);

/** Serves a child's calls on `ch`; `calls` counts what it sent. Replies to a child that died are dropped. */
export function serveChOverIpc(child: ChildProcess, ch: Ch): { calls: () => number } {
  let calls = 0;
  child.on("message", async (m: unknown) => {
    if (!isRequest(m)) return;
    calls++;
    const { call } = m;
    let reply: Reply;
    try {
      const value =
        call.op === "query"
          ? await ch.query(call.label, call.sql, call.params)
          : call.op === "queryRaw"
            ? await ch.queryRaw(call.label, call.sql, call.options)
            : call.op === "command"
              ? await ch.command(call.label, call.sql, call.params)
              : await ch.insert(call.label, call.table, call.rows);
      reply = { t: "ch", id: m.id, value };
    } catch (error) {
      const e = error instanceof AppError ? error : new AppError("clickhouse_error", String(error));
      reply = {
        t: "ch",
        id: m.id,
        error: {
          code: e.code,
          message: e.message,
          status: e.status,
          retryable: e.retryable,
          details: e.details,
        },
      };
    }
    if (child.connected) child.send(reply, (error) => void error);
  });
  return { calls: () => calls };
}

/** The `Ch` of a child process: every call goes to the parent (`serveChOverIpc`). */
export function chOverIpc(database: string): Ch {
  if (!process.send) throw new Error("chOverIpc needs an IPC channel (a process started with fork)");
  const send = process.send.bind(process);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let next = 0;
  process.on("message", (m: unknown) => {
    if (!isReply(m)) return;
    const waiter = pending.get(m.id);
    if (!waiter) return;
    pending.delete(m.id);
    if (m.error)
      waiter.reject(
        new AppError(m.error.code, m.error.message, {
          status: m.error.status,
          retryable: m.error.retryable,
          details: m.error.details,
        }),
      );
    else waiter.resolve(m.value);
  });
  const call = <T>(c: Call) =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      send({ t: "ch", id, call: c } satisfies Request, (error: Error | null) => {
        if (!error) return;
        pending.delete(id);
        reject(new AppError("clickhouse_unavailable", "The parent process is gone", { retryable: true }));
      });
    });
  return {
    kind: "chdb",
    database,
    query: <T>(label: string, sql: string, params?: ChParams) =>
      call<T[]>({ op: "query", label, sql, params }),
    queryRaw: async (label, sql, options) =>
      Buffer.from(await call<Uint8Array>({ op: "queryRaw", label, sql, options })),
    command: (label, sql, params) => call<void>({ op: "command", label, sql, params }),
    insert: (label, table, rows) => call<void>({ op: "insert", label, table, rows }),
    close: async () => undefined,
  };
}
