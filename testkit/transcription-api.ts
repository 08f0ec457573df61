import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A loopback OpenAI-compatible transcription endpoint, for the real client (global fetch and
 * FormData) and the real process in end-to-end tests. It reads the multipart form as the hosted
 * service does and is as strict: a `file` part whose name ends in an accepted format and whose
 * content type matches it (`.oga` is refused, as several services refuse it), a `model`, a
 * `response_format` of `json` if any, the key as a Bearer token, at most 25 MB; a request it
 * would refuse is answered 400 (401 for the key, 413 for the size) in OpenAI's error shape and
 * listed in `problems`.
 *
 * ```ts
 * const api = await startTranscriptionFake();          // api.url ends in /v1; key "tr-key"
 * api.answer("I think it went well");                   // or (request) => words
 * api.failNext("500");                                  // also 400, 401, 404, 413, hang, stall, reset, empty, not-json
 * api.requests[0];                                      // file name, content type, bytes, model, key
 * await api.down();                                     // stops listening: it cannot be reached
 * ```
 *
 * `GET {base}/models` (what `start` checks it answers with) lists one model, or answers 404 with
 * `models: false`, as whisper.cpp's server, which has no such route. With `video: false` it
 * refuses video (a round video note's MP4) as a service that takes audio only.
 */

/** One transcription request, as the fake read it. */
interface TranscriptionRequest {
  fileName: string | null;
  contentType: string | null;
  bytes: Uint8Array;
  model: string | null;
  language: string | null;
  responseFormat: string | null;
  authorization: string | undefined;
  /** What the fake did: answered, a fault it was told to produce, or rejected (see problems). */
  outcome: "answered" | "rejected" | TranscriptionFault;
}

/**
 * What the fake can be told to do instead of answering: an error status, no answer at all, an
 * answer that stops half-way through its body (`stall`: the headers and part of the JSON, then
 * nothing), a cut connection, no words, a body that is not JSON.
 */
type TranscriptionFault =
  | "400"
  | "401"
  | "404"
  | "413"
  | "500"
  | "hang"
  | "stall"
  | "reset"
  | "empty"
  | "not-json";

export interface TranscriptionApiFake {
  /** The base to set as PRESENCE_TRANSCRIBE_URL: http://127.0.0.1:<port>/v1. */
  readonly url: string;
  /** The key it expects as a Bearer token; null when it takes any (a local server). */
  readonly apiKey: string | null;
  readonly requests: TranscriptionRequest[];
  /** Every GET it answered (the start check), by path, with the authorization it carried. */
  readonly lookups: { path: string; authorization: string | undefined }[];
  /** What the real service would have refused. */
  readonly problems: string[];
  /** What it answers from now on: the words, or the words for a request. */
  answer(words: string | ((request: TranscriptionRequest) => string)): void;
  /** The next `count` transcription requests get `fault`. */
  failNext(fault: TranscriptionFault, count?: number): void;
  /** Stops listening (open connections are cut): from now on it cannot be reached. */
  down(): Promise<void>;
  close(): Promise<void>;
}

export interface TranscriptionFakeOptions {
  /** The key expected as a Bearer token ("tr-key" by default); null takes any, as a local server. */
  apiKey?: string | null;
  /** Whether GET {base}/models answers (true by default); false answers 404, as whisper.cpp. */
  models?: boolean;
  /** Whether it takes video (an MP4 video note); true by default. */
  video?: boolean;
}

/** The endings the hosted service accepts, with the content types that go with each. */
const ACCEPTED: Record<string, readonly string[]> = {
  flac: ["audio/flac", "audio/x-flac"],
  m4a: ["audio/mp4", "audio/m4a", "audio/x-m4a"],
  mp3: ["audio/mpeg", "audio/mp3"],
  mp4: ["video/mp4", "audio/mp4"],
  mpeg: ["audio/mpeg", "video/mpeg"],
  mpga: ["audio/mpeg"],
  ogg: ["audio/ogg", "application/ogg"],
  wav: ["audio/wav", "audio/x-wav", "audio/wave"],
  webm: ["audio/webm", "video/webm"],
};

/** The hosted service's limit on one file. */
const MAX_BYTES = 25 * 1024 * 1024;

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startTranscriptionFake(
  options: TranscriptionFakeOptions = {},
): Promise<TranscriptionApiFake> {
  const apiKey = options.apiKey === undefined ? "tr-key" : options.apiKey;
  const requests: TranscriptionRequest[] = [];
  const lookups: { path: string; authorization: string | undefined }[] = [];
  const problems: string[] = [];
  const faults: TranscriptionFault[] = [];
  const sockets = new Set<Socket>();
  let words: (request: TranscriptionRequest) => string = () => "Hello from a voice note.";

  const keyProblem = (req: IncomingMessage): string | null =>
    apiKey !== null && req.headers.authorization !== `Bearer ${apiKey}`
      ? `the key was not sent as "Authorization: Bearer ${apiKey}" (got ${req.headers.authorization ?? "none"})`
      : null;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const body = await readBody(req);
    if (req.method === "GET") {
      lookups.push({ path, authorization: req.headers.authorization });
      if (path === "/v1/models" && options.models !== false) {
        if (keyProblem(req)) return error(res, 401, "Incorrect API key provided.");
        return json(res, 200, { object: "list", data: [{ id: "whisper-1", object: "model" }] });
      }
      return error(res, 404, `no route ${path}`);
    }
    if (req.method !== "POST" || path !== "/v1/audio/transcriptions")
      return error(res, 404, `no route ${path}`);
    const request = await readForm(req, body);
    requests.push(request);
    const fault = faults.shift();
    if (fault !== undefined) {
      request.outcome = fault;
      if (fault === "hang") return; // never answered: the socket stays open until close()
      if (fault === "reset") {
        req.socket.destroy();
        return;
      }
      if (fault === "stall") {
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"text": "I think the');
        return; // the rest never comes: the socket stays open until close()
      }
      if (fault === "empty") return json(res, 200, { text: "" });
      if (fault === "not-json") {
        res.writeHead(200, { "content-type": "text/html" }).end("<html><body>It works!</body></html>");
        return;
      }
      const status = Number(fault);
      return error(
        res,
        status,
        status === 413 ? "Maximum content size limit exceeded." : `scripted ${fault}`,
      );
    }
    const refused = keyProblem(req);
    if (refused) {
      request.outcome = "rejected";
      problems.push(refused);
      return error(res, 401, "Incorrect API key provided.");
    }
    if (request.bytes.byteLength > MAX_BYTES) {
      request.outcome = "rejected";
      problems.push(`the file is ${request.bytes.byteLength} bytes, over 25 MB`);
      return error(res, 413, "Maximum content size limit exceeded.");
    }
    const problem = formProblem(request, options.video !== false);
    if (problem) {
      request.outcome = "rejected";
      problems.push(problem);
      return error(res, 400, problem);
    }
    json(res, 200, { text: words(request) });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => error(res, 500, `fake failed: ${String(err)}`));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
    return stopped;
  };

  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    lookups,
    problems,
    answer(given) {
      words = typeof given === "string" ? () => given : given;
    },
    failNext(fault, count = 1) {
      for (let i = 0; i < count; i++) faults.push(fault);
    },
    down: stop,
    close: stop,
  };
}

/** What the hosted service would refuse about a request's form, or null. */
function formProblem(request: TranscriptionRequest, video: boolean): string | null {
  if (request.fileName === null) return "there is no file part named `file`";
  const ending = request.fileName.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1] ?? "";
  const types = ACCEPTED[ending];
  if (!types)
    return `Invalid file format: ${request.fileName}. Supported formats: ${Object.keys(ACCEPTED).join(", ")}`;
  if (request.contentType === null || !types.includes(request.contentType))
    return `the file part's content type ${request.contentType ?? "(none)"} does not match .${ending}`;
  if (!video && request.contentType.startsWith("video/")) return "This service takes audio only, not video.";
  if (!request.model) return "you must provide a model parameter";
  if (request.responseFormat !== null && request.responseFormat !== "json")
    return `response_format ${request.responseFormat}: this fake answers json only`;
  return null;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The multipart form, read with the platform's own parser (undici's Request.formData). */
async function readForm(req: IncomingMessage, body: Buffer): Promise<TranscriptionRequest> {
  const empty: TranscriptionRequest = {
    fileName: null,
    contentType: null,
    bytes: new Uint8Array(),
    model: null,
    language: null,
    responseFormat: null,
    authorization: req.headers.authorization,
    outcome: "answered",
  };
  let form: FormData;
  try {
    form = await new Request("http://127.0.0.1/", {
      method: "POST",
      headers: { "content-type": req.headers["content-type"] ?? "" },
      body,
    }).formData();
  } catch {
    return empty;
  }
  const file = form.get("file");
  const text = (name: string) => {
    const value = form.get(name);
    return typeof value === "string" ? value : null;
  };
  return {
    ...empty,
    ...(file instanceof File
      ? {
          fileName: file.name,
          contentType: file.type || null,
          bytes: new Uint8Array(await file.arrayBuffer()),
        }
      : {}),
    model: text("model"),
    language: text("language"),
    responseFormat: text("response_format"),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, message: string): void {
  json(res, status, { error: { message, type: "invalid_request_error", param: null, code: null } });
}
