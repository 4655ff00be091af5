/** Schemas shared by every route group: the one error body, and small reusable pieces. */
import { type Static, type TLiteral, type TSchema, type TUnion, type TUnsafe, Type } from "@sinclair/typebox";

/**
 * The one error body of the service (RFC 9457 problem details, `application/problem+json`):
 * `code` is stable and machine-readable; `detail` is for humans; `request_id` ties it to the logs.
 */
export const Problem = Type.Object(
  {
    type: Type.String({
      description: "URI reference naming the problem type (`about:blank` or a docs anchor).",
    }),
    title: Type.String({ description: "Short summary of the status (for example `Bad Request`)." }),
    status: Type.Integer({ description: "HTTP status code." }),
    code: Type.String({
      description: "Stable error code, for example `validation_failed`, `invalid_api_key`.",
    }),
    detail: Type.String({
      description:
        'Human-readable explanation naming the bad value; on a 404 it always contains "not found".',
    }),
    instance: Type.String({ description: "Path of the request." }),
    request_id: Type.String({ description: "Request id, also sent as the `x-request-id` header." }),
    details: Type.Optional(
      Type.Object(
        {},
        { additionalProperties: true, description: "Machine-readable context (for example the bad id)." },
      ),
    ),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          location: Type.String({ description: "`params`, `querystring`, `body` or `headers`." }),
          path: Type.String({ description: "JSON pointer of the bad field." }),
          message: Type.String(),
        }),
        { description: "Schema-validation failures, one per bad field." },
      ),
    ),
  },
  { $id: "Problem", title: "Problem", additionalProperties: false },
);

export const ProblemRef = Type.Ref("Problem");

/** A documented error status of a route: the Problem body, with what the status means there. */
export const problemOf = (description: string) => ({ description, ...ProblemRef });

export const Ok = Type.Object({ ok: Type.Boolean() });

export const DateTime = (description?: string) => Type.String({ format: "date-time", description });
/**
 * A nullable value, written as OpenAPI 3.0's `nullable: true` (not a union with null: with type
 * coercion on, Ajv would turn a null body field into "" or 0 before the handler sees it).
 */
export const Nullable = <T extends TSchema>(schema: T): TUnsafe<Static<T> | null> =>
  Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });

/**
 * The body of a body-less action: none, an empty body, or `{}`; anything else is refused. Documented
 * with `requestBody.required: false` (openapi.ts).
 */
export const NoBody = Type.Unsafe<Record<string, never> | null>({
  type: "object",
  properties: {},
  additionalProperties: false,
  nullable: true,
  description: "No body needed: send none, an empty body or `{}`.",
});

/**
 * A string that is one of `values`, as `{ type: "string", enum }`: validation errors then list the
 * allowed values, and client generators see an enum (a union of literals answers "must be equal to
 * constant" once per branch).
 */
export const StringEnum = <const T extends readonly string[]>(
  values: T,
  options: { default?: T[number]; description?: string } = {},
): TUnion<Literals<T>> =>
  // Typed as the union it replaces: Fastify's TypeBox provider resolves `Type.Unsafe` to unknown.
  Type.Unsafe({ type: "string", enum: [...values], ...options }) as unknown as TUnion<Literals<T>>;
type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

/** Bounds of a Postgres `integer` column (and of anything multiplied into an OFFSET). */
export const INT32_MAX = 2_147_483_647;
export const INT32_MIN = -2_147_483_648;

/**
 * A request field spelled differently by SPEC.md (camelCase) than the API's snake_case `canonical`:
 * both are accepted, a request giving both with different values is refused (api/plugins/input.ts).
 * `description` replaces the default one (when SPEC.md names the canonical spelling and this alias).
 */
export const AliasOf = <T extends TSchema>(canonical: string, schema: T, description?: string) =>
  Type.Optional(
    Type.Unsafe<Static<T>>({
      ...schema,
      "x-alias-of": canonical,
      description:
        description ?? `Same as \`${canonical}\` (the spelling SPEC.md uses); give one of the two.`,
    }),
  );

/** `limit` and `nextKey` of the dapp groups' lists (cursor pagination, lib/dapps/cursor.ts). */
export const DappListQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: "Rows per page (1-200)." }),
  nextKey: Type.Optional(
    Type.String({
      maxLength: 2048,
      pattern: "^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$",
      description:
        "Opaque cursor from the previous page's `nextKey`; the same filters must be given again. Pages come from the snapshot of the first page, so events that arrive meanwhile neither shift nor repeat rows. A forged, edited or expired cursor (DAPP_CURSOR_TTL_MS), or one of another list or filters, is a 400 `invalid_cursor` naming `nextKey`.",
    }),
  ),
};

/** `nextKey` of a list response: null on the last page. */
export const NextKey = Nullable(
  Type.String({ description: "Cursor of the next page (pass it as `nextKey`); null on the last page." }),
);

/**
 * `limit` and `cursor` of the lists paged newest first by creation (reindex jobs, webhooks; lib/created-cursor.ts),
 * and `next` of their responses.
 */
export const createdListQuery = (noun: string) => ({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: `${noun} per page (1-200).` }),
  cursor: Type.Optional(
    Type.String({
      maxLength: 200,
      pattern: "^[A-Za-z0-9_-]+$",
      description: "`next` of the previous page; a cursor this API did not issue is a 400.",
    }),
  ),
});
export const CreatedNext = Nullable(
  Type.String({ description: "Cursor of the next page; null on the last page." }),
);

export const HexId = (description: string) => Type.String({ pattern: "^[0-9a-f]{64}$", description });
export const Base58Address = (description: string) =>
  Type.String({ pattern: "^[1-9A-HJ-NP-Za-km-z]{20,100}(:[0-3])?$", description });
export const UnixMs = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 9_007_199_254_740_991, description });
export const U256String = (description: string) => Type.String({ pattern: "^-?[0-9]+$", description });
