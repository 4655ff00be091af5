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

export function createLogger(options: LoggerOptions): Logger {
  const opts = { level: options.level, redact: { paths: REDACT, censor: "[redacted]" } };
  return options.stream ? pino(opts, options.stream as pino.DestinationStream) : pino(opts);
}
