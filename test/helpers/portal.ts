/**
 * The admin portal under test: the API listening on a local port with portal sign-in configured, and the
 * local identity provider (devnet/identity-provider.ts, oidc-provider) as its issuer. `signIn` walks the
 * authorization code flow over HTTP as a browser would (the browser test does it in chromium).
 */
import type { AddressInfo } from "node:net";
import {
  DEMO_ADMIN_EMAIL,
  DEMO_PASSWORD,
  type IdentityProvider,
  startIdentityProvider,
} from "../../devnet/identity-provider.ts";
import { buildPortal } from "../../scripts/portal-build.ts";
import { createTestApp, type TestApp, type TestAppOptions } from "./app.ts";

export const PORTAL_CLIENT = { id: "portal-test", secret: "portal-test-secret-0123456789" };

export interface PortalTest extends TestApp {
  /** http://127.0.0.1:<port> of the API. */
  base: string;
  idp: IdentityProvider;
}

export async function startPortalTest(options: TestAppOptions = {}): Promise<PortalTest> {
  // The pages are built on demand (as `npm run demo` does): a fresh clone needs no separate step.
  await buildPortal();
  const idp = await startIdentityProvider({ clientId: PORTAL_CLIENT.id, clientSecret: PORTAL_CLIENT.secret });
  const t = await createTestApp({
    ...options,
    env: {
      PUBLIC_RPM: "1000000",
      PORTAL_OIDC_ISSUER: idp.issuer,
      PORTAL_OIDC_CLIENT_ID: PORTAL_CLIENT.id,
      PORTAL_OIDC_CLIENT_SECRET: PORTAL_CLIENT.secret,
      PORTAL_ADMIN_EMAILS: DEMO_ADMIN_EMAIL,
      PORTAL_SESSION_SECRET: "a-test-session-secret-of-32-characters!",
      ...options.env,
    },
  });
  await t.app.listen({ host: "127.0.0.1", port: 0 });
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const stage = t.deps.config.STAGE;
  idp.setRedirectUris([`${base}/portal/callback`, `${base}/${stage}/portal/callback`]);
  return {
    ...t,
    base,
    idp,
    async close() {
      await t.close();
      await idp.close();
    },
  };
}

/** A minimal cookie jar per origin, for walking redirects with fetch. */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();
  header(url: string): string {
    const jar = this.jars.get(new URL(url).origin);
    return jar ? [...jar].map(([k, v]) => `${k}=${v}`).join("; ") : "";
  }
  store(url: string, response: Response): void {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (value === "" || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    this.jars.set(origin, jar);
  }
  get(url: string, name: string): string | undefined {
    return this.jars.get(new URL(url).origin)?.get(name);
  }
  set(url: string, name: string, value: string): void {
    const origin = new URL(url).origin;
    const jar = this.jars.get(origin) ?? new Map<string, string>();
    jar.set(name, value);
    this.jars.set(origin, jar);
  }
}

/** Fetches with the jar, following redirects by hand (cookies are kept at every hop). */
export async function browse(
  jar: CookieJar,
  url: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ url: string; response: Response }> {
  let current = url;
  let method = init.method ?? "GET";
  let body = init.body;
  let headers = init.headers ?? {};
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(current, {
      method,
      body,
      redirect: "manual",
      headers: { ...headers, cookie: jar.header(current) },
    });
    jar.store(current, response);
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location) return { url: current, response };
    current = new URL(location, current).href;
    method = "GET";
    body = undefined;
    headers = {};
  }
  throw new Error(`too many redirects from ${url}`);
}

/** Signs in at the identity provider as `email`; ends where the portal's callback leads. */
export async function signIn(
  t: PortalTest,
  jar: CookieJar,
  email = DEMO_ADMIN_EMAIL,
  password = DEMO_PASSWORD,
): Promise<{ url: string; response: Response }> {
  const form = await browse(jar, `${t.base}/${t.deps.config.STAGE}/portal/login`);
  if (!form.url.includes("/interaction/")) throw new Error(`expected the sign-in form, got ${form.url}`);
  await form.response.text();
  return browse(jar, `${form.url}/login`, {
    method: "POST",
    body: new URLSearchParams({ login: email, password }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}
