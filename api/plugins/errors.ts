/**
 * One error handler and one body shape (Problem) for every error the API returns, including the
 * ones raised before a route runs: Node's HTTP parser (431, 408, 400), the router (404, 405, 414)
 * and the body parser (400, 413, 415).
 */
import { randomUUID } from "node:crypto";
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { AppError } from "../../lib/errors.ts";
import type { Logger } from "../../lib/logger.ts";
import type { App } from "../types.ts";

/** One bad request field: where it is (`params`, `querystring`, `body`, `headers`) and what is wrong. */
export interface InputIssue {
  location: string;
  /** JSON pointer of the field. */
  path: string;
  message: string;
}

/** A refused request field found outside schema validation (NUL bytes, prototype keys, alias clashes). */
export class InputError extends AppError {
  readonly issues: InputIssue[];

  constructor(code: string, location: string, path: string, message: string) {
    super(code, `Invalid ${location}: ${path.slice(1) || location} ${message}`, { status: 400 });
    this.name = "InputError";
    this.issues = [{ location, path, message }];
  }
}

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

/**
 * A 404's `detail` always says "not found": clients (the AlphScan frontend among them) read an error whose message
 * contains it as a 404. Our own messages say it; this covers the ones we pass on (the explorer backend's).
 */
export function notFoundDetail(detail: string): string {
  return detail.includes("not found") ? detail : `${detail.replace(/[.\s]+$/, "")} (not found).`;
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
) {
  if (status === 404) detail = notFoundDetail(detail);
  return reply
    .code(status)
    .type("application/problem+json")
    .send({
      type: "about:blank",
      title: STATUS_CODES[status] ?? "Error",
      status,
      code,
      detail,
      instance: request.url.split("?")[0] ?? request.url,
      request_id: String(request.id),
      ...extra,
    });
}

/**
 * Body fields a request sent under an alias spelling (`x-alias-of`), canonical → alias as sent: set by
 * the input rules when they move an alias to its canonical name, so that a validation error names the
 * field as the client wrote it.
 */
export const sentAliases = new WeakMap<FastifyRequest, Map<string, string>>();

/** A body pointer in the client's spelling: `/canonical...` → `/alias...` when the alias was sent. */
function asSent(path: string, location: string, aliases: Map<string, string> | undefined): string {
  if (!aliases || location !== "body") return path;
  const [, head = "", ...rest] = path.split("/");
  const alias = aliases.get(head);
  return alias === undefined ? path : ["", alias, ...rest].join("/");
}

function describeValidation(
  error: FastifyError,
  aliases?: Map<string, string>,
): { detail: string; errors: object[] } {
  const location = (error as { validationContext?: string }).validationContext ?? "request";
  const issues = (error.validation ?? []) as ValidationIssue[];
  const errors = issues.map((issue) => {
    const missing = issue.params?.missingProperty;
    const extraProp = issue.params?.additionalProperty;
    const path = asSent(
      `${issue.instancePath ?? ""}${missing ? `/${missing}` : ""}${extraProp ? `/${extraProp}` : ""}`,
      location,
      aliases,
    );
    const allowed = issue.params?.allowedValues;
    const message = extraProp
      ? "is not a known field"
      : missing
        ? "is required"
        : `${issue.message ?? "is invalid"}${Array.isArray(allowed) ? `: ${allowed.join(", ")}` : ""}`;
    return { location, path: path || "/", message };
  });
  const first = errors[0];
  const detail = first
    ? `Invalid ${location}: ${first.path.slice(1) || location} ${first.message}`
    : error.message;
  return { detail, errors };
}

/** The raw HTTP response of a Problem, for errors raised before Fastify has a request (no reply object). */
function rawProblem(status: number, code: string, detail: string): string {
  const requestId = randomUUID();
  const body = JSON.stringify({
    type: "about:blank",
    title: STATUS_CODES[status] ?? "Error",
    status,
    code,
    detail,
    instance: "",
    request_id: requestId,
  });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}`,
    "Content-Type: application/problem+json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${requestId}`,
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

/**
 * Fastify's `clientErrorHandler`: errors of Node's HTTP parser, before any request exists (headers
 * past `maxHeaderSize`, a request that timed out, a malformed request line), as Problem bodies.
 */
export function clientErrorHandler(log: Logger) {
  return (error: NodeJS.ErrnoException, socket: Duplex): void => {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    let response: string;
    if (error.code === "HPE_HEADER_OVERFLOW") {
      response = rawProblem(
        431,
        "header_too_large",
        `The request line and headers exceed ${maxHeaderSize} bytes.`,
      );
    } else if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
      response = rawProblem(408, "request_timeout", "The request was not received in time.");
    } else {
      response = rawProblem(400, "bad_request", "The request is not valid HTTP.");
    }
    log.debug({ err: error, code: error.code }, "Client error before a request.");
    if (socket.writable) socket.end(response);
    else socket.destroy(error);
  };
}

/**
 * Answers 405 with `Allow` when a path exists under other methods: a router holding every route's
 * method and URL (the app's own router cannot be asked which methods a path has).
 */
function methodsOfPaths(app: App): (path: string) => string[] {
  const router = FindMyWay({ maxParamLength: 256 });
  const methods = new Set<HTTPMethod>();
  app.addHook("onRoute", (route: RouteOptions) => {
    // @fastify/cors's `OPTIONS *` answers preflights only (api/plugins/cors.ts): it is no method of a path.
    if (route.url === "*") return;
    for (const method of [route.method].flat() as HTTPMethod[]) {
      methods.add(method);
      router.on(method, route.url, () => undefined);
    }
  });
  return (path) => [...methods].filter((m) => router.find(m, path) !== null).sort();
}

/** How loud an error answer is logged, and what the operator should do about it. */
export interface ErrorLogPolicy {
  level: "info" | "warn" | "error";
  /** One sentence telling the reader what to do (absent for client errors: the answer tells the client). */
  action?: string;
}

/**
 * The log level of an error answer. A client's mistake (4xx) is `info`: the client is told, nothing is
 * wrong with the service. A feature that is off on this deployment (503 `*_not_configured`) and an
 * upstream that is down (502, retryable) are `warn`: expected states an operator may choose to change.
 * Everything else at 5xx is `error`: a failure of this service, with the stack to read.
 */
export function errorLogPolicy(status: number, code: string): ErrorLogPolicy {
  if (status < 500) return { level: "info" };
  if (code.endsWith("_not_configured") || code.endsWith("_disabled")) {
    return {
      level: "warn",
      action:
        "A feature is off on this deployment: set the configuration keys the detail names (docs/configuration.md) to turn it on, or ignore this line.",
    };
  }
  if (status === 502 || status === 504) {
    return {
      level: "warn",
      action:
        "An upstream (node, explorer, exchange) did not answer: check its URL in the configuration and that it is up; clients may retry.",
    };
  }
  return {
    level: "error",
    action:
      "Unexpected failure of this service: read the stack (err) and the request_id's other lines; if it repeats, report it with this line.",
  };
}

function logErrorAnswer(request: FastifyRequest, status: number, code: string, error: unknown): void {
  const { level, action } = errorLogPolicy(status, code);
  if (level === "info") {
    request.log.info({ status, code, detail: (error as Error).message }, "Request refused (client error).");
  } else if (level === "warn") {
    request.log.warn({ status, code, detail: (error as Error).message, action }, "Request not served.");
  } else {
    request.log.error({ err: error, status, code, action }, "Request failed.");
  }
}

export function registerErrorHandling(app: App): void {
  const allowedMethods = methodsOfPaths(app);
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof InputError) {
      return sendProblem(request, reply, error.status, error.code, error.message, { errors: error.issues });
    }
    if (error instanceof AppError) {
      logErrorAnswer(request, error.status, error.code, error);
      const detail =
        error.status >= 500 && error.status !== 502 && error.status !== 503
          ? "Internal server error."
          : error.message;
      return sendProblem(
        request,
        reply,
        error.status,
        error.code,
        detail,
        error.status < 500 && error.details ? { details: error.details } : {},
      );
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const { detail, errors } = describeValidation(fe, sentAliases.get(request));
      return sendProblem(request, reply, 400, "validation_failed", detail, { errors });
    }
    const status = fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 600 ? fe.statusCode : 500;
    if (status >= 500) {
      logErrorAnswer(request, status, "internal_error", error);
      return sendProblem(request, reply, status, "internal_error", "Internal server error.");
    }
    // Fastify's own client errors (bad JSON body, unsupported media type, body too large ...).
    // Plugins' codes too: FST_CSRF_INVALID_TOKEN (@fastify/csrf-protection) → csrf_invalid_token.
    const code = (fe.code ?? "bad_request").toLowerCase().replace(/^fst_(err_)?/, "");
    return sendProblem(request, reply, status, code, fe.message);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      reply.header("allow", allowed.join(", "));
      return sendProblem(
        request,
        reply,
        405,
        "method_not_allowed",
        `${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}.`,
      );
    }
    return sendProblem(request, reply, 404, "route_not_found", `Route ${request.method} ${path} not found.`);
  });
}
