import { createRequire } from "node:module";
import type AnthropicSdk from "@anthropic-ai/sdk";
import type { Clock } from "../core/clock.ts";
import type { CallPurpose, UsageRecord } from "../core/usage.ts";
import type { ModelConfig } from "./settings.ts";

/**
 * The one door to the model. Every call names its purpose so that the usage ledger can
 * say what the tokens were spent on, and every failure comes out as one of two errors a
 * caller can act on: wait and try again later, or tell the person which setting to fix.
 */

let loadedSdk: typeof AnthropicSdk | undefined;

/**
 * The SDK, loaded when the first client is made: a command that never calls the model (status,
 * inject, trace…) or a start its settings refuse does not load it (0.13 s of CPU, farm-bench).
 * Its CommonJS build, loaded with require: under tsx on Node 20 each ES module is a round trip
 * to the loader's thread, and the SDK's ES build is about 250 modules (0.1 s of wall time, 0.2 s
 * of CPU).
 */
function anthropicSdk(): typeof AnthropicSdk {
  loadedSdk ??= withoutSourceMaps(
    () => createRequire(import.meta.url)("@anthropic-ai/sdk") as typeof import("@anthropic-ai/sdk"),
  ).default;
  return loadedSdk;
}

/**
 * Runs `load` with Node's source maps off, then puts them back as they were. tsx turns them on
 * for the code it compiles, and Node then reads and parses the map beside each file the SDK
 * and its tracing library load, 300 of them: 0.04 s of CPU per start (farm-bench, 21 pairs).
 * A stack trace through the SDK shows its JavaScript lines instead of its TypeScript ones.
 */
function withoutSourceMaps<T>(load: () => T): T {
  const enabled = process.sourceMapsEnabled;
  process.setSourceMapsEnabled(false);
  try {
    return load();
  } finally {
    process.setSourceMapsEnabled(enabled);
  }
}

/** The model could not be reached or was overloaded even after the SDK's own retries: try later. */
export class ModelUnavailableError extends Error {
  override readonly name = "ModelUnavailableError";
  /** The HTTP status when the API answered (429, 5xx, 529), undefined for connection failures. */
  readonly status: number | undefined;
  /** The calls that succeeded earlier in the same generation: spent even though it failed, so the ledger still counts them. */
  spentBefore: readonly UsageRecord[] = [];

  constructor(message: string, status: number | undefined, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}

/** The API refused the request in a way waiting cannot fix; the message names the setting to change. */
export class ModelRequestError extends Error {
  override readonly name = "ModelRequestError";
  readonly status: number | undefined;
  /** The configuration variable most likely at fault, when there is one. */
  readonly setting: string | undefined;
  /** The calls that succeeded earlier in the same generation: spent even though it failed, so the ledger still counts them. */
  spentBefore: readonly UsageRecord[] = [];

  constructor(message: string, status: number | undefined, setting?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
    this.setting = setting;
  }
}

/**
 * The API refused ANTHROPIC_API_KEY (401 or 403) when `start` or `setup` checked it: no reply
 * can be made until the key is changed, so starting would only fail the person's first message.
 */
export class ModelKeyRejectedError extends Error {
  override readonly name = "ModelKeyRejectedError";
  readonly setting = "ANTHROPIC_API_KEY";

  constructor(
    /** 401 (the key is not valid) or 403 (the key may not do this). */
    readonly status: number,
    /** The API's own words, when it gave any. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      `the Anthropic API rejected ANTHROPIC_API_KEY (${status}${detail ? `: ${detail}` : ""}). ${
        status === 403
          ? "The key is not allowed to use the API or this model: check its workspace in the Anthropic Console, or create a new key"
          : "Create a new key in the Anthropic Console (Settings → API keys)"
      }, put it in .env as ANTHROPIC_API_KEY (or run \`npm run setup\`), then start again.`,
      options,
    );
  }
}

/** What the key check could not confirm: one sentence for the log or the terminal, and the setting it concerns. */
export interface KeyCheckWarning {
  /** Says what could not be confirmed and why; the caller adds what happens next. */
  message: string;
  setting: string | undefined;
}

/** The key check must not hold up `start` for a model call's whole time limit. */
const KEY_CHECK_TIMEOUT_MS = 10_000;

/** What the client needs besides its configuration: the clock that stamps each call's usage. */
export interface ModelClientDeps {
  clock: Clock;
  /**
   * How the SDK reaches the API: the platform's fetch unless given. The simulations give the
   * Messages API fake's in-process one, so a month of calls does not go through a socket.
   */
  fetch?: typeof fetch;
}

/** One answered call: the SDK's message and what it used, stamped when it arrived. */
export interface ModelAnswer {
  message: AnthropicSdk.Message;
  usage: UsageRecord;
}

/** Purposes that run on the cheaper reflection model. */
const REFLECT_PURPOSES: ReadonlySet<CallPurpose> = new Set(["reflect", "judge"]);

/**
 * The real Anthropic SDK, configured from ModelConfig, with typed errors. Each call returns its
 * usage; the caller that owns the turn records it (the client writes nothing itself).
 */
export class ModelClient {
  readonly config: ModelConfig;
  readonly #sdk: AnthropicSdk;
  readonly #deps: ModelClientDeps;

  constructor(config: ModelConfig, deps: ModelClientDeps) {
    this.config = config;
    this.#deps = deps;
    const Anthropic = anthropicSdk();
    this.#sdk = new Anthropic({
      apiKey: config.apiKey,
      baseURL: config.baseURL ?? null,
      maxRetries: config.maxRetries,
      timeout: config.timeoutMs,
      ...(deps.fetch ? { fetch: deps.fetch } : {}),
    });
  }

  /** The configured model for a purpose: reflection and judging use the cheaper one, a check-in's decision its own. */
  modelFor(purpose: CallPurpose): string {
    if (purpose === "heartbeat-decide") return this.config.decideModel;
    return REFLECT_PURPOSES.has(purpose) ? this.config.reflectModel : this.config.model;
  }

  /** Sends one Messages API request (the SDK retries transient faults itself) and returns the answer with its usage. */
  async create(
    params: AnthropicSdk.MessageCreateParamsNonStreaming,
    purpose: CallPurpose,
  ): Promise<ModelAnswer> {
    let message: AnthropicSdk.Message;
    try {
      message = await this.#sdk.messages.create(params);
    } catch (error) {
      throw classifyModelError(error, params.model);
    }
    return { message, usage: usageRecord(message, purpose, params.model, this.#deps.clock.now()) };
  }

  /**
   * Checks ANTHROPIC_API_KEY with a call that costs no tokens: retrieving PRESENCE_MODEL from
   * the models endpoint (GET /v1/models/{id}), which also catches a mistyped model name. A key
   * the API rejects (401/403) throws ModelKeyRejectedError. Anything else is not fatal and comes
   * back as a warning (null when all is well): an API that is down, overloaded or rate-limited
   * is already handled per turn, and a 404 may be a proxy without this endpoint. One attempt,
   * no SDK retries, at most KEY_CHECK_TIMEOUT_MS; `signal` abandons it.
   */
  async checkKey(signal?: AbortSignal): Promise<KeyCheckWarning | null> {
    const model = this.config.model;
    const timeout = Math.min(KEY_CHECK_TIMEOUT_MS, this.config.timeoutMs);
    try {
      await this.#sdk.models.retrieve(model, null, { maxRetries: 0, timeout, ...(signal ? { signal } : {}) });
      return null;
    } catch (error) {
      signal?.throwIfAborted();
      const Anthropic = anthropicSdk();
      if (error instanceof Anthropic.APIError && (error.status === 401 || error.status === 403)) {
        throw new ModelKeyRejectedError(error.status, apiErrorDetail(error), { cause: error });
      }
      if (error instanceof Anthropic.NotFoundError) {
        const detail = apiErrorDetail(error);
        return {
          setting: "PRESENCE_MODEL",
          message: `the models endpoint does not know PRESENCE_MODEL "${model}" (404${detail ? `: ${detail}` : ""}): check the name, or ignore this if ANTHROPIC_BASE_URL is a proxy without that endpoint`,
        };
      }
      const classified = classifyModelError(error, model);
      const problem =
        error instanceof Anthropic.APIConnectionTimeoutError
          ? `the API did not answer within ${timeout / 1000} s`
          : classified.message;
      return {
        setting: classified instanceof ModelRequestError ? classified.setting : undefined,
        message: `could not check ANTHROPIC_API_KEY: ${problem}`,
      };
    }
  }
}

/** Turns an SDK message's usage block into a ledger record. */
function usageRecord(
  message: AnthropicSdk.Message,
  purpose: CallPurpose,
  requestedModel: string,
  now: Date,
): UsageRecord {
  const u = message.usage;
  return {
    ts: now.toISOString(),
    purpose,
    model: message.model || requestedModel,
    input: u?.input_tokens ?? 0,
    output: u?.output_tokens ?? 0,
    cacheWrite: u?.cache_creation_input_tokens ?? 0,
    cacheWrite1h: u?.cache_creation?.ephemeral_1h_input_tokens ?? 0,
    cacheRead: u?.cache_read_input_tokens ?? 0,
  };
}

/**
 * What a failed generation had already spent: the usage its model error carries (set by the
 * generation that made the earlier calls), empty for any other error.
 */
export function spentBefore(error: unknown): readonly UsageRecord[] {
  return error instanceof ModelUnavailableError || error instanceof ModelRequestError
    ? error.spentBefore
    : [];
}

/** Maps whatever the SDK threw to ModelUnavailableError or ModelRequestError. */
function classifyModelError(error: unknown, model: string): Error {
  const Anthropic = anthropicSdk();
  if (error instanceof Anthropic.APIConnectionTimeoutError) {
    return new ModelUnavailableError(
      "the model did not answer in time (PRESENCE_MODEL_TIMEOUT_MS)",
      undefined,
      { cause: error },
    );
  }
  if (error instanceof Anthropic.APIConnectionError) {
    return new ModelUnavailableError(
      "could not reach the model API (check the network or ANTHROPIC_BASE_URL)",
      undefined,
      { cause: error },
    );
  }
  if (!(error instanceof Anthropic.APIError)) {
    return error instanceof Error ? error : new Error(String(error));
  }
  const status = error.status;
  const detail = apiErrorDetail(error);
  if (status === undefined || status === 408 || status === 409 || status === 429 || status >= 500) {
    return new ModelUnavailableError(
      `the model API is unavailable right now (${status ?? "no status"}${detail ? `: ${detail}` : ""})`,
      status,
      { cause: error },
    );
  }
  const explained = explainRequestError(status, model, detail);
  return new ModelRequestError(explained.message, status, explained.setting, { cause: error });
}

function explainRequestError(
  status: number,
  model: string,
  detail: string,
): { message: string; setting: string | undefined } {
  const said = detail ? ` (the API said: ${detail})` : "";
  switch (status) {
    case 401:
      return {
        message: `ANTHROPIC_API_KEY was rejected (401); create a new key in the Anthropic Console${said}`,
        setting: "ANTHROPIC_API_KEY",
      };
    case 402:
      return {
        message: `the Anthropic account behind ANTHROPIC_API_KEY cannot be billed (402)${said}`,
        setting: "ANTHROPIC_API_KEY",
      };
    case 403:
      return {
        message: `ANTHROPIC_API_KEY is not allowed to use model "${model}" (403)${said}`,
        setting: "ANTHROPIC_API_KEY",
      };
    case 404:
      return {
        message: `model "${model}" was not found (404): check PRESENCE_MODEL / PRESENCE_REFLECT_MODEL / PRESENCE_DECIDE_MODEL and ANTHROPIC_BASE_URL${said}`,
        setting: "PRESENCE_MODEL",
      };
    case 413:
      return {
        message: `the prompt was too large for the API (413): lower PRESENCE_PROMPT_CEILING${said}`,
        setting: "PRESENCE_PROMPT_CEILING",
      };
    default:
      return {
        message: `the model API refused the request (${status})${said}`,
        setting: /prompt is too long|too many tokens/i.test(detail) ? "PRESENCE_PROMPT_CEILING" : undefined,
      };
  }
}

/** The API's own error message, when the body carried one. */
function apiErrorDetail(error: InstanceType<typeof AnthropicSdk.APIError>): string {
  const body = error.error as { error?: { message?: unknown } } | undefined;
  const message = body?.error?.message;
  return typeof message === "string" ? message : "";
}
