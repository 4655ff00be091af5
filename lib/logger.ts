import { type Logger, pino } from "pino";

export type { Logger };

/** Fields that must never reach a log line: raw API keys travel in these headers. */
const REDACT = [
  "req.headers.authorization",
  'req.headers["x-api-key"]',
  "headers.authorization",
  'headers["x-api-key"]',
  "key",
  "raw_key",
];

export interface LoggerOptions {
  level: string;
  /** Optional destination stream (tests capture logs through it). */
  stream?: NodeJS.WritableStream;
}

/**
 * Logs are JSON lines on stderr (or `stream`): stdout is for what a command prints as data
 * (`keys create`, `config`, `registry seed`), so `… | jq` reads it whatever the log level.
 */
export function createLogger(options: LoggerOptions): Logger {
  const opts = { level: options.level, redact: { paths: REDACT, censor: "[redacted]" } };
  return pino(opts, (options.stream ?? pino.destination(2)) as pino.DestinationStream);
}
