/**
 * The portal as an OpenID Connect relying party (`openid-client`): authorization code flow with PKCE
 * (S256), `state` and `nonce` checked on the way back, claims read from the ID token and the userinfo
 * endpoint. The only module that imports openid-client.
 */
import * as client from "openid-client";
import { AppError } from "../errors.ts";

export interface OidcOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** What the identity provider says about the account that signed in. */
export interface OidcIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

export interface OidcStart {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface OidcClient {
  /** The authorization request to send the browser to, and the checks to keep until the callback. */
  start(redirectUri: string): Promise<OidcStart>;
  /** Redeems the code of the callback URL, checking state, nonce and the PKCE verifier. */
  finish(
    callbackUrl: string,
    checks: { state: string; nonce: string; codeVerifier: string },
  ): Promise<OidcIdentity>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export function createOidcClient(options: OidcOptions): OidcClient {
  let discovered: Promise<client.Configuration> | null = null;
  const configuration = () => {
    discovered ??= (async () => {
      const issuer = new URL(options.issuer);
      // Plain http only for an identity provider on this machine (the demo's and the tests').
      const insecure = issuer.protocol === "http:" && LOOPBACK.has(issuer.hostname);
      return client.discovery(
        issuer,
        options.clientId,
        undefined,
        options.clientSecret ? client.ClientSecretPost(options.clientSecret) : client.None(),
        insecure ? { execute: [client.allowInsecureRequests] } : undefined,
      );
    })().catch((error: unknown) => {
      discovered = null; // Retried at the next sign-in.
      throw new AppError(
        "identity_provider_unavailable",
        `The identity provider ${options.issuer} did not answer its discovery document.`,
        {
          status: 502,
          retryable: true,
          cause: error,
        },
      );
    });
    return discovered;
  };
  return {
    async start(redirectUri) {
      const config = await configuration();
      const codeVerifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: "openid email",
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: "S256",
        state,
        nonce,
      });
      return { url: url.href, state, nonce, codeVerifier };
    },
    async finish(callbackUrl, checks) {
      const config = await configuration();
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, new URL(callbackUrl), {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true,
        });
      } catch (error) {
        throw new AppError(
          "sign_in_failed",
          `The identity provider's answer was refused: ${(error as Error).message}`,
          {
            status: 400,
            cause: error,
          },
        );
      }
      const claims = tokens.claims();
      if (!claims)
        throw new AppError("sign_in_failed", "The identity provider sent no ID token.", { status: 400 });
      let email = typeof claims.email === "string" ? claims.email : null;
      let verified = claims.email_verified === true;
      if (!email) {
        // Providers that follow the spec closely keep scope claims out of the ID token of a code flow.
        const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
        email = typeof info.email === "string" ? info.email : null;
        verified = info.email_verified === true;
      }
      return { subject: claims.sub, email, emailVerified: verified };
    },
  };
}
