import type { Timers } from "../core/clock.ts";
import { SOUND_FORMATS, SOUND_LIMITS, type SoundFormat } from "../core/sound.ts";

/**
 * The one door to a transcription service: any OpenAI-compatible endpoint (`POST
 * {base}/audio/transcriptions`, multipart with `file`, `model` and optionally `language`; a JSON
 * answer `{ "text": … }`), which the hosted services and the servers people run on their own
 * machine (a whisper.cpp server started with `--inference-path /v1/audio/transcriptions`,
 * speaches, LocalAI) all speak. The sound goes there and nowhere else. Every failure comes out
 * as one TranscriptionError naming its cause, for the process log (never the sound, never the
 * words) and for what the person is told.
 */

/** The transcription settings (PRESENCE_TRANSCRIBE_*), read and checked by app/config.ts. */
export interface TranscriptionSettings {
  /** The endpoint's base, without a trailing slash (PRESENCE_TRANSCRIBE_URL): POST {baseUrl}/audio/transcriptions. */
  baseUrl: string;
  /** Sent as a Bearer token when set (PRESENCE_TRANSCRIBE_KEY); never logged. */
  apiKey: string | undefined;
  /** PRESENCE_TRANSCRIBE_MODEL; servers with one model (whisper.cpp) ignore it. */
  model: string;
  /** The language spoken, ISO-639-1 (PRESENCE_TRANSCRIBE_LANGUAGE); the service detects it when unset. */
  language: string | undefined;
  /** How long one transcription may take per started minute of sound (PRESENCE_TRANSCRIBE_TIMEOUT_MS). */
  timeoutMsPerMinute: number;
}

/** OpenAI's name for its Whisper model, which most compatible servers accept or ignore. */
export const DEFAULT_TRANSCRIBE_MODEL = "whisper-1";
/** A minute of sound gets a minute: real time, which a small local model on a CPU keeps up with. */
export const DEFAULT_TRANSCRIBE_TIMEOUT_MS = 60_000;

/** The start check must not hold up `start` for long: any answer within this counts. */
const ENDPOINT_CHECK_TIMEOUT_MS = 10_000;

/** A sound to transcribe, as kept: its bytes, its format, and its length when the channel said it. */
export interface SoundToHear {
  bytes: Uint8Array;
  format: SoundFormat;
  durationSeconds: number | undefined;
}

/**
 * Why a transcription failed: the service answered with an error status (`status` holds it;
 * 413 is `too-large`), did not answer within the time limit, could not be reached, or answered
 * something that is not a transcript; or the sound was over the limits before anything was sent.
 */
type TranscriptionFailure = "status" | "too-large" | "timeout" | "unreachable" | "answer";

/** A transcription that failed, with its cause and, when it is one, the setting to look at. */
export class TranscriptionError extends Error {
  override readonly name = "TranscriptionError";

  constructor(
    message: string,
    readonly failure: TranscriptionFailure,
    /** The HTTP status when the service answered one. */
    readonly status: number | undefined,
    /** The setting most likely at fault (a rejected key, a wrong path or model). */
    readonly setting: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What the companion needs of a transcription service: a sound in, the words spoken out. */
export interface Transcriber {
  /** The words spoken, trimmed (empty when none were made out); throws TranscriptionError. */
  transcribe(sound: SoundToHear): Promise<string>;
}

/** What the start check could not confirm: one sentence for the log, a few words for /status, and the setting it concerns. */
export interface EndpointCheckWarning {
  message: string;
  /** Short, for /status: "the service refused PRESENCE_TRANSCRIBE_KEY (401) when presence started". */
  summary: string;
  setting: string;
}

/**
 * The client over global fetch and FormData (no SDK: the protocol is one multipart POST). Its
 * time limit grows with the sound's length, on the injected timers.
 */
export class TranscriptionClient implements Transcriber {
  readonly settings: TranscriptionSettings;
  readonly #timers: Timers;

  constructor(settings: TranscriptionSettings, deps: { timers: Timers }) {
    this.settings = settings;
    this.#timers = deps.timers;
  }

  /**
   * How long transcribing a sound of this length may take: PRESENCE_TRANSCRIBE_TIMEOUT_MS for
   * every started minute (a note of 0:20 one, of 2:30 three), so a local server on a CPU has the
   * time a long note needs and a short one fails soon.
   */
  timeLimitMs(durationSeconds: number | undefined): number {
    const minutes = Math.max(1, Math.ceil((durationSeconds ?? 0) / 60));
    return this.settings.timeoutMsPerMinute * minutes;
  }

  async transcribe(sound: SoundToHear): Promise<string> {
    if (sound.bytes.byteLength > SOUND_LIMITS.bytes) {
      throw new TranscriptionError(
        `the sound is larger than ${SOUND_LIMITS.bytes / 1024 / 1024} MB; not sent`,
        "too-large",
        undefined,
        undefined,
      );
    }
    const format = SOUND_FORMATS[sound.format];
    const form = new FormData();
    form.append("file", new Blob([sound.bytes], { type: format.contentType }), `sound${format.ending}`);
    form.append("model", this.settings.model);
    form.append("response_format", "json");
    if (this.settings.language) form.append("language", this.settings.language);
    const limitMs = this.timeLimitMs(sound.durationSeconds);
    const answer = await this.#request(
      `${this.settings.baseUrl}/audio/transcriptions`,
      { method: "POST", body: form },
      limitMs,
      async (response) => {
        if (!response.ok) throw statusError(response.status, await errorDetail(response), this.settings);
        // Read first, then parse: a read cut off (the time limit passing mid-body) is #request's
        // to name; only words that are not JSON are an answer that is no transcript.
        const body = await response.text();
        try {
          return JSON.parse(body) as unknown;
        } catch (error) {
          if (error instanceof SyntaxError) return undefined;
          throw error;
        }
      },
    );
    const text = (answer as { text?: unknown } | undefined)?.text;
    if (typeof text !== "string") {
      throw new TranscriptionError(
        "the transcription service answered without a text field (is PRESENCE_TRANSCRIBE_URL an OpenAI-compatible transcription endpoint?)",
        "answer",
        undefined,
        "PRESENCE_TRANSCRIBE_URL",
      );
    }
    return text.trim();
  }

  /**
   * Whether the endpoint answers at all, without sending any sound: GET {base}/models, where a
   * hosted service lists its models and a local server (whisper.cpp has no such route) answers
   * 404; any HTTP status is an answer. A key refused there (401, 403) or no answer within
   * ENDPOINT_CHECK_TIMEOUT_MS comes back as a warning (null when it answered): a service that is
   * down is handled per voice note, and one started after presence is fine.
   */
  async checkEndpoint(signal?: AbortSignal): Promise<EndpointCheckWarning | null> {
    try {
      const status = await this.#request(
        `${this.settings.baseUrl}/models`,
        { method: "GET", ...(signal ? { signal } : {}) },
        ENDPOINT_CHECK_TIMEOUT_MS,
        async (response) => {
          await response.body?.cancel();
          return response.status;
        },
      );
      if (status === 401 || status === 403) {
        return {
          setting: "PRESENCE_TRANSCRIBE_KEY",
          summary: `the service refused PRESENCE_TRANSCRIBE_KEY (${status}) when presence started`,
          message: `the transcription service at PRESENCE_TRANSCRIBE_URL refused PRESENCE_TRANSCRIBE_KEY (${status}); voice notes will not be heard until the key is right`,
        };
      }
      return null;
    } catch (error) {
      signal?.throwIfAborted();
      if (!(error instanceof TranscriptionError)) throw error;
      return {
        setting: "PRESENCE_TRANSCRIBE_URL",
        summary: "the service did not answer when presence started (check PRESENCE_TRANSCRIBE_URL)",
        message: `the transcription service at PRESENCE_TRANSCRIBE_URL did not answer (${error.message}); voice notes are answered with a request to type them until it does`,
      };
    }
  }

  /**
   * One request with a time limit covering the answer's body too (`read` runs inside it): a
   * limit passed is `timeout`, a connection that fails is `unreachable`.
   */
  async #request<T>(
    url: string,
    init: RequestInit,
    limitMs: number,
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = this.#timers.after(limitMs, () => {
      timedOut = true;
      controller.abort();
    });
    const outer = init.signal;
    const onOuterAbort = () => controller.abort(outer?.reason);
    outer?.addEventListener("abort", onOuterAbort, { once: true });
    const headers = this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : undefined;
    try {
      const response = await fetch(url, {
        ...init,
        ...(headers ? { headers } : {}),
        signal: controller.signal,
      });
      return await read(response);
    } catch (error) {
      if (error instanceof TranscriptionError) throw error;
      if (timedOut) {
        throw new TranscriptionError(
          `no answer within ${Math.round(limitMs / 1000)} s (PRESENCE_TRANSCRIBE_TIMEOUT_MS)`,
          "timeout",
          undefined,
          "PRESENCE_TRANSCRIBE_TIMEOUT_MS",
          { cause: error },
        );
      }
      if (outer?.aborted) throw error;
      throw new TranscriptionError(
        `could not reach it (${networkCause(error)}; check PRESENCE_TRANSCRIBE_URL)`,
        "unreachable",
        undefined,
        "PRESENCE_TRANSCRIBE_URL",
        { cause: error },
      );
    } finally {
      timer.cancel();
      outer?.removeEventListener("abort", onOuterAbort);
    }
  }
}

/** An error status as a TranscriptionError, with the setting most likely at fault. */
function statusError(status: number, detail: string, settings: TranscriptionSettings): TranscriptionError {
  const said = detail ? ` (the service said: ${detail})` : "";
  if (status === 413) {
    return new TranscriptionError(
      `the service refused the sound as too large (413)${said}`,
      "too-large",
      status,
      undefined,
    );
  }
  const setting =
    status === 401 || status === 403
      ? "PRESENCE_TRANSCRIBE_KEY"
      : status === 404 || status === 405
        ? "PRESENCE_TRANSCRIBE_URL"
        : status < 500 && /model/i.test(detail)
          ? "PRESENCE_TRANSCRIBE_MODEL"
          : undefined;
  const hint =
    setting === "PRESENCE_TRANSCRIBE_URL"
      ? `: is ${settings.baseUrl}/audio/transcriptions the endpoint?`
      : setting
        ? `: check ${setting}`
        : "";
  return new TranscriptionError(`the service answered ${status}${hint}${said}`, "status", status, setting);
}

/** The service's own error message, when its body carried one (OpenAI's `error.message`, or a short text); clipped. */
async function errorDetail(response: Response): Promise<string> {
  const body = await response.text().catch(() => "");
  let detail = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; detail?: unknown };
    const message = typeof parsed.error === "string" ? parsed.error : parsed.error?.message;
    detail = typeof message === "string" ? message : typeof parsed.detail === "string" ? parsed.detail : "";
  } catch {
    // Not JSON: the text as it is, if it is short and looks like words rather than a page.
    if (/<html/i.test(body)) detail = "";
  }
  const line = detail.replace(/\s+/g, " ").trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

/** What a failed fetch says went wrong, by its cause's code (ECONNREFUSED, ENOTFOUND…) when it has one. */
function networkCause(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (typeof cause?.code === "string") return cause.code;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Where the service is, in words for /status and /help: its host, and that the sound stays on
 * this machine when it is a loopback address.
 */
export function transcriptionPlace(baseUrl: string): string {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const local = host === "localhost" || host === "::1" || /^127\./.test(host);
  return local ? `${url.host}, on this machine` : url.host;
}
