/** One error handler and one body shape (Problem) for every error the API returns. */
import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../lib/errors.ts";
import type { App } from "../types.ts";

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
) {
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

function describeValidation(error: FastifyError): { detail: string; errors: object[] } {
  const location = (error as { validationContext?: string }).validationContext ?? "request";
  const issues = (error.validation ?? []) as ValidationIssue[];
  const errors = issues.map((issue) => {
    const missing = issue.params?.missingProperty;
    const extraProp = issue.params?.additionalProperty;
    const path = `${issue.instancePath ?? ""}${missing ? `/${missing}` : ""}${extraProp ? `/${extraProp}` : ""}`;
    const allowed = issue.params?.allowedValues;
    const message = extraProp
      ? `unknown field ${String(extraProp)}`
      : `${issue.message ?? "is invalid"}${Array.isArray(allowed) ? `: ${allowed.join(", ")}` : ""}`;
    return { location, path: path || "/", message };
  });
  const first = errors[0];
  const detail = first
    ? `Invalid ${location}: ${first.path.slice(1) || location} ${first.message}`
    : error.message;
  return { detail, errors };
}

export function registerErrorHandling(app: App): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      if (error.status >= 500) request.log.error({ err: error }, "Request failed.");
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
      const { detail, errors } = describeValidation(fe);
      return sendProblem(request, reply, 400, "validation_failed", detail, { errors });
    }
    const status = fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 600 ? fe.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error }, "Request failed.");
      return sendProblem(request, reply, status, "internal_error", "Internal server error.");
    }
    // Fastify's own client errors (bad JSON body, unsupported media type, body too large ...).
    const code = (fe.code ?? "bad_request").toLowerCase().replace(/^fst_err_/, "");
    return sendProblem(request, reply, status, code, fe.message);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      request,
      reply,
      404,
      "route_not_found",
      `No route ${request.method} ${request.url.split("?")[0]}.`,
    ),
  );
}
