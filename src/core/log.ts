import pino, { type DestinationStream, type Logger } from "pino";

export type { Logger } from "pino";

/** Fields that carry a secret: the bot token, the API key, an authorization header. */
const SECRETS = ["token", "apiKey", "api_key", "authorization", "headers['x-api-key']"];
/** Fields that carry the person's words or the companion's. */
const WORDS = ["text", "caption"];

/**
 * Every place those fields may sit, up to two objects deep and inside a `messages` list: an
 * error carries the request it failed on (`err.payload.text`), a turn carries its messages.
 * Censored in every line, at every level: the process log is for operators, not for
 * reading someone's life.
 */
const REDACT = [...SECRETS, ...WORDS].flatMap((field) => [
  field,
  `*.${field}`,
  `*.*.${field}`,
  `messages[*].${field}`,
  `*.messages[*].${field}`,
]);

/**
 * Secrets by their shape, wherever they sit in a line: a failed request's error quotes its
 * URL, and the Bot API's URL holds the token (`/bot123456:AAE…/getMe`), in a message and a
 * stack no field path can name; an Anthropic key, or a transcription service's key in OpenAI's
 * shape (`sk-proj-…`).
 */
const SECRET_VALUES = /\d{3,}:[A-Za-z0-9_-]{20,}|\bsk-ant-[A-Za-z0-9_-]{8,}|\bsk-[A-Za-z0-9_-]{20,}/g;

/** A finished log line with every secret-shaped value censored. */
function scrubSecrets(line: string): string {
  return line.replace(SECRET_VALUES, "[redacted]");
}

/**
 * The process log: JSON lines when not a terminal, readable lines when it is. A destination
 * (tests capture lines with one) always gets JSON lines.
 */
export function createLogger(
  level: string = process.env.LOG_LEVEL ?? "info",
  pretty = process.stdout.isTTY,
  destination?: DestinationStream,
): Logger {
  const options = {
    level,
    redact: { paths: REDACT, censor: "[redacted]" },
    hooks: { streamWrite: scrubSecrets },
  };
  if (destination) return pino(options, destination);
  return pino({
    ...options,
    ...(pretty
      ? { transport: { target: "pino-pretty", options: { colorize: true, translateTime: "SYS:HH:MM:ss" } } }
      : {}),
  });
}

/** A logger that writes nothing, for tests and read-only commands. */
export const silentLogger: Logger = pino({ level: "silent" });
