/**
 * One log line per request, at debug (Fastify's default is two info lines: incoming and completed),
 * with the request id under `request_id`. Failed requests (5xx) are logged at error by the error handler.
 * A key given in the query (`api_key`, the event stream's EventSource form) is written `***`.
 */
import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

export class RequestLog extends LogController {
  constructor() {
    super({ requestIdLogLabel: "request_id" });
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    reply.log.debug(
      {
        method: request.method,
        route: request.routeOptions.url ?? null,
        url: request.url.replace(/([?&]api_key=)[^&]*/g, "$1***"),
        status_code: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(error ? { err: error } : {}),
      },
      "Request completed.",
    );
  }
}
