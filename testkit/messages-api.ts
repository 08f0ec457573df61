import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { shippedPriceTable } from "../src/model/prices.ts";
import { DEFAULT_MODEL, DEFAULT_REFLECT_MODEL, type ModelConfig } from "../src/model/settings.ts";
import { estimateTokens } from "../src/model/tokens.ts";
import { breakpointProblem, type CacheBlock, cacheBlocks, PromptCache } from "./prompt-cache.ts";

/**
 * A loopback Anthropic Messages API, good enough for the real `@anthropic-ai/sdk` to talk to
 * over HTTP (or, without the socket, through `fetch`: the SDK's option of that name). Tests
 * script what "the model" answers and inject the faults a real API has.
 *
 * ```ts
 * const api = await startMessagesApiFake();            // { apiKey: "test-key" } by default
 * const llm = new ModelClient({ ...modelConfig, apiKey: api.apiKey, baseURL: api.url }, { clock });
 * api.enqueue(textReply("Hello!"), toolReply("decide_checkin", { send: false, why: "…", topic: "" }));
 * api.setHandler((body) => textReply(`you said ${lastUserText(body)}`)); // used when the queue is empty
 * api.failNext("529", 2);                               // the next two requests get overloaded_error
 * api.failNext("429", 1, { retryAfterSeconds: 2 });     // rate limited, with a retry-after header
 * api.failNext("500", 3, { retryAfterMs: 1 });          // retry-after-ms keeps the SDK's retries fast
 * api.failNext("slow", 1, { delayMs: 5_000 });          // answers late (the SDK's timeout fires)
 * api.failNext("reset", 1);                             // the connection is dropped mid-request
 * api.requests[0].body.system;                          // every request body, faults included
 * api.modelLookups;                                     // ids asked for at GET /v1/models/{id} (the key check)
 * api.failLookups("403");                               // every lookup answers so until failLookups(undefined)
 * api.problems;                                         // requests the real API would have rejected
 * await api.close();
 * ```
 *
 * What it checks, like the real API: the `Authorization: Bearer <apiKey>` header (401 otherwise), an
 * `anthropic-version` header, no `temperature`/`top_p`/`top_k` (API version 2026-10-21 rejects them),
 * messages that start with the user and alternate, non-empty text blocks, document blocks holding a
 * real base64 PDF (up to 32 MB) or non-empty plain text, every `tool_use` answered
 * by a `tool_result` with the same id in the next user turn, `tool_choice` naming a defined tool, a
 * prompt within the model's context window (CONTEXT_WINDOW_TOKENS, estimated: see promptTokens), and
 * a scripted answer that obeys the forced `tool_choice` (a forced tool must be used; `none` must not
 * use tools). A violation is answered with a 400 `invalid_request_error` and listed in `problems`.
 *
 * The models endpoint (`GET /v1/models/{id}`, what `start` and `setup` check the key with) checks
 * the key the same way and answers the ids in `models` (404 `not_found_error` for any other).
 *
 * Usage: a scripted `usage` is returned as given; otherwise it is estimated from the request with
 * the project's token estimator, and the prompt cache is modelled on the clock the fake is given
 * (`startMessagesApiFake({ clock })`; the wall clock by default, a simulation's virtual clock in
 * simulations): see prompt-cache.ts. A prefix up to a `cache_control` breakpoint is read only when
 * the same bytes were written or read within its TTL (5 minutes, 1 hour with `ttl: "1h"`), below
 * the model's minimum cacheable length (the test kit's prices.json) nothing is cached, and changing
 * `tool_choice` or the presence of images makes the messages' part of the prefix new, as the real
 * API documents. More than 4 breakpoints, or a 1-hour one after a 5-minute one, is refused.
 */

/** One content block of a scripted answer. */
type FakeBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; name: string; input: Record<string, unknown>; id?: string };

/** A scripted answer: content plus optional stop reason, usage and delay. */
export interface FakeResponse {
  content: FakeBlock[];
  /** Defaults to "tool_use" when a tool is used, otherwise "end_turn". */
  stop_reason?: "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";
  usage?: Partial<FakeUsage>;
  /** Answers this much later (real time). */
  delayMs?: number;
}

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The cache writes by TTL, as the real API breaks them down. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** The request body as the SDK sent it (parsed JSON). */
export interface MessagesRequestBody {
  model: string;
  max_tokens: number;
  system?: string | Array<{ type: "text"; text: string; cache_control?: unknown }>;
  messages: Array<{ role: "user" | "assistant"; content: string | Array<Record<string, unknown>> }>;
  tools?: Array<{ name: string; description?: string; input_schema: unknown; cache_control?: unknown }>;
  tool_choice?: { type: "auto" | "any" | "none" | "tool"; name?: string };
  [key: string]: unknown;
}

/** One request the fake received, whatever it answered. */
interface RecordedRequest {
  body: MessagesRequestBody;
  headers: Record<string, string | string[] | undefined>;
  /** What the fake did: "answered", a fault kind, or "rejected" (see problems). */
  outcome: "answered" | "rejected" | FaultKind;
}

/** Computes the answer to a request when the queue is empty. */
type FakeHandler = (body: MessagesRequestBody, index: number) => FakeResponse | Promise<FakeResponse>;

/** Faults on demand. */
type FaultKind = "429" | "500" | "529" | "slow" | "reset" | "401" | "400";

interface FaultOptions {
  /** 429: the retry-after header in seconds (default 1, as the real API says). */
  retryAfterSeconds?: number;
  /** Any error fault: a retry-after-ms header, which the SDK honours first (tests use 1 to stay fast). */
  retryAfterMs?: number;
  /** slow: how long to wait before answering (default 2 s). */
  delayMs?: number;
}

export interface MessagesApiFakeOptions {
  /** The key the fake expects as a Bearer token; default "test-key". */
  apiKey?: string;
  handler?: FakeHandler;
  /** Model ids the models endpoint knows; default the project's two default models. */
  models?: string[];
  /** What "now" is for the prompt cache's TTLs; the wall clock unless given (simulations pass their virtual clock). */
  clock?: { now(): Date };
}

/** What the models endpoint can be told to answer instead: a key without permission, an overload. */
type LookupFault = "403" | "529";

export interface MessagesApiFake {
  /** The base URL to give the SDK (ANTHROPIC_BASE_URL); requests go to `${url}/v1/messages`. */
  url: string;
  /**
   * The same fake without the socket, for the SDK's `fetch` option: the simulations' month makes
   * a few thousand calls, and the loopback HTTP on both ends was a tenth of its time. Faults and
   * delays behave as over the socket; whatever URL it is given, it answers as the fake.
   */
  fetch: typeof fetch;
  apiKey: string;
  requests: RecordedRequest[];
  /** Requests the real API would have rejected, each explained. Tests should expect it empty. */
  problems: string[];
  /** Queues answers, used first to last, before the handler. */
  enqueue(...responses: FakeResponse[]): void;
  setHandler(handler: FakeHandler | undefined): void;
  /** The next `count` requests (default 1) get this fault instead of an answer. */
  failNext(kind: FaultKind, count?: number, options?: FaultOptions): void;
  /** Number of scripted answers not used yet. */
  pending(): number;
  /** Model ids asked for at `GET /v1/models/{id}`, in order, whatever was answered. */
  modelLookups: string[];
  /** Every models lookup from now on gets this fault; undefined answers normally again. */
  failLookups(fault: LookupFault | undefined): void;
  close(): Promise<void>;
}

/** A text answer. */
export function textReply(text: string, usage?: Partial<FakeUsage>): FakeResponse {
  return { content: [{ type: "text", text }], ...(usage ? { usage } : {}) };
}

/** An answer that calls one tool (optionally after some text). */
export function toolReply(
  name: string,
  input: Record<string, unknown>,
  options: { text?: string; usage?: Partial<FakeUsage> } = {},
): FakeResponse {
  const content: FakeBlock[] = options.text ? [{ type: "text", text: options.text }] : [];
  content.push({ type: "tool_use", name, input });
  return { content, ...(options.usage ? { usage: options.usage } : {}) };
}

/** The text of the last user turn of a request (text blocks and tool results joined). */
export function lastUserText(body: MessagesRequestBody): string {
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  if (!last) return "";
  if (typeof last.content === "string") return last.content;
  return last.content
    .map((b) =>
      b.type === "text" ? String(b.text) : b.type === "tool_result" ? String(b.content ?? "") : "",
    )
    .join("\n");
}

/** The system prompt of a request as one string. */
export function systemText(body: MessagesRequestBody): string {
  if (body.system === undefined) return "";
  return typeof body.system === "string" ? body.system : body.system.map((b) => b.text).join("\n");
}

/** A request as the fake reads it, whether it came over the socket or through the in-process fetch. */
interface FakeRequest {
  method: string;
  /** The path and query, as an HTTP request line has them. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Whether the caller stopped waiting (a closed socket, an aborted fetch). */
  gone(): boolean;
}

/** What the fake answers: JSON with a status, a dropped connection, or nothing to a caller that left. */
type FakeReply = JsonReply | "reset" | "gone";

/** An answer with a body: its status, headers beyond the usual ones (replyHeaders), and JSON payload. */
interface JsonReply {
  status: number;
  headers?: Record<string, string>;
  payload: unknown;
}

interface QueuedFault {
  kind: FaultKind;
  options: FaultOptions;
}

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startMessagesApiFake(options: MessagesApiFakeOptions = {}): Promise<MessagesApiFake> {
  const apiKey = options.apiKey ?? "test-key";
  const queue: FakeResponse[] = [];
  const faults: QueuedFault[] = [];
  const requests: RecordedRequest[] = [];
  const problems: string[] = [];
  const cache = new PromptCache(options.clock ?? { now: () => new Date() });
  let handler = options.handler;
  let messageCounter = 0;
  const models = new Set(options.models ?? [DEFAULT_MODEL, DEFAULT_REFLECT_MODEL]);
  const modelLookups: string[] = [];
  let lookupFault: LookupFault | undefined;

  const server = createServer((req, res) => {
    void (async () => {
      const reply = await serve({
        method: req.method ?? "GET",
        url: req.url ?? "",
        headers: req.headers,
        body: await readBody(req),
        gone: () => res.destroyed,
      });
      if (reply === "reset") req.socket.destroy();
      else if (reply !== "gone") sendJson(res, reply);
    })().catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, errorReply(500, "api_error", `fake failed: ${String(error)}`));
    });
  });

  /**
   * The same API without the socket: what the SDK's `fetch` option takes. A dropped connection
   * fails as the platform's fetch fails then, and a request whose caller gives up (the SDK's
   * timeout) rejects at once with the abort's reason, while the fake's answer is dropped.
   */
  async function fetchInProcess(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const request = input instanceof Request ? input : undefined;
    const signal = init.signal ?? request?.signal ?? undefined;
    const headers = new Headers(init.headers ?? request?.headers);
    const body =
      typeof init.body === "string"
        ? init.body
        : init.body !== undefined && init.body !== null
          ? await new Response(init.body).text()
          : ((await request?.text()) ?? "");
    const served = serve({
      method: (init.method ?? request?.method ?? "GET").toUpperCase(),
      url: new URL(request?.url ?? String(input)).pathname,
      headers: Object.fromEntries(headers),
      body,
      gone: () => signal?.aborted ?? false,
    });
    const reply = await (signal ? untilAborted(served, signal) : served);
    if (reply === "gone")
      throw signal?.reason ?? new DOMException("This operation was aborted", "AbortError");
    if (reply === "reset") throw new TypeError("fetch failed", { cause: new Error("other side closed") });
    return new Response(JSON.stringify(reply.payload), {
      status: reply.status,
      headers: { ...replyHeaders(), ...reply.headers },
    });
  }

  /** The fake's answer to one request, however it came; "gone" when the caller left before it. */
  async function serve(req: FakeRequest): Promise<FakeReply> {
    const raw = req.body;
    const path = req.url.split("?")[0] ?? "";
    if (req.method === "GET" && path.startsWith(MODELS_PATH)) {
      return lookUpModel(req, decodeURIComponent(path.slice(MODELS_PATH.length)));
    }
    if (req.method !== "POST" || path !== "/v1/messages") {
      return errorReply(404, "not_found_error", `fake: no route for ${req.method} ${req.url}`);
    }
    let body: MessagesRequestBody;
    try {
      body = JSON.parse(raw) as MessagesRequestBody;
    } catch {
      return errorReply(400, "invalid_request_error", "fake: body is not JSON");
    }
    const record: RecordedRequest = { body, headers: { ...req.headers }, outcome: "answered" };
    requests.push(record);
    const index = requests.length - 1;

    const fault = takeFault();
    if (fault) {
      record.outcome = fault.kind;
      const faulted = await applyFault(fault, req);
      if (faulted) return faulted;
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      record.outcome = "401";
      return errorReply(401, "authentication_error", "invalid x-api-key");
    }
    const blocks = cacheBlocks(body);
    const invalid = validateRequest(body, req.headers, blocks, raw.length);
    if (invalid) return reject(record, index, invalid);

    const scripted = queue.shift() ?? (handler ? await handler(body, index) : undefined);
    if (!scripted) return reject(record, index, "nothing scripted for this request");
    const disobeyed = checkToolChoice(body, scripted);
    if (disobeyed) return reject(record, index, disobeyed);

    if (scripted.delayMs) await sleep(scripted.delayMs);
    if (req.gone()) return "gone";
    return { status: 200, payload: buildMessage(body, blocks, scripted) };
  }

  /** GET /v1/models/{id}: the model's record, as the real endpoint gives it, or its errors. */
  function lookUpModel(req: FakeRequest, id: string): FakeReply {
    modelLookups.push(id);
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return errorReply(401, "authentication_error", "invalid x-api-key");
    }
    if (lookupFault === "403") {
      return errorReply(
        403,
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
      );
    }
    if (lookupFault === "529") return errorReply(529, "overloaded_error", "Overloaded");
    if (!models.has(id)) return errorReply(404, "not_found_error", `model: ${id}`);
    return {
      status: 200,
      payload: {
        type: "model",
        id,
        display_name: id,
        created_at: "2026-01-01T00:00:00Z",
        lifecycle: "active",
      },
    };
  }

  function reject(record: RecordedRequest, index: number, why: string): FakeReply {
    record.outcome = "rejected";
    problems.push(`request #${index}: ${why}`);
    return errorReply(400, "invalid_request_error", `fake: ${why}`);
  }

  function takeFault(): QueuedFault | undefined {
    return faults.shift();
  }

  /** The fault's answer; undefined when the request should still be answered (slow, and still waited for). */
  async function applyFault(fault: QueuedFault, req: FakeRequest): Promise<FakeReply | undefined> {
    const headers: Record<string, string> =
      fault.options.retryAfterMs === undefined
        ? {}
        : { "retry-after-ms": String(fault.options.retryAfterMs) };
    switch (fault.kind) {
      case "429":
        headers["retry-after"] = String(fault.options.retryAfterSeconds ?? 1);
        return errorReply(
          429,
          "rate_limit_error",
          "Number of request tokens has exceeded your rate limit",
          headers,
        );
      case "500":
        return errorReply(500, "api_error", "Internal server error", headers);
      case "529":
        return errorReply(529, "overloaded_error", "Overloaded", headers);
      case "401":
        return errorReply(401, "authentication_error", "invalid x-api-key", headers);
      case "400":
        return errorReply(400, "invalid_request_error", "fake: injected bad request", headers);
      case "reset":
        return "reset";
      case "slow":
        await sleep(fault.options.delayMs ?? 2_000);
        return req.gone() ? "gone" : undefined;
    }
  }

  function buildMessage(
    body: MessagesRequestBody,
    blocks: readonly CacheBlock[],
    scripted: FakeResponse,
  ): Record<string, unknown> {
    messageCounter += 1;
    let toolCounter = 0;
    const content = scripted.content.map((block) => {
      if (block.type === "text") return { type: "text", text: block.text, citations: null };
      toolCounter += 1;
      return {
        type: "tool_use",
        id: block.id ?? `toolu_fake_${messageCounter}_${toolCounter}`,
        name: block.name,
        input: block.input,
        caller: { type: "direct" },
      };
    });
    const usesTool = scripted.content.some((b) => b.type === "tool_use");
    return {
      id: `msg_fake_${messageCounter}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: scripted.stop_reason ?? (usesTool ? "tool_use" : "end_turn"),
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: { ...estimateUsage(body, blocks, scripted), ...scripted.usage, service_tier: "standard" },
    };
  }

  /** Usage as the real API would count it, with the prompt cache modelled on the fake's clock. */
  function estimateUsage(
    body: MessagesRequestBody,
    blocks: readonly CacheBlock[],
    scripted: FakeResponse,
  ): FakeUsage {
    const cached = cache.measure(body.model, blocks);
    return {
      input_tokens: cached.input,
      output_tokens: estimateTokens(JSON.stringify(scripted.content)),
      cache_creation_input_tokens: cached.cacheWrite5m + cached.cacheWrite1h,
      cache_read_input_tokens: cached.cacheRead,
      cache_creation: {
        ephemeral_5m_input_tokens: cached.cacheWrite5m,
        ephemeral_1h_input_tokens: cached.cacheWrite1h,
      },
    };
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    fetch: fetchInProcess,
    apiKey,
    requests,
    problems,
    enqueue: (...responses) => {
      queue.push(...responses);
    },
    setHandler: (next) => {
      handler = next;
    },
    failNext: (kind, count = 1, faultOptions = {}) => {
      for (let i = 0; i < count; i++) faults.push({ kind, options: faultOptions });
    },
    pending: () => queue.length,
    modelLookups,
    failLookups: (fault) => {
      lookupFault = fault;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Where the models endpoint lives; the model id follows. */
const MODELS_PATH = "/v1/models/";

/** What the real API would reject before running the model; undefined when the request is fine. */
function validateRequest(
  body: MessagesRequestBody,
  headers: FakeRequest["headers"],
  blocks: readonly CacheBlock[],
  bodyLength: number,
): string | undefined {
  if (!headers["anthropic-version"]) return "missing anthropic-version header";
  for (const banned of ["temperature", "top_p", "top_k"]) {
    if (banned in body) return `${banned} is not supported by this API version`;
  }
  if (typeof body.model !== "string" || body.model === "") return "model is required";
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    return "max_tokens must be a positive integer";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "messages must not be empty";
  if (body.messages[0]?.role !== "user") return "the first message must use the user role";
  const toolNames = new Set((body.tools ?? []).map((t) => t.name));
  if (toolNames.size !== (body.tools ?? []).length) return "tool names must be unique";
  const choice = body.tool_choice;
  if (choice?.type === "tool" && !toolNames.has(choice.name ?? "")) {
    return `tool_choice names tool "${choice.name}" which is not in tools`;
  }
  if ((choice?.type === "any" || choice?.type === "tool") && toolNames.size === 0) {
    return "tool_choice requires tools";
  }
  return breakpointProblem(blocks) ?? validateTurns(body.messages) ?? contextProblem(body, bodyLength);
}

/** The context window of the models the project uses (input and output together). */
const CONTEXT_WINDOW_TOKENS = 200_000;

/**
 * What a PDF page costs in the fake: the middle of the 1,500–3,000 tokens the API documents. The
 * fake counts on its own (not with the project's estimate), so a test of the project's document
 * bound is checked against an independent count.
 */
const FAKE_PDF_PAGE_TOKENS = 2_000;

/** A prompt that does not fit the context window, as the real API words it; undefined when it fits. */
function contextProblem(body: MessagesRequestBody, bodyLength: number): string | undefined {
  if (surelyFits(body, bodyLength)) return undefined;
  const tokens = promptTokens(body);
  return tokens + body.max_tokens > CONTEXT_WINDOW_TOKENS
    ? `prompt is too long: ${tokens} tokens > ${CONTEXT_WINDOW_TOKENS - body.max_tokens} maximum`
    : undefined;
}

/**
 * Whether a prompt of text alone fits however it is counted: promptTokens counts at most a token
 * per character of the JSON it sizes, which is the request body's own (each string content as a
 * text block adds 32 at most, an absent system or tools 2 each). Images and documents are counted
 * by their pages, not their characters, so such a request is always counted. A simulated month
 * makes thousands of requests a fifth of the window long.
 */
function surelyFits(body: MessagesRequestBody, bodyLength: number): boolean {
  const media = body.messages.some(
    (m) =>
      typeof m.content !== "string" && m.content.some((b) => b.type === "image" || b.type === "document"),
  );
  const mostTokens = bodyLength + 4 + 32 * body.messages.length;
  return !media && mostTokens + body.max_tokens <= CONTEXT_WINDOW_TOKENS;
}

/**
 * The prompt's size, estimated: text by the project's estimator, an image as about a megapixel
 * picture (1,600), a PDF by its page objects (`/Type /Page`, at least one) at FAKE_PDF_PAGE_TOKENS.
 */
function promptTokens(body: MessagesRequestBody): number {
  let tokens =
    estimateTokens(JSON.stringify(body.system ?? "")) + estimateTokens(JSON.stringify(body.tools ?? []));
  for (const message of body.messages) {
    const blocks =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    for (const block of blocks) {
      const source = (block.source ?? {}) as Record<string, unknown>;
      if (block.type === "image") tokens += 1_600;
      else if (block.type === "document" && source.type === "base64" && typeof source.data === "string") {
        const pages = Buffer.from(source.data, "base64")
          .toString("latin1")
          .match(/\/Type\s*\/Page(?![A-Za-z])/g);
        tokens += Math.max(1, pages?.length ?? 0) * FAKE_PDF_PAGE_TOKENS;
      } else tokens += estimateTokens(JSON.stringify(block));
    }
  }
  return tokens;
}

function validateTurns(messages: MessagesRequestBody["messages"]): string | undefined {
  let openToolUses: string[] = [];
  for (const [i, message] of messages.entries()) {
    const previous = messages[i - 1];
    if (previous && previous.role === message.role) {
      return `messages.${i}: roles must alternate (two "${message.role}" turns in a row)`;
    }
    const blocks =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (blocks.length === 0) return `messages.${i}: content must not be empty`;
    for (const block of blocks) {
      if (block.type === "text" && (typeof block.text !== "string" || block.text.trim() === "")) {
        return `messages.${i}: text content blocks must be non-empty`;
      }
      if (block.type === "document") {
        const problem = documentProblem(block.source);
        if (problem) return `messages.${i}: document block: ${problem}`;
      }
    }
    if (message.role === "user") {
      const results = blocks.filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id));
      const missing = openToolUses.filter((id) => !results.includes(id));
      if (missing.length > 0)
        return `messages.${i}: tool_use ids without a tool_result: ${missing.join(", ")}`;
      const stray = results.filter((id) => !openToolUses.includes(id));
      if (stray.length > 0) return `messages.${i}: tool_result for unknown tool_use ids: ${stray.join(", ")}`;
      openToolUses = [];
    } else {
      openToolUses = blocks.filter((b) => b.type === "tool_use").map((b) => String(b.id));
    }
  }
  if (openToolUses.length > 0) return "the last assistant turn has tool_use blocks without results";
  return undefined;
}

/**
 * What the real API would refuse in a document block's source, as far as the project sends them:
 * a base64 PDF that is not one (or over 32 MB), or plain text that is empty or not text/plain.
 */
function documentProblem(source: unknown): string | undefined {
  const { type, media_type: mediaType, data } = (source ?? {}) as Record<string, unknown>;
  if (typeof data !== "string") return "source.data must be a string";
  if (type === "base64" && mediaType === "application/pdf") {
    const bytes = Buffer.from(data, "base64");
    if (bytes.byteLength > 32 * 1024 * 1024) return "the PDF is larger than 32 MB";
    return bytes.subarray(0, 1024).toString("latin1").includes("%PDF-")
      ? undefined
      : "the PDF specified was not valid";
  }
  if (type === "text" && mediaType === "text/plain")
    return data.trim() === "" ? "the text is empty" : undefined;
  return `unsupported source ${String(type)} ${String(mediaType)}`;
}

/** Whether a scripted answer obeys the request's tool_choice; undefined when it does. */
function checkToolChoice(body: MessagesRequestBody, scripted: FakeResponse): string | undefined {
  const used = scripted.content.filter((b) => b.type === "tool_use").map((b) => b.name);
  const defined = new Set((body.tools ?? []).map((t) => t.name));
  const undefinedTool = used.find((name) => !defined.has(name));
  if (undefinedTool)
    return `the scripted answer uses tool "${undefinedTool}" which the request does not define`;
  const choice = body.tool_choice;
  if (choice?.type === "none" && used.length > 0) {
    return `tool_choice is none but the scripted answer uses ${used.join(", ")}`;
  }
  if (choice?.type === "any" && used.length === 0)
    return "tool_choice is any but the scripted answer uses no tool";
  if (choice?.type === "tool" && !used.includes(choice.name ?? "")) {
    return `tool_choice forces "${choice.name}" but the scripted answer uses ${used.length ? used.join(", ") : "no tool"}`;
  }
  return undefined;
}

function sendJson(res: ServerResponse, reply: JsonReply): void {
  res.writeHead(reply.status, { ...replyHeaders(), ...reply.headers });
  res.end(JSON.stringify(reply.payload));
}

/** The headers every answer carries. */
function replyHeaders(): Record<string, string> {
  return { "content-type": "application/json", "request-id": `req_fake_${Date.now()}` };
}

/** An error answer, shaped as the real API's. */
function errorReply(
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
): JsonReply {
  return { status, headers, payload: { type: "error", error: { type, message } } };
}

/** `answer`, or "gone" as soon as `signal` aborts (the answer is then dropped). */
function untilAborted(answer: Promise<FakeReply>, signal: AbortSignal): Promise<FakeReply> {
  if (signal.aborted) return Promise.resolve("gone");
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve("gone");
    signal.addEventListener("abort", onAbort, { once: true });
    answer.then(
      (reply) => {
        signal.removeEventListener("abort", onAbort);
        resolve(reply);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Model settings that point the real SDK at a fake: the same defaults for every test (no
 * SDK retries, so each fault is one request; no budget), with what a test cares about overridden.
 */
export function fakeModelConfig(
  api: Pick<MessagesApiFake, "url" | "apiKey">,
  overrides: Partial<ModelConfig> = {},
): ModelConfig {
  return {
    apiKey: api.apiKey,
    baseURL: api.url,
    model: "claude-sonnet-5-5",
    reflectModel: "claude-haiku-5-5",
    decideModel: "claude-haiku-5-5",
    maxRetries: 0,
    timeoutMs: 5_000,
    dailyTokenBudget: 0,
    promptCeiling: 12_000,
    reflectMode: "two-phase",
    answeredTopicHours: 6,
    prices: shippedPriceTable(),
    ...overrides,
  };
}
