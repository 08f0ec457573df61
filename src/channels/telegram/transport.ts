import { HttpError } from "grammy";

/**
 * How long each kind of request to the Bot API may take. A request that outlives its limit is
 * abandoned, so an answer Telegram cut off or never finished costs seconds, not the minute a
 * single client-wide timeout would cost (and a long poll, which legitimately waits for its whole
 * poll time, is not cut short by a limit meant for sends).
 */
export interface TransportTimeouts {
  /** The long poll's own length: Telegram answers an empty getUpdates after this many seconds. */
  pollSeconds: number;
  /** Added to the poll's length before an unanswered long poll counts as lost. */
  pollMarginMs: number;
  /** Any other call (a send, "typing…", getMe…), from sending it to the last byte of the answer. */
  callMs: number;
  /** A file travelling: a document upload (the /export) or a photo download. */
  fileMs: number;
  /**
   * Once Telegram has started answering, the longest pause before the rest of the answer. An
   * answer is a few kilobytes that arrive at once, so a pause this long means it was cut off.
   */
  stallMs: number;
}

/** Seconds, not a minute: Telegram answers a send in well under one. */
export const DEFAULT_TRANSPORT_TIMEOUTS: Omit<TransportTimeouts, "pollSeconds"> = {
  pollMarginMs: 10_000,
  callMs: 10_000,
  fileMs: 60_000,
  stallMs: 5_000,
};

/** A request did not finish: no answer in time, an answer cut off, or no connection at all. */
class TelegramTransportError extends Error {
  override readonly name = "TelegramTransportError";

  constructor(
    /** The Bot API method, or "file download". */
    readonly call: string,
    message: string,
    /**
     * False only when the request certainly never reached Telegram (the connection was refused,
     * the name did not resolve). Otherwise Telegram may have done what was asked, for a send:
     * the message may be in the chat although no answer said so.
     */
    readonly mayHaveArrived: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Connection failures that happen before a single byte of the request is sent. */
const NEVER_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * The `fetch` grammY (and the photo download) makes its requests with: Node's own fetch, whose
 * client notices a connection closed half-way through an answer at once (grammY's default,
 * node-fetch 2, waits for its timeout), under a limit per kind of request and a limit on pauses
 * once the answer started. Every failure comes out as TelegramTransportError.
 */
export function telegramFetch(timeouts: TransportTimeouts): typeof fetch {
  return async (input, init) => {
    const call = callOf(input);
    const limitMs =
      call === "getUpdates"
        ? timeouts.pollSeconds * 1000 + timeouts.pollMarginMs
        : call === "sendDocument" || call === FILE_DOWNLOAD
          ? timeouts.fileMs
          : timeouts.callMs;
    const controller = new AbortController();
    const caller = init?.signal;
    const callerAborted = () => controller.abort(caller?.reason);
    if (caller?.aborted) callerAborted();
    else caller?.addEventListener("abort", callerAborted, { once: true });
    const giveUp = (message: string) => () =>
      controller.abort(new TelegramTransportError(call, message, true));
    const limit = setTimeout(giveUp(`no complete answer to ${call} within ${limitMs} ms`), limitMs);
    let stall: NodeJS.Timeout | undefined;
    let answerStarted = false;
    try {
      const response = await fetch(input, { ...init, signal: controller.signal });
      answerStarted = true;
      const chunks: Uint8Array[] = [];
      const reader = response.body?.getReader();
      while (reader) {
        clearTimeout(stall);
        stall = setTimeout(
          giveUp(`Telegram's answer to ${call} stopped half-way for ${timeouts.stallMs} ms`),
          timeouts.stallMs,
        );
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
      }
      const body = Buffer.concat(chunks);
      return new Response(body.length > 0 ? body : null, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } catch (error) {
      if (caller?.aborted) throw error;
      const reason: unknown = controller.signal.reason;
      if (reason instanceof TelegramTransportError) throw reason;
      const code = errorCode(error);
      const mayHaveArrived = answerStarted || code === undefined || !NEVER_SENT.has(code);
      const what = answerStarted ? `Telegram's answer to ${call} was cut off` : `${call} failed`;
      throw new TelegramTransportError(call, `${what} (${code ?? messageOf(error)})`, mayHaveArrived, {
        cause: error,
      });
    } finally {
      clearTimeout(limit);
      clearTimeout(stall);
      caller?.removeEventListener("abort", callerAborted);
    }
  };
}

/**
 * Whether a failed grammY call may nonetheless have been carried out by Telegram: its request
 * went out and no answer came back whole. An answer that came whole, even an error page a proxy
 * put in its place, says the call was not carried out.
 */
export function mayHaveReachedTelegram(error: unknown): boolean {
  return (
    error instanceof HttpError && error.error instanceof TelegramTransportError && error.error.mayHaveArrived
  );
}

/** A failed call in words for the process log: what went wrong on the way, never the URL (it holds the token). */
export function describeTransportFailure(error: unknown): string {
  if (error instanceof HttpError && error.error instanceof TelegramTransportError) return error.error.message;
  return error instanceof Error ? error.message : String(error);
}

const FILE_DOWNLOAD = "file download";

/** The Bot API method a URL calls (`…/bot<token>/<method>`), or a file download (`…/file/bot<token>/…`). */
function callOf(input: string | URL | Request): string {
  const path = new URL(input instanceof Request ? input.url : input).pathname;
  if (/\/file\/bot[^/]+\//.test(path)) return FILE_DOWNLOAD;
  return path.slice(path.lastIndexOf("/") + 1);
}

function errorCode(error: unknown): string | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
