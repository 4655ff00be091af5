/**
 * Calls from the pages: `api/<route>` is the portal's endpoint that calls the API route with the
 * session's admin key attached server-side; state-changing calls carry the session's CSRF token.
 */
let csrfToken = "";

export interface Session {
  subject: string;
  email: string | null;
  created_at: string;
  expires_at: string;
  csrf_token: string;
}

/** A refused call: the API's problem body (status, code, detail). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

async function parse(response: Response): Promise<unknown> {
  const type = response.headers.get("content-type") ?? "";
  const body: unknown = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    const p = (typeof body === "object" && body ? body : {}) as {
      code?: string;
      detail?: string;
      title?: string;
    };
    throw new ApiError(response.status, p.code ?? "error", p.detail ?? p.title ?? `HTTP ${response.status}`);
  }
  return body;
}

/** The signed-in session, or null (not signed in; answered 200 so that the browser logs no failed request). */
export async function loadSession(): Promise<Session | null> {
  const response = await fetch("session-state", { credentials: "same-origin" });
  const state = (await parse(response)) as { signed_in: boolean; session?: Session };
  if (!state.signed_in || !state.session) return null;
  csrfToken = state.session.csrf_token;
  return state.session;
}

/** An API route through the portal: `call("GET", "system/keys")`. */
export async function call<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const headers: Record<string, string> = {};
  if (method !== "GET") headers["x-csrf-token"] = csrfToken;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`api/${path}`, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await parse(response)) as T;
}

export async function portalGet<T>(path: string): Promise<T> {
  return (await parse(await fetch(path, { credentials: "same-origin" }))) as T;
}

export async function signOut(): Promise<void> {
  await parse(await fetch("logout", { method: "POST", headers: { "x-csrf-token": csrfToken } }));
}
