import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A loopback Telegram Bot API server for the real grammY (`new Bot(token, { client: { apiRoot } })`)
 * and for the real bot process in end-to-end tests. It speaks the wire format Telegram does —
 * `POST /bot<token>/<method>` with JSON, form or multipart bodies, answers `{ ok, result }` or
 * `{ ok: false, error_code, description, parameters? }` — and is strict where Telegram is strict,
 * so a formatting or length mistake fails here before it fails in front of a person.
 *
 * Usage:
 * ```ts
 * const fake = await startBotApiFake();            // fake.apiRoot, fake.token
 * const owner = fake.user(1001, "Ada");
 * fake.message(owner, { text: "hi" });             // queued for getUpdates
 * fake.failNext("sendMessage", { type: "rate-limit", retryAfter: 1 }, { type: "drop" });
 * const [reply] = await fake.waitForSent(1);       // what the bot sent, in order
 * await fake.close();
 * ```
 *
 * Methods: getMe (401 for any token but the fake's, like Telegram), deleteWebhook, getUpdates (long
 * poll honouring `offset` — which confirms every earlier update — `limit` and `timeout`; a second
 * concurrent poll makes the first answer 409 as Telegram does), sendMessage (400 for empty text, text
 * over 4096 characters after entity parsing, HTML that Telegram's parser refuses, entities out of
 * bounds; `chat not found` for chats that never wrote), sendChatAction, setMyCommands, editMessageText,
 * getFile (+ `GET /file/bot<token>/<path>` downloads of photos, documents and sounds), sendDocument (multipart upload),
 * setMessageReaction (one emoji on a message of the chat: 400 `MESSAGE_ID_INVALID` for a message the
 * chat does not have, `REACTION_INVALID` for a custom or empty emoji or one with the U+FE0F variation
 * selector, which Telegram's list never has). sendMessage's `reply_parameters` are recorded and,
 * without `allow_sending_without_reply`, must name a message of the chat. Anything else is
 * 404 "Not Found: method not found". MarkdownV2/Markdown parse modes are accepted unparsed.
 *
 * Faults on demand, consumed one per call of the named method (or "*" for any method):
 * `rate-limit` (429 with parameters.retry_after), `server-error` (500 or 502), `drop` (the socket is
 * destroyed without an answer), `cut-off` (the call is carried out — a message is sent, a long poll
 * waits for its updates — and the answer stops half-way: with `ending: "close"` the socket then
 * closes, with `"stall"` it stays open with nothing more until the client gives up), `slow` (the real answer after a delay), `blocked` (403 "Forbidden:
 * bot was blocked by the user"), `bad-request` (400 with the given description, e.g. "can't parse
 * entities: …" for formatting Telegram refuses on a given day). `block(chatId)` makes every send to that chat 403 until `unblock`.
 * `holdDownloads()` keeps every file download waiting until the function it returns is called (a
 * large voice note on a slow line); `downloads` lists the paths asked for.
 */

/** A Telegram user as it appears in `from`. */
interface FakeUser {
  id: number;
  is_bot: false;
  first_name: string;
  username?: string;
}

/** A chat a scripted message arrives in; private chats are the sender's own by default. */
interface FakeChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  title?: string;
  first_name?: string;
}

/** What a scripted message carries; exactly one kind of content. */
type MessageContent =
  | { text: string }
  | { photo: { bytes?: Uint8Array; path?: string; caption?: string } }
  | { voice: ScriptedSound }
  | { audio: ScriptedSound & { fileName?: string; performer?: string; title?: string } }
  | { videoNote: Omit<ScriptedSound, "caption" | "mimeType"> }
  | { sticker: { emoji?: string } }
  | {
      document: {
        fileName: string;
        mimeType?: string;
        caption?: string;
        /** The file's contents, served by getFile and the download route; none when absent. */
        bytes?: Uint8Array;
        /** The size Telegram announces, when it should differ from the bytes' (a file too large to serve). */
        fileSize?: number;
      };
    }
  | { location: { latitude: number; longitude: number } };

/**
 * A voice note, audio file or video note. With `bytes` it is served by getFile and the download
 * route (a voice note under `voice/…oga` as Telegram names it, audio under `music/`, a video note
 * under `video_notes/…mp4`); without, getFile does not know it.
 */
interface ScriptedSound {
  duration: number;
  caption?: string;
  bytes?: Uint8Array;
  /** Telegram's mime type; a voice note's is audio/ogg unless given. */
  mimeType?: string;
  /** The size Telegram announces, when it should differ from the bytes' (a file too large to serve). */
  fileSize?: number;
}

/** A scripted incoming message, with the identifiers the bot will see. */
interface ScriptedMessage {
  updateId: number;
  messageId: number;
  chatId: number;
  from: FakeUser;
}

/** A failure the fake produces instead of (or before) the real answer. */
type Fault =
  | { type: "rate-limit"; retryAfter: number }
  | { type: "server-error"; status: 500 | 502 }
  | { type: "drop" }
  | { type: "cut-off"; ending: "close" | "stall" }
  | { type: "slow"; ms: number }
  | { type: "blocked" }
  | { type: "bad-request"; description: string };

/** One message the bot got through, in the order Telegram accepted it. */
interface SentRecord {
  method: "sendMessage" | "sendDocument";
  chatId: number;
  messageId: number;
  /** The text as the person sees it (HTML tags removed, entities decoded); a document's caption. */
  text: string;
  /** The text exactly as sent, before HTML parsing. */
  rawText: string;
  parseMode?: string;
  entities?: unknown[];
  document?: { fileName: string; bytes: Uint8Array };
  /** Set when editMessageText changed this message. */
  editedText?: string;
  /** The message it was sent as a reply to (`reply_parameters`), when it was. */
  replyTo?: { messageId: number; allowSendingWithoutReply: boolean };
}

/** A reaction the bot put on a message (setMessageReaction); an empty list takes the reaction away. */
interface ReactionRecord {
  chatId: number;
  messageId: number;
  emoji: string[];
}

/** Every request the fake answered, with its outcome; for asserting retries and order. */
interface CallRecord {
  method: string;
  params: Record<string, unknown>;
  /** The HTTP status answered; "dropped" for no answer; "cut-off" for an answer stopped half-way. */
  status: number | "dropped" | "cut-off";
  at: number;
}

export interface BotApiFake {
  readonly apiRoot: string;
  readonly token: string;
  readonly botUser: { id: number; is_bot: true; first_name: string; username: string };
  /** Messages the bot got through (sendMessage, sendDocument), in order. */
  readonly sent: SentRecord[];
  /** Every request answered, in order, including failed ones. */
  readonly calls: CallRecord[];
  /** Reactions the bot set, in order. */
  readonly reactions: ReactionRecord[];
  /** Chat actions ("typing"…) in order. */
  readonly actions: { chatId: number; action: string }[];
  /** The commands from the last setMyCommands. */
  readonly commands: { command: string; description: string }[];
  /** The file paths downloaded (`GET /file/bot<token>/<path>`), in the order asked for. */
  readonly downloads: string[];
  /** Holds every file download, from now on, until the returned function is called. */
  holdDownloads(): () => void;
  /** Creates (or returns) a user; their private chat becomes known to the bot once they write. */
  user(id: number, firstName: string, username?: string): FakeUser;
  /**
   * Queues a message from a user as an update for getUpdates; `sentAt` dates it earlier than now
   * (Telegram's `date`, whole seconds), as a message sent while the bot was not running.
   */
  message(
    from: FakeUser,
    content: MessageContent,
    options?: { chat?: FakeChat; sentAt?: Date },
  ): ScriptedMessage;
  /** Queues an `edited_message` update changing a scripted message: a text message's text, or another's caption. */
  edit(original: ScriptedMessage, text: string): number;
  /** Stores a file for getFile and download; returns its file_id. */
  addFile(bytes: Uint8Array, path: string): string;
  /** Queues faults for the next calls of a method ("*" for any method), consumed in order. */
  failNext(method: string, ...faults: Fault[]): void;
  /** Every send to this chat answers 403 blocked until unblock. */
  block(chatId: number): void;
  unblock(chatId: number): void;
  /** Updates queued and not yet confirmed by an offset. */
  pendingUpdates(): number;
  /** Resolves with `sent` once it holds at least `count` records; rejects after the timeout. */
  waitForSent(count: number, timeoutMs?: number): Promise<SentRecord[]>;
  /** Resolves once a call matching the predicate was answered; rejects after the timeout. */
  waitForCall(predicate: (call: CallRecord) => boolean, timeoutMs?: number): Promise<CallRecord>;
  close(): Promise<void>;
}

export interface BotApiFakeOptions {
  /** The only token getMe accepts; a valid-looking random one by default. */
  token?: string;
  /** Chats the bot may write to before they write (e.g. an owner from an earlier run). */
  knownChats?: number[];
  port?: number;
}

const TEXT_LIMIT = 4096;
const CAPTION_LIMIT = 1024;

interface TelegramFailure {
  status: number;
  description: string;
  parameters?: Record<string, unknown>;
}

class ApiFailure extends Error {
  constructor(readonly failure: TelegramFailure) {
    super(failure.description);
  }
}

function badRequest(description: string): ApiFailure {
  return new ApiFailure({ status: 400, description: `Bad Request: ${description}` });
}

/** Starts the fake on 127.0.0.1 (a free port unless given). */
export async function startBotApiFake(options: BotApiFakeOptions = {}): Promise<BotApiFake> {
  const token = options.token ?? `4242424242:${randomBytes(18).toString("base64url")}`;
  const botUser = {
    id: Number(token.split(":")[0]) || 4242424242,
    is_bot: true as const,
    first_name: "Presence",
    username: "presence_test_bot",
  };
  const users = new Map<number, FakeUser>();
  const knownChats = new Set<number>(options.knownChats ?? []);
  const blocked = new Set<number>();
  const faults = new Map<string, Fault[]>();
  const files = new Map<string, { bytes: Uint8Array; path: string }>();
  const downloads: string[] = [];
  let downloadsHeld: Promise<void> = Promise.resolve();
  const scriptedMessages = new Map<number, { message: Record<string, unknown>; chatId: number }>();
  const sent: SentRecord[] = [];
  const reactions: ReactionRecord[] = [];
  /** Every message of each chat, "chatId:messageId": what a reply or a reaction may name. */
  const chatMessages = new Set<string>();
  const calls: CallRecord[] = [];
  const actions: { chatId: number; action: string }[] = [];
  const commands: { command: string; description: string }[] = [];
  let updates: Record<string, unknown>[] = [];
  let nextUpdateId = 500_000;
  let nextMessageId = 1;
  let poll:
    | { respond: (list: Record<string, unknown>[]) => void; fail: (f: TelegramFailure) => void }
    | undefined;
  const sentWaiters = new Set<() => void>();
  const sockets = new Set<import("node:net").Socket>();

  const now = () => Math.floor(Date.now() / 1000);
  const addFile = (bytes: Uint8Array, path: string): string => {
    const fileId = `file${files.size + 1}_${randomBytes(4).toString("hex")}`;
    files.set(fileId, { bytes, path });
    return fileId;
  };
  const notify = () => {
    for (const w of [...sentWaiters]) w();
  };

  function pushUpdate(update: Record<string, unknown>): void {
    updates.push(update);
    if (poll) {
      const waiting = poll;
      poll = undefined;
      waiting.respond([update]);
    }
  }

  /** A sound's file fields: served when it has bytes, its announced size as given or theirs. */
  function soundFile(sound: Omit<ScriptedSound, "caption" | "mimeType">, unknownId: string, path: string) {
    const fileId = sound.bytes ? addFile(sound.bytes, path) : unknownId;
    const size = sound.fileSize ?? sound.bytes?.byteLength;
    return {
      file_id: fileId,
      file_unique_id: `u${fileId}`,
      duration: sound.duration,
      ...(size !== undefined ? { file_size: size } : {}),
    };
  }

  function chatFor(from: FakeUser, chat?: FakeChat): FakeChat {
    return chat ?? { id: from.id, type: "private", first_name: from.first_name };
  }

  function takeFault(method: string): Fault | undefined {
    for (const key of [method, "*"]) {
      const queue = faults.get(key);
      if (queue && queue.length > 0) return queue.shift();
    }
    return undefined;
  }

  function requireChat(params: Record<string, unknown>): number {
    const chatId = Number(params.chat_id);
    if (!Number.isFinite(chatId) || params.chat_id === undefined) throw badRequest("chat_id is empty");
    if (blocked.has(chatId)) {
      throw new ApiFailure({ status: 403, description: "Forbidden: bot was blocked by the user" });
    }
    if (!knownChats.has(chatId)) throw badRequest("chat not found");
    return chatId;
  }

  function outgoingMessage(chatId: number, extra: Record<string, unknown>): Record<string, unknown> {
    const chat = users.get(chatId);
    if (extra.message_id === undefined) chatMessages.add(`${chatId}:${nextMessageId}`);
    return {
      message_id: nextMessageId++,
      date: now(),
      from: botUser,
      chat: { id: chatId, type: "private", ...(chat ? { first_name: chat.first_name } : {}) },
      ...extra,
    };
  }

  const methods: Record<string, (params: Record<string, unknown>) => unknown> = {
    getMe: () => ({
      ...botUser,
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    }),
    deleteWebhook: () => true,
    setMyCommands: (params) => {
      const list = parseJsonParam(params.commands);
      if (!Array.isArray(list)) throw badRequest("commands must be an array");
      commands.splice(0, commands.length, ...(list as { command: string; description: string }[]));
      return true;
    },
    sendChatAction: (params) => {
      const chatId = requireChat(params);
      actions.push({ chatId, action: String(params.action) });
      return true;
    },
    sendMessage: (params) => {
      const chatId = requireChat(params);
      const rawText = typeof params.text === "string" ? params.text : "";
      const parseMode = typeof params.parse_mode === "string" ? params.parse_mode : undefined;
      const entities = parseJsonParam(params.entities) as unknown[] | undefined;
      const visible = parseMode === "HTML" ? parseTelegramHtml(rawText).text : rawText;
      if (visible.trim().length === 0) throw badRequest("message text is empty");
      if (visible.length > TEXT_LIMIT) throw badRequest("message is too long");
      if (entities !== undefined) validateEntities(entities, visible);
      const replyTo = replyParameters(chatId, params.reply_parameters);
      const message = outgoingMessage(chatId, { text: visible, ...(entities ? { entities } : {}) });
      sent.push({
        method: "sendMessage",
        chatId,
        messageId: message.message_id as number,
        text: visible,
        rawText,
        ...(parseMode ? { parseMode } : {}),
        ...(entities ? { entities } : {}),
        ...(replyTo ? { replyTo } : {}),
      });
      notify();
      return message;
    },
    setMessageReaction: (params) => {
      const chatId = requireChat(params);
      const messageId = Number(params.message_id);
      if (!chatMessages.has(`${chatId}:${messageId}`)) throw badRequest("MESSAGE_ID_INVALID");
      const list = parseJsonParam(params.reaction) ?? [];
      if (!Array.isArray(list) || list.length > 1) throw badRequest("REACTION_INVALID");
      const emoji = list.map((r: { type?: unknown; emoji?: unknown }) => {
        const valid = r?.type === "emoji" && typeof r.emoji === "string" && r.emoji !== "";
        if (!valid || (r.emoji as string).includes("\uFE0F")) throw badRequest("REACTION_INVALID");
        return r.emoji as string;
      });
      reactions.push({ chatId, messageId, emoji });
      notify();
      return true;
    },
    editMessageText: (params) => {
      const chatId = requireChat(params);
      const messageId = Number(params.message_id);
      const record = sent.find((s) => s.chatId === chatId && s.messageId === messageId);
      if (!record) throw badRequest("message to edit not found");
      const rawText = typeof params.text === "string" ? params.text : "";
      const visible = params.parse_mode === "HTML" ? parseTelegramHtml(rawText).text : rawText;
      if (visible.trim().length === 0) throw badRequest("message text is empty");
      if (visible.length > TEXT_LIMIT) throw badRequest("message is too long");
      if ((record.editedText ?? record.text) === visible) {
        throw badRequest(
          "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
        );
      }
      record.editedText = visible;
      return outgoingMessage(chatId, { message_id: messageId, text: visible, edit_date: now() });
    },
    getFile: (params) => {
      const fileId = String(params.file_id ?? "");
      const file = files.get(fileId);
      if (!file) throw badRequest("invalid file_id");
      return {
        file_id: fileId,
        file_unique_id: `u${fileId}`,
        file_size: file.bytes.byteLength,
        file_path: file.path,
      };
    },
    sendDocument: (params) => {
      const chatId = requireChat(params);
      const upload = params.document as UploadedFile | undefined;
      if (typeof upload !== "object" || !(upload.bytes instanceof Uint8Array)) {
        throw badRequest("there is no document in the request");
      }
      const caption = typeof params.caption === "string" ? params.caption : "";
      if (caption.length > CAPTION_LIMIT) throw badRequest("message caption is too long");
      const { fileName, bytes } = upload;
      const message = outgoingMessage(chatId, {
        document: { file_name: fileName, file_id: `doc${nextMessageId}`, file_size: bytes.byteLength },
        ...(caption ? { caption } : {}),
      });
      sent.push({
        method: "sendDocument",
        chatId,
        messageId: message.message_id as number,
        text: caption,
        rawText: caption,
        document: { fileName, bytes },
      });
      notify();
      return message;
    },
  };

  /** The reply a sendMessage names, checked as Telegram checks it; undefined when it names none. */
  function replyParameters(chatId: number, raw: unknown): SentRecord["replyTo"] {
    const given = parseJsonParam(raw) as
      | { message_id?: unknown; allow_sending_without_reply?: unknown }
      | undefined;
    if (given === undefined) return undefined;
    const messageId = Number(given.message_id);
    if (!Number.isInteger(messageId)) throw badRequest("message to be replied not found");
    const allow = given.allow_sending_without_reply === true;
    if (!allow && !chatMessages.has(`${chatId}:${messageId}`))
      throw badRequest("message to be replied not found");
    return { messageId, allowSendingWithoutReply: allow };
  }

  function answerGetUpdates(
    params: Record<string, unknown>,
    req: IncomingMessage,
    answer: (status: number, body: unknown) => void,
  ): void {
    const offset = params.offset === undefined ? undefined : Number(params.offset);
    if (offset !== undefined && offset > 0)
      updates = updates.filter((u) => (u.update_id as number) >= offset);
    const limit = Math.min(Math.max(Number(params.limit ?? 100) || 100, 1), 100);
    const timeout = Math.max(Number(params.timeout ?? 0) || 0, 0);
    if (updates.length > 0 || timeout === 0) {
      answer(200, { ok: true, result: updates.slice(0, limit) });
      return;
    }
    if (poll)
      poll.fail({
        status: 409,
        description:
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
      });
    let timer: NodeJS.Timeout | undefined;
    // One keep-alive socket carries every poll: its close listener must go when this poll ends.
    const onClose = () => {
      clearTimeout(timer);
      if (poll === entry) poll = undefined;
    };
    const finish = () => {
      clearTimeout(timer);
      req.socket.off("close", onClose);
    };
    const entry = {
      respond: (list: Record<string, unknown>[]) => {
        finish();
        answer(200, { ok: true, result: list.slice(0, limit) });
      },
      fail: (f: TelegramFailure) => {
        finish();
        answer(f.status, { ok: false, error_code: f.status, description: f.description });
      },
    };
    poll = entry;
    timer = setTimeout(() => {
      finish();
      if (poll === entry) poll = undefined;
      answer(200, { ok: true, result: [] });
    }, timeout * 1000);
    req.socket.once("close", onClose);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (fileMatch) {
      downloads.push(decodeURIComponent(fileMatch[2] ?? ""));
      await downloadsHeld;
      const file = [...files.values()].find((f) => f.path === decodeURIComponent(fileMatch[2] ?? ""));
      if (fileMatch[1] !== token || !file) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(file.bytes);
      return;
    }
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!match) {
      send(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      return;
    }
    const [, givenToken, method = ""] = match;
    const params = await readParams(req, url);
    const record: CallRecord = { method, params, status: 200, at: Date.now() };
    calls.push(record);
    let cutOff: "close" | "stall" | undefined;
    const answer = (status: number, body: unknown) => {
      record.status = cutOff ? "cut-off" : status;
      if (cutOff) sendHalf(res, status, body, cutOff);
      else send(res, status, body);
    };
    if (givenToken !== token) {
      answer(401, { ok: false, error_code: 401, description: "Unauthorized" });
      return;
    }
    const fault = takeFault(method);
    if (fault?.type === "cut-off") cutOff = fault.ending;
    if (fault?.type === "drop") {
      record.status = "dropped";
      req.socket.destroy();
      return;
    }
    if (fault?.type === "slow") await new Promise((r) => setTimeout(r, fault.ms));
    if (fault?.type === "rate-limit") {
      answer(429, {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${fault.retryAfter}`,
        parameters: { retry_after: fault.retryAfter },
      });
      return;
    }
    if (fault?.type === "server-error") {
      if (fault.status === 502) {
        record.status = 502;
        res
          .writeHead(502, { "content-type": "text/html" })
          .end("<html><body><h1>502 Bad Gateway</h1></body></html>");
      } else {
        answer(500, { ok: false, error_code: 500, description: "Internal Server Error" });
      }
      return;
    }
    if (fault?.type === "bad-request") {
      answer(400, { ok: false, error_code: 400, description: `Bad Request: ${fault.description}` });
      return;
    }
    if (fault?.type === "blocked") {
      answer(403, { ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" });
      return;
    }
    if (method === "getUpdates") {
      answerGetUpdates(params, req, answer);
      return;
    }
    const implementation = methods[method];
    if (!implementation) {
      answer(404, { ok: false, error_code: 404, description: "Not Found: method not found" });
      return;
    }
    try {
      answer(200, { ok: true, result: implementation(params) });
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      const { status, description, parameters } = error.failure;
      answer(status, { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) });
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        send(res, 500, {
          ok: false,
          error_code: 500,
          description: `Internal Server Error: ${String(error)}`,
        });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  function waitUntil<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const attempt = () => {
        const value = check();
        if (value === undefined) return;
        clearTimeout(timer);
        clearInterval(interval);
        sentWaiters.delete(attempt);
        resolve(value);
      };
      const timer = setTimeout(() => {
        sentWaiters.delete(attempt);
        clearInterval(interval);
        reject(
          new Error(
            `bot-api fake: timed out after ${timeoutMs} ms waiting for ${what}; sent so far: ${JSON.stringify(sent.map((s) => s.text))}`,
          ),
        );
      }, timeoutMs);
      const interval = setInterval(attempt, 25);
      sentWaiters.add(attempt);
      attempt();
    });
  }

  return {
    apiRoot: `http://127.0.0.1:${port}`,
    token,
    botUser,
    sent,
    reactions,
    calls,
    actions,
    commands,
    downloads,
    holdDownloads() {
      let release = () => {};
      downloadsHeld = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
    user(id, firstName, username) {
      const existing = users.get(id);
      if (existing) return existing;
      const created: FakeUser = {
        id,
        is_bot: false,
        first_name: firstName,
        ...(username ? { username } : {}),
      };
      users.set(id, created);
      return created;
    },
    message(from, content, opts = {}) {
      const chat = chatFor(from, opts.chat);
      knownChats.add(chat.id);
      const messageId = nextMessageId++;
      const updateId = nextUpdateId++;
      chatMessages.add(`${chat.id}:${messageId}`);
      const date = opts.sentAt ? Math.floor(opts.sentAt.getTime() / 1000) : now();
      const message: Record<string, unknown> = { message_id: messageId, date, chat, from };
      if ("text" in content) {
        message.text = content.text;
      } else if ("photo" in content) {
        const thumbnail = addFile(TINY_JPEG, `photos/thumb_${messageId}.jpg`);
        const fileId = addFile(
          content.photo.bytes ?? TINY_JPEG,
          content.photo.path ?? `photos/file_${messageId}.jpg`,
        );
        message.photo = [
          { file_id: thumbnail, file_unique_id: `u${thumbnail}`, width: 90, height: 90, file_size: 100 },
          { file_id: fileId, file_unique_id: `u${fileId}`, width: 800, height: 800, file_size: 1000 },
        ];
        if (content.photo.caption) message.caption = content.photo.caption;
      } else if ("voice" in content) {
        message.voice = {
          ...soundFile(content.voice, `voice${messageId}`, `voice/file_${messageId}.oga`),
          mime_type: content.voice.mimeType ?? "audio/ogg",
        };
        if (content.voice.caption) message.caption = content.voice.caption;
      } else if ("audio" in content) {
        const { fileName, performer, title, mimeType } = content.audio;
        const ending = fileName?.match(/\.[a-z0-9]+$/i)?.[0] ?? ".mp3";
        message.audio = {
          ...soundFile(content.audio, `audio${messageId}`, `music/file_${messageId}${ending}`),
          ...(mimeType ? { mime_type: mimeType } : {}),
          ...(fileName ? { file_name: fileName } : {}),
          ...(performer ? { performer } : {}),
          ...(title ? { title } : {}),
        };
        if (content.audio.caption) message.caption = content.audio.caption;
      } else if ("videoNote" in content) {
        message.video_note = {
          ...soundFile(content.videoNote, `videonote${messageId}`, `video_notes/file_${messageId}.mp4`),
          length: 384,
        };
      } else if ("sticker" in content) {
        message.sticker = {
          file_id: `sticker${messageId}`,
          file_unique_id: `us${messageId}`,
          type: "regular",
          width: 512,
          height: 512,
          is_animated: false,
          is_video: false,
          ...(content.sticker.emoji ? { emoji: content.sticker.emoji } : {}),
        };
      } else if ("document" in content) {
        const { bytes, fileSize } = content.document;
        const fileId = bytes ? addFile(bytes, `documents/file_${messageId}`) : `document${messageId}`;
        const size = fileSize ?? bytes?.byteLength;
        message.document = {
          file_id: fileId,
          file_unique_id: `ud${messageId}`,
          file_name: content.document.fileName,
          mime_type: content.document.mimeType ?? "application/octet-stream",
          ...(size !== undefined ? { file_size: size } : {}),
        };
        if (content.document.caption) message.caption = content.document.caption;
      } else {
        message.location = content.location;
      }
      scriptedMessages.set(messageId, { message, chatId: chat.id });
      pushUpdate({ update_id: updateId, message });
      return { updateId, messageId, chatId: chat.id, from };
    },
    edit(original, text) {
      const scripted = scriptedMessages.get(original.messageId);
      if (!scripted) throw new Error("bot-api fake: only scripted messages can be edited");
      const updateId = nextUpdateId++;
      const field = scripted.message.text === undefined ? "caption" : "text";
      scripted.message = { ...scripted.message, [field]: text, edit_date: now() };
      pushUpdate({ update_id: updateId, edited_message: scripted.message });
      return updateId;
    },
    addFile,
    failNext(method, ...list) {
      faults.set(method, [...(faults.get(method) ?? []), ...list]);
    },
    block(chatId) {
      blocked.add(chatId);
    },
    unblock(chatId) {
      blocked.delete(chatId);
    },
    pendingUpdates: () => updates.length,
    waitForSent(count, timeoutMs = 10_000) {
      return waitUntil(
        () => (sent.length >= count ? sent : undefined),
        timeoutMs,
        `${count} sent message(s)`,
      );
    },
    waitForCall(predicate, timeoutMs = 10_000) {
      return waitUntil(() => calls.find(predicate), timeoutMs, "a matching call");
    },
    async close() {
      poll = undefined;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A 1×1 JPEG, the default photo. */
const TINY_JPEG = Uint8Array.from(
  Buffer.from(
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=",
    "base64",
  ),
);

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/**
 * Starts a whole answer — its headers promise every byte — and stops half-way: then closes the
 * socket once those bytes are out, or leaves it open with nothing more.
 */
function sendHalf(res: ServerResponse, status: number, body: unknown, ending: "close" | "stall"): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.write(text.slice(0, Math.floor(text.length / 2)), () => {
    if (ending === "close") res.socket?.destroy();
  });
}

function parseJsonParam(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    throw badRequest("can't parse JSON parameter");
  }
}

/** A file uploaded in a multipart body. */
interface UploadedFile {
  fileName: string;
  bytes: Uint8Array;
}

/**
 * A small multipart/form-data reader, lenient the way Telegram is: grammY writes headers
 * without spaces and file names unquoted, which stricter parsers refuse.
 */
function parseMultipart(body: Buffer, boundary: string): { name: string; filename?: string; data: Buffer }[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: { name: string; filename?: string; data: Buffer }[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const chunk = body.subarray(start + delimiter.length, next);
    const headerEnd = chunk.indexOf("\r\n\r\n");
    if (headerEnd !== -1) {
      const headers = chunk.subarray(0, headerEnd).toString("utf8");
      const data = chunk.subarray(
        headerEnd + 4,
        chunk.length - (chunk.subarray(-2).toString() === "\r\n" ? 2 : 0),
      );
      const name = /name="([^"]*)"/i.exec(headers)?.[1];
      const filename = /filename="?([^";\r\n]*)"?/i.exec(headers)?.[1];
      if (name !== undefined) parts.push({ name, ...(filename !== undefined ? { filename } : {}), data });
    }
    start = next;
  }
  return parts;
}

/** Reads parameters as Telegram does: query string, JSON, urlencoded or multipart bodies. */
async function readParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  if (body.length === 0) return params;
  const type = req.headers["content-type"] ?? "";
  if (type.startsWith("application/json"))
    return { ...params, ...(JSON.parse(body.toString("utf8")) as object) };
  if (type.startsWith("application/x-www-form-urlencoded")) {
    return { ...params, ...Object.fromEntries(new URLSearchParams(body.toString("utf8"))) };
  }
  if (type.startsWith("multipart/form-data")) {
    const boundary = /boundary=("?)([^";]+)\1/.exec(type)?.[2];
    if (!boundary) throw badRequest("multipart boundary is missing");
    const parts = parseMultipart(body, boundary);
    for (const part of parts) {
      if (part.filename === undefined) params[part.name] = part.data.toString("utf8");
    }
    for (const part of parts) {
      if (part.filename === undefined) continue;
      const file: UploadedFile = { fileName: part.filename, bytes: new Uint8Array(part.data) };
      const key = Object.keys(params).find((k) => params[k] === `attach://${part.name}`) ?? part.name;
      params[key] = file;
    }
    return params;
  }
  return params;
}

const ENTITY_TYPES = new Set([
  "mention",
  "hashtag",
  "cashtag",
  "bot_command",
  "url",
  "email",
  "phone_number",
  "bold",
  "italic",
  "underline",
  "strikethrough",
  "spoiler",
  "blockquote",
  "expandable_blockquote",
  "code",
  "pre",
  "text_link",
  "text_mention",
  "custom_emoji",
]);

function validateEntities(entities: unknown[], text: string): void {
  if (!Array.isArray(entities)) throw badRequest("can't parse entities JSON object");
  for (const entity of entities) {
    const e = entity as { type?: unknown; offset?: unknown; length?: unknown; url?: unknown };
    if (typeof e.type !== "string" || !ENTITY_TYPES.has(e.type)) {
      throw badRequest(`can't parse MessageEntity: Unsupported type "${String(e.type)}" specified`);
    }
    if (
      !Number.isInteger(e.offset) ||
      !Number.isInteger(e.length) ||
      (e.length as number) <= 0 ||
      (e.offset as number) < 0
    ) {
      throw badRequest("can't parse MessageEntity: wrong offset or length");
    }
    if ((e.offset as number) + (e.length as number) > text.length) {
      throw badRequest("can't parse entities: entity end is out of the text bounds");
    }
    if (e.type === "text_link" && (typeof e.url !== "string" || !/^(https?|tg|mailto):/i.test(e.url))) {
      throw badRequest("can't parse entities: wrong HTTP URL specified");
    }
  }
}

const HTML_TAGS = new Set([
  "b",
  "strong",
  "i",
  "em",
  "u",
  "ins",
  "s",
  "strike",
  "del",
  "span",
  "tg-spoiler",
  "a",
  "code",
  "pre",
  "blockquote",
  "tg-emoji",
]);

const NAMED_ENTITIES: Record<string, string> = {
  lt: "<",
  gt: ">",
  amp: "&",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
};

/**
 * Telegram's HTML parse mode, strictly: supported tags only, every tag closed in order, `<`
 * and `>` and `&` escaped outside tags. Returns the visible text; throws the 400 Telegram sends.
 */
export function parseTelegramHtml(html: string): { text: string } {
  const open: string[] = [];
  let text = "";
  let i = 0;
  const byteOffset = (index: number) => Buffer.byteLength(html.slice(0, index), "utf8");
  const fail = (why: string) => badRequest(`can't parse entities: ${why}`);
  while (i < html.length) {
    const ch = html[i];
    if (ch === "<") {
      const close = html.indexOf(">", i);
      if (close === -1) throw fail(`Unclosed start tag at byte offset ${byteOffset(i)}`);
      const inner = html.slice(i + 1, close);
      if (inner.startsWith("/")) {
        const name = inner.slice(1).trim().toLowerCase();
        const expected = open.pop();
        if (expected === undefined || (name !== "" && name !== expected)) {
          throw fail(`Unexpected end tag at byte offset ${byteOffset(i)}`);
        }
      } else {
        const name = /^([a-zA-Z][a-zA-Z0-9-]*)/.exec(inner)?.[1]?.toLowerCase();
        if (name === undefined)
          throw fail(`Unexpected end of name token at byte offset ${byteOffset(i + 1)}`);
        if (!HTML_TAGS.has(name))
          throw fail(`Unsupported start tag "${name}" at byte offset ${byteOffset(i)}`);
        if (name === "a" && !/href\s*=\s*"[^"]*"/.test(inner) && !/href\s*=\s*'[^']*'/.test(inner)) {
          throw fail(`Can't find href attribute in the "a" tag at byte offset ${byteOffset(i)}`);
        }
        open.push(name);
      }
      i = close + 1;
      continue;
    }
    if (ch === ">")
      throw fail(`Character '>' is reserved and must be escaped at byte offset ${byteOffset(i)}`);
    if (ch === "&") {
      const m = /^&(#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/.exec(html.slice(i, i + 12));
      if (m?.[1]) {
        const ref = m[1];
        const decoded = ref.startsWith("#x")
          ? String.fromCodePoint(Number.parseInt(ref.slice(2), 16))
          : ref.startsWith("#")
            ? String.fromCodePoint(Number(ref.slice(1)))
            : NAMED_ENTITIES[ref];
        if (decoded !== undefined) {
          text += decoded;
          i += m[0].length;
          continue;
        }
      }
      text += "&";
      i += 1;
      continue;
    }
    text += ch;
    i += 1;
  }
  const unclosed = open.pop();
  if (unclosed !== undefined) throw fail(`Can't find end tag corresponding to start tag "${unclosed}"`);
  return { text };
}
