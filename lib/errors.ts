/**
 * One error type for the whole service: a stable `code`, an HTTP status for the API, and a retry
 * decision for the pipeline. Driver errors are classified from their structured fields
 * (SQLSTATE, ClickHouse error code, KafkaJSError.retriable), never from message text.
 */
export interface AppErrorOptions {
  status?: number;
  retryable?: boolean;
  cause?: unknown;
  /** Extra machine-readable details (for example the failing field); safe to show to clients on 4xx. */
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = options.status ?? 500;
    this.retryable = options.retryable ?? false;
    this.details = options.details;
  }
}

export const badRequest = (message: string, details?: Record<string, unknown>) =>
  new AppError("bad_request", message, { status: 400, details });
export const forbidden = (code: string, message: string) => new AppError(code, message, { status: 403 });
export const notFound = (message: string, details?: Record<string, unknown>) =>
  new AppError("not_found", message, { status: 404, details });
export const databaseDisabled = () =>
  new AppError("database_not_configured", "The database is not configured on this deployment.", {
    status: 503,
  });
export const upstreamUnavailable = (message: string, cause?: unknown) =>
  new AppError("upstream_unavailable", message, { status: 502, retryable: true, cause });

/** Configuration errors stop the process at start with a message naming the key and the allowed values. */
export class ConfigError extends AppError {
  constructor(message: string) {
    super("invalid_config", message, { status: 500 });
    this.name = "ConfigError";
  }
}
