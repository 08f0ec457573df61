import pino, { type Logger } from "pino";

export type { Logger } from "pino";

/**
 * Paths that may carry a secret or the person's words. They are censored in every
 * line, at every level: the process log is for operators, not for reading someone's life.
 */
const REDACT = [
  "token",
  "apiKey",
  "api_key",
  "authorization",
  "*.token",
  "*.apiKey",
  "*.authorization",
  "headers.authorization",
  "headers['x-api-key']",
  "text",
  "*.text",
];

/** The process log: JSON lines when not on a terminal, readable lines when it is. */
export function createLogger(
  level: string = process.env.LOG_LEVEL ?? "info",
  pretty = process.stdout.isTTY,
): Logger {
  return pino({
    level,
    redact: { paths: REDACT, censor: "[redacted]" },
    ...(pretty
      ? { transport: { target: "pino-pretty", options: { colorize: true, translateTime: "SYS:HH:MM:ss" } } }
      : {}),
  });
}

/** A logger that writes nothing, for tests and read-only commands. */
export const silentLogger: Logger = pino({ level: "silent" });
