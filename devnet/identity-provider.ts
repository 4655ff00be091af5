/**
 * A local OpenID Connect identity provider for the offline demo and the portal's tests: `oidc-provider`
 * (a certified OpenID provider implementation) with a password sign-in page and two accounts, one on the
 * demo's allow-list and one not. It plays the operator's real provider (Google, Entra ID, Keycloak ...).
 * The relying party side (lib/portal/oidc.ts) does not know it talks to a stand-in.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Configuration } from "oidc-provider";

/** The demo's password, for both accounts (docs/portal.md). */
export const DEMO_PASSWORD = "portal-demo";

export interface DemoAccount {
  id: string;
  email: string;
  name: string;
}

/** `admin@demo.local` is on the demo's allow-list; `visitor@demo.local` is not. */
export const DEMO_ACCOUNTS: DemoAccount[] = [
  { id: "demo-admin", email: "admin@demo.local", name: "Demo admin" },
  { id: "demo-visitor", email: "visitor@demo.local", name: "Demo visitor" },
];
export const DEMO_ADMIN_EMAIL = "admin@demo.local";

export interface IdentityProviderOptions {
  /** 0 picks a free port. */
  port?: number;
  clientId: string;
  clientSecret: string;
  /**
   * The relying party's callback URLs (exact match, as OpenID Connect requires); may be given later with
   * `setRedirectUris` (a test's API listens on a port known after the provider's issuer is).
   */
  redirectUris?: string[];
}

export interface IdentityProvider {
  /** The issuer URL (PORTAL_OIDC_ISSUER). */
  issuer: string;
  /** Registers the client's callback URLs (the provider answers 503 until some are given). */
  setRedirectUris(uris: string[]): void;
  close(): Promise<void>;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function loginPage(uid: string, error: string | null, login = ""): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Demo identity provider</title></head>
<body style="font-family:sans-serif;max-width:28rem;margin:4rem auto">
<h1>Demo identity provider</h1>
<p>Sign in to the Alephium API portal. Demo accounts: <code>admin@demo.local</code> (an admin) and
<code>visitor@demo.local</code> (not on the allow-list), password <code>${DEMO_PASSWORD}</code>.</p>
${error ? `<p role="alert" style="color:#b00">${esc(error)}</p>` : ""}
<form method="post" action="/interaction/${esc(uid)}/login">
<p><label>E-mail <input name="login" type="email" autocomplete="username" value="${esc(login)}" required autofocus></label></p>
<p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
<p><button type="submit">Sign in</button></p>
</form></body></html>`;
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 16_384) throw new Error("form too large");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

export async function startIdentityProvider(options: IdentityProviderOptions): Promise<IdentityProvider> {
  // Loaded here, not at import: oidc-provider warns about Node 20 on stderr as it loads, and every CLI command
  // imports this module (for the demo accounts), not only the demo's start.
  const { default: Provider } = await import("oidc-provider");
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  const server = createServer((req, res) => {
    if (handle) handle(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const byId = new Map(DEMO_ACCOUNTS.map((a) => [a.id, a]));
  const cookieKey = randomBytes(32).toString("hex");
  // A signing key of its own per start (ID tokens are verified by the relying party through the JWKS).
  const signingKey = {
    ...generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" }),
    kid: randomBytes(8).toString("hex"),
    use: "sig",
    alg: "RS256",
  };
  const configure = (redirectUris: string[]): Configuration => ({
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: redirectUris,
        response_types: ["code"],
        grant_types: ["authorization_code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    async findAccount(_ctx, id) {
      const account = byId.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({ sub: id, email: account.email, email_verified: true, name: account.name }),
      };
    },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    // Short lifetimes, given explicitly (the defaults print a notice on every use).
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      IdToken: 600,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
    },
    cookies: { keys: [cookieKey] },
    jwks: { keys: [signingKey as never] },
    // A first-party client: the grant is given at sign-in, with no consent screen.
    async loadExistingGrant(ctx) {
      const oidc = ctx.oidc;
      const accountId = oidc.session?.accountId;
      if (!oidc.client || !accountId) return undefined;
      const grantId = oidc.result?.consent?.grantId ?? oidc.session?.grantIdFor(oidc.client.clientId);
      if (grantId) {
        const existing = await oidc.provider.Grant.find(grantId);
        if (existing) return existing;
      }
      const grant = new oidc.provider.Grant({ clientId: oidc.client.clientId, accountId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  });

  const serve = (provider: InstanceType<typeof Provider>) => {
    const callback = provider.callback();
    return (req: IncomingMessage, res: ServerResponse) => {
      const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec((req.url ?? "").split("?")[0] ?? "");
      if (!match) {
        callback(req, res);
        return;
      }
      (async () => {
        const details = await provider.interactionDetails(req, res);
        if (details.uid !== match[1]) throw new Error("interaction mismatch");
        if (!match[2] || req.method !== "POST") {
          res
            .writeHead(200, { "content-type": "text/html; charset=utf-8" })
            .end(loginPage(details.uid, null));
          return;
        }
        const form = await formBody(req);
        const login = (form.get("login") ?? "").trim().toLowerCase();
        const account = DEMO_ACCOUNTS.find((a) => a.email === login);
        if (!account || form.get("password") !== DEMO_PASSWORD) {
          res
            .writeHead(401, { "content-type": "text/html; charset=utf-8" })
            .end(loginPage(details.uid, "Unknown account or wrong password.", login));
          return;
        }
        await provider.interactionFinished(
          req,
          res,
          { login: { accountId: account.id } },
          { mergeWithLastSubmission: false },
        );
      })().catch((error: unknown) => {
        if (!res.headersSent) {
          res
            .writeHead(400, { "content-type": "text/plain" })
            .end(`Sign-in failed: ${(error as Error).message}`);
        }
      });
    };
  };
  const setRedirectUris = (uris: string[]) => {
    handle = serve(new Provider(issuer, configure(uris)));
  };
  if (options.redirectUris) setRedirectUris(options.redirectUris);

  return {
    issuer,
    setRedirectUris,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
