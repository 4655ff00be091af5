/**
 * The typed client of the Alephium indexer API: openapi-fetch over the types that openapi-typescript
 * generates from the API's OpenAPI document (`./schema.ts`, `npm run client:generate`). Paths, path and
 * query parameters, bodies, answers and error bodies are all typed from the document.
 *
 *   const api = createClient("https://indexer.example", process.env.API_KEY);
 *   const { data, error } = await api.GET("/events/all", { params: { query: { limit: 10 } } });
 */
import createFetchClient, { type Client, type ClientOptions, type Middleware } from "openapi-fetch";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
/**
 * The client: `GET`, `POST`, ... over the API's paths, each answering `{ data, error, response }`, typed for
 * JSON answers (routes that can also answer CSV or a stream are typed by their JSON body; see the API docs).
 */
export type IndexerClient = Client<paths, "application/json">;
/** The one error body of the API (`application/problem+json`): `code` is stable, `detail` names the value. */
export type Problem = components["schemas"]["Problem"];
/** A named schema of the document, e.g. `Schema<"ApiKeyUsage">`. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];

/** Sends the key the way the API requires it: in both `X-API-Key` and `Authorization: Bearer`. */
export function apiKeyMiddleware(apiKey: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set("X-API-Key", apiKey);
      request.headers.set("Authorization", `Bearer ${apiKey}`);
      return request;
    },
  };
}

/**
 * A client of the API at `baseUrl` (the deployment's root, or its stage prefix such as
 * `https://host/prod`). With `apiKey`, every request carries it; without, only public routes answer.
 * `options` are openapi-fetch's (a custom `fetch`, default headers, ...).
 */
export function createClient(
  baseUrl: string,
  apiKey?: string,
  options: Omit<ClientOptions, "baseUrl"> = {},
): IndexerClient {
  const client = createFetchClient<paths, "application/json">({
    ...options,
    baseUrl: baseUrl.replace(/\/+$/, ""),
  });
  if (apiKey) client.use(apiKeyMiddleware(apiKey));
  return client;
}
