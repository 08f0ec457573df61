import type Anthropic from "@anthropic-ai/sdk";
import { DateTime } from "luxon";
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/core/message.ts";
import {
  type ComposeInput,
  composePrompt,
  DOCUMENT_TURN_TOKENS,
  PDF_PAGE_TOKENS,
  type ShownDocument,
} from "../../src/mind/compose.ts";
import type { MemoryItem } from "../../src/mind/memory.ts";
import { NOTES_TOOLS } from "../../src/mind/notes-tools.ts";
import {
  FIELD_MAX_CHARS,
  initialScratchpad,
  isItemField,
  renderScratchpad,
  SCRATCHPAD_FIELDS,
} from "../../src/mind/scratchpad.ts";
import { applyThreadOps, initialThreads, type Threads } from "../../src/mind/threads.ts";
import { loadPersona } from "../../src/model/persona.ts";
import { buildStablePrefix } from "../../src/model/prompts.ts";
import { SENT_TIME_AT_HEAD } from "../../src/model/sent-time.ts";
import { estimateTokens } from "../../src/model/tokens.ts";
import { lines } from "./items.ts";

const persona = await loadPersona();
const prefix = buildStablePrefix(persona, { notes: NOTES_TOOLS });
const start = Date.parse("2026-03-01T08:00:00.000Z");

function message(i: number, role: Message["role"], text: string, minutes = i * 10): Message {
  return {
    id: `m${String(i).padStart(6, "0")}`,
    ts: new Date(start + minutes * 60_000).toISOString(),
    role,
    text,
    channel: "telegram",
    ...(role === "assistant" ? { trigger: "reply" as const } : {}),
  };
}

function conversation(count: number): Message[] {
  return Array.from({ length: count }, (_, i) =>
    message(
      i,
      i % 2 === 0 ? "user" : "assistant",
      `message number ${String(i).padStart(6, "0")} about the day, the walk and the bread`,
    ),
  );
}

function input(overrides: Partial<ComposeInput> = {}): ComposeInput {
  return {
    kind: "reply",
    now: new Date(start + 60 * 60_000),
    zone: "Europe/Berlin",
    model: "claude-sonnet-5-5",
    maxTokens: 1_500,
    ceiling: 12_000,
    prefix,
    scratchpad: renderScratchpad(initialScratchpad()),
    awareness: "## Conversational awareness\nNow: Sunday 10:00",
    threadNotes: [],
    memory: [],
    log: [],
    threads: initialThreads(new Date(start)),
    ...overrides,
  };
}

/** Counts the request independently of compose's own bookkeeping. */
function requestTokens(params: Anthropic.MessageCreateParamsNonStreaming): number {
  const system = (params.system as Anthropic.TextBlockParam[]).reduce(
    (n, b) => n + estimateTokens(b.text),
    0,
  );
  const tools = estimateTokens(JSON.stringify(params.tools));
  const messages = params.messages.reduce((n, m) => {
    if (typeof m.content === "string") return n + estimateTokens(m.content);
    return (
      n +
      m.content.reduce(
        (k, b) => k + (b.type === "text" ? estimateTokens(b.text) : b.type === "image" ? 1_600 : 0),
        0,
      )
    );
  }, 0);
  return system + tools + messages;
}

function textOf(m: Anthropic.MessageParam): string {
  return typeof m.content === "string"
    ? m.content
    : m.content.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("|");
}

describe("composePrompt", () => {
  it("puts the parts in the issue's order, with the cache breakpoint only on the stable prefix", () => {
    const log = conversation(6);
    const pending = [message(6, "user", "Back from the walk!")];
    const memory: MemoryItem[] = [
      {
        id: "a1",
        kind: "pattern",
        text: "Weekends are loose",
        learnedAt: "2026-02-01T10:00:00.000Z",
        sourceMessageIds: [],
        importance: 3,
        topics: [],
      },
    ];
    const { params, sections } = composePrompt(
      input({
        log: [...log, ...pending],
        pending,
        memory,
        threadNotes: [
          { ts: "2026-02-28T09:00:00.000Z", text: "[← habits] the walking plan", kind: "arrived" },
        ],
      }),
    );
    const system = params.system as Anthropic.TextBlockParam[];
    expect(system.map((b) => b.text.split("\n")[0])).toEqual([
      "# How this conversation works",
      "# Your scratchpad",
      "# Awareness",
      "# Episodic context",
    ]);
    expect(system.map((b) => b.cache_control ?? null)).toEqual([{ type: "ephemeral" }, null, null, null]);
    expect(system[3]?.text).toContain("[← habits] the walking plan");
    expect(system[3]?.text).toContain("Weekends are loose");
    expect(params.tools).toBe(prefix.tools);
    expect(params.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
    ]);
    expect(textOf(params.messages.at(-1) as Anthropic.MessageParam)).toBe("Back from the walk!");
    expect(sections.workingMessages).toBe(6);
    expect(sections.memoryItems).toBe(1);
    expect(sections.threadNotes).toBe(1);
  });

  it("stays under the ceiling whatever the history, scratchpad, memory and input", () => {
    const log = conversation(20_000);
    const pad = initialScratchpad();
    for (const field of SCRATCHPAD_FIELDS) {
      const full = `${field.key} `.repeat(FIELD_MAX_CHARS / 10).slice(0, FIELD_MAX_CHARS);
      if (isItemField(field.key)) pad[field.key] = lines(full.replaceAll(" ", "\n").trim());
      else pad[field.key] = full;
    }
    const memory: MemoryItem[] = Array.from({ length: 500 }, (_, i) => ({
      id: `i${i}`,
      kind: "open_loop",
      text: `an open loop that is fairly long and specific, number ${i}, about a project`,
      learnedAt: "2026-02-01T10:00:00.000Z",
      sourceMessageIds: [],
      importance: 3,
      topics: [],
    }));
    const pending = [
      message(20_000, "user", "word ".repeat(20_000)),
      message(20_001, "user", "and one more thing"),
    ];
    for (const ceiling of [4_500, 8_000, 12_000]) {
      const { params, sections } = composePrompt(
        input({
          ceiling,
          log: [...log, ...pending],
          pending,
          memory,
          scratchpad: renderScratchpad(pad),
          awareness: "an observation line\n".repeat(2_000),
          threadNotes: Array.from({ length: 5 }, (_, i) => ({
            ts: "2026-02-28T09:00:00.000Z",
            text: "note ".repeat(80 + i),
            kind: "note" as const,
          })),
        }),
      );
      expect(sections.total).toBeLessThanOrEqual(ceiling);
      expect(requestTokens(params)).toBeLessThanOrEqual(ceiling);
      expect(sections.truncated).toEqual(expect.arrayContaining(["scratchpad", "awareness", "input"]));
      expect(textOf(params.messages.at(-1) as Anthropic.MessageParam)).toContain("and one more thing");
    }
  });

  it("costs the same for a week and a year of history", () => {
    // Each turn comes right after its last message, so the times shown read alike.
    const total = (log: Message[]) =>
      composePrompt(input({ log, now: new Date(Date.parse(log.at(-1)?.ts ?? "")) })).sections.total;
    const week = total(conversation(7 * 20));
    const year = total(conversation(365 * 20));
    expect(year).toBe(week);
  });

  it("shows only the current thread's messages in the working window", () => {
    const log = [
      message(0, "user", "The deadline at work moved to Friday"),
      message(1, "assistant", "That's tight. What's left?"),
      message(2, "user", "Let's talk about something else: my running plan"),
      message(3, "assistant", "Sure, how far did you get this week?"),
    ];
    const moved = applyThreadOps(
      initialThreads(new Date(start)),
      [{ op: "scope", name: "running", note: "work talk paused" }],
      {
        now: new Date(Date.parse(log[2]?.ts ?? "")),
        switchAt: new Date(Date.parse(log[2]?.ts ?? "")),
      },
    );
    if (!moved.ok) throw new Error(moved.reason);
    const inRunning = composePrompt(input({ log, threads: moved.threads }));
    const shownText = inRunning.params.messages.map(textOf).join("\n");
    expect(shownText).toContain("running plan");
    expect(shownText).not.toContain("deadline");

    const back = applyThreadOps(moved.threads, [{ op: "goto", name: "main", note: "back to the deadline" }], {
      now: new Date(start + 60 * 60_000),
      switchAt: new Date(start + 60 * 60_000),
    });
    if (!back.ok) throw new Error(back.reason);
    const inMain = composePrompt(input({ log, threads: back.threads as Threads }));
    const mainText = inMain.params.messages.map(textOf).join("\n");
    expect(mainText).toContain("deadline");
    expect(mainText).not.toContain("running plan");
  });

  it("merges consecutive turns of one role and never starts with the assistant", () => {
    const log = [
      message(0, "assistant", "Good morning! Sleep well?"),
      message(1, "assistant", "Also: the bakery opens at 9"),
      message(2, "user", "yes"),
      message(3, "user", "thanks"),
    ];
    const pending = [message(3, "user", "thanks")];
    const { params } = composePrompt(input({ log, pending }));
    expect(params.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(textOf(params.messages[1] as Anthropic.MessageParam)).toBe(
      "Good morning! Sleep well?|Also: the bakery opens at 9",
    );
    expect(textOf(params.messages[2] as Anthropic.MessageParam)).toBe("yes|thanks");
  });

  it("shows a pending photo as an image block next to its caption, and says when a message waited", () => {
    const photo: Message = {
      ...message(0, "user", "my sourdough!"),
      media: { kind: "photo", caption: "my sourdough!" },
    };
    const { params } = composePrompt(
      input({
        log: [photo],
        pending: [photo],
        images: new Map([[photo.id, { mediaType: "image/jpeg", base64: "aGVsbG8=" }]]),
        waitedMinutes: 47,
      }),
    );
    const last = params.messages.at(-1) as Anthropic.MessageParam;
    expect(Array.isArray(last.content) && last.content.map((b) => b.type)).toEqual(["image", "text", "text"]);
    expect(textOf(last)).toContain("[photo] my sourdough!");
    expect(textOf(last)).toContain("waited 47 min");
  });

  it("ends a check-in prompt with the check-in moment, merged after a trailing person message", () => {
    const log = [message(0, "assistant", "How was the dentist?"), message(1, "user", "fine")];
    const { params } = composePrompt(
      input({ kind: "heartbeat", log, checkinText: "[Check-in moment — Sunday 15:07]" }),
    );
    expect(params.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(textOf(params.messages[2] as Anthropic.MessageParam)).toBe(
      "fine|[Check-in moment — Sunday 15:07]",
    );
  });

  it("refuses a ceiling too small for the fixed parts, naming the setting", () => {
    expect(() => composePrompt(input({ ceiling: 2_000 }))).toThrow(
      /^PRESENCE_PROMPT_CEILING=2000 leaves only .* raise it to at least \d+ \(default 12000\)$/,
    );
  });
});

/** Every place a text occurs in a request's messages, counted. */
function occurrences(params: Anthropic.MessageCreateParamsNonStreaming, text: string): number {
  return JSON.stringify(params.messages).split(text).length - 1;
}

describe("composePrompt: captions and documents", () => {
  it("shows a caption once, for media logged before and after captions moved into the text", () => {
    const photo: Message = {
      ...message(0, "user", "my sourdough!"),
      media: { kind: "photo", caption: "my sourdough!" },
    };
    const voice: Message = {
      ...message(1, "user", "[voice note, 9 s — not heard: voice notes can't be listened to yet] on the bus"),
      media: { kind: "voice", durationSeconds: 9, caption: "on the bus" },
    };
    const document: Message = {
      ...message(2, "user", "[document: plan.pdf] for Monday"),
      media: { kind: "document", fileName: "plan.pdf", caption: "for Monday" },
    };
    const reply = message(3, "assistant", "Lovely.");
    const pending = [
      {
        ...message(4, "user", "[video] the lake at dusk"),
        media: { kind: "video" as const, caption: "the lake at dusk" },
      },
    ];
    const { params } = composePrompt(input({ log: [photo, voice, document, reply, ...pending], pending }));
    for (const caption of ["my sourdough!", "on the bus", "for Monday", "the lake at dusk"]) {
      expect(occurrences(params, caption), caption).toBe(1);
    }
    const shown = params.messages.map(textOf).join("|");
    expect(shown).toContain("[photo] my sourdough!");
    expect(shown).toContain("[document: plan.pdf] for Monday");
    expect(shown).toContain("[video] the lake at dusk");
  });

  it("shows a pending PDF as a document block before its words, and text as a plain-text document", () => {
    const pdf: Message = {
      ...message(0, "user", "[document: lease.pdf] can you check this?"),
      media: {
        kind: "document",
        fileName: "lease.pdf",
        caption: "can you check this?",
        stored: "files/a.pdf",
      },
    };
    const text: Message = {
      ...message(1, "user", "[document: list.md]"),
      media: { kind: "document", fileName: "list.md", stored: "files/b.txt" },
    };
    const documents = new Map<string, ShownDocument>([
      [pdf.id, { kind: "pdf", base64: "JVBERi0xLjQ=", pages: 1 }],
      [text.id, { kind: "text", text: "- Middlemarch" }],
    ]);
    const { params, sections } = composePrompt(input({ log: [pdf, text], pending: [pdf, text], documents }));
    const last = params.messages.at(-1) as Anthropic.MessageParam;
    expect(last.content).toEqual([
      {
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQ=" },
        title: "lease.pdf",
      },
      { type: "text", text: "[document: lease.pdf] can you check this?" },
      {
        type: "document",
        source: { type: "text", media_type: "text/plain", data: "- Middlemarch" },
        title: "list.md",
      },
      { type: "text", text: "[document: list.md]" },
    ]);
    expect(sections.documents).toBe(2);
  });

  it("says a document is gone when its file was deleted, and read earlier once it is no longer shown", () => {
    const gone: Message = {
      ...message(0, "user", "[document: lease.pdf]"),
      media: { kind: "document", fileName: "lease.pdf", stored: "files/a.pdf" },
    };
    const earlier: Message = {
      ...message(1, "user", "[document: old.txt] from last week"),
      media: { kind: "document", fileName: "old.txt", stored: "files/b.txt" },
    };
    const reply = message(2, "assistant", "Got it.");
    const { params, sections } = composePrompt(
      input({
        log: [earlier, reply, gone],
        pending: [gone],
        documents: new Map([[gone.id, { kind: "missing" }]]),
      }),
    );
    const shown = params.messages.map(textOf).join("|");
    expect(shown).toContain(
      "[document: old.txt (you read it when it arrived; it is not shown again)] from last week",
    );
    expect(shown).toContain(
      "[document: lease.pdf (the file is no longer kept (deleted), so you cannot read it now)]",
    );
    expect(sections.documents).toBe(0);
  });

  it("shows a document again while it is among the recent messages, without counting it as words", () => {
    const doc: Message = {
      ...message(0, "user", "[document: list.md]"),
      media: { kind: "document", fileName: "list.md", stored: "files/b.txt" },
    };
    const big = "word ".repeat(20_000);
    const log = [doc, message(1, "assistant", "Nice list."), message(2, "user", "which first?")];
    const { params, sections } = composePrompt(
      input({
        log,
        pending: [log[2] as Message],
        documents: new Map([[doc.id, { kind: "text", text: big }]]),
      }),
    );
    expect(textOf(params.messages[0] as Anthropic.MessageParam)).toBe("[document]|[document: list.md]");
    expect(sections.documents).toBe(1);
    expect(sections.working).toBeLessThan(100);
  });

  it("shows the documents of one turn newest first within DOCUMENT_TURN_TOKENS and names the waiting ones left out", () => {
    const doc = (i: number, name: string): Message => ({
      ...message(i, "user", `[document: ${name}]`),
      media: { kind: "document", fileName: name, stored: `files/${i}.pdf` },
    });
    const [report, notes, appendix] = [doc(0, "report.pdf"), doc(1, "notes.txt"), doc(2, "appendix.pdf")];
    const pages = DOCUMENT_TURN_TOKENS / PDF_PAGE_TOKENS - 5;
    const documents = new Map<string, ShownDocument>([
      [report.id, { kind: "pdf", base64: "JVBERi0xLjQ=", pages }],
      [notes.id, { kind: "text", text: "a short list" }],
      [appendix.id, { kind: "pdf", base64: "JVBERi0xLjQ=", pages }],
    ]);
    const pending = [report, notes, appendix] as Message[];
    const { params, sections, documentsLeft } = composePrompt(input({ log: pending, pending, documents }));
    const titles = params.messages.flatMap((m) =>
      typeof m.content === "string" ? [] : m.content.flatMap((b) => (b.type === "document" ? [b.title] : [])),
    );
    // The newest, then the older one that still fits; the large older one is left, and said so.
    expect(titles).toEqual(["notes.txt", "appendix.pdf"]);
    expect(documentsLeft).toEqual([report.id]);
    expect(sections.documentsLeft).toBe(1);
    expect(sections.documentTokens).toBeLessThanOrEqual(DOCUMENT_TURN_TOKENS);
    expect(params.messages.map(textOf).join("|")).toContain(
      "[document: report.pdf (you did not read this file: it came with other documents, too large to read together; they can send it again on its own)]",
    );
  });
});

/** A message at a local wall time in a zone, e.g. at("2026-03-04T23:10", "Europe/Berlin"). */
function sentAt(
  id: string,
  role: Message["role"],
  text: string,
  local: string,
  zone: string,
  extra: Partial<Message> = {},
): Message {
  const ts = DateTime.fromISO(local, { zone }).toUTC().toISO();
  if (!ts) throw new Error(`bad time ${local}`);
  return {
    id,
    ts,
    role,
    text,
    channel: "telegram",
    ...(role === "assistant" ? { trigger: "reply" as const } : {}),
    ...extra,
  };
}

function instant(local: string, zone: string): Date {
  return DateTime.fromISO(local, { zone }).toJSDate();
}

describe("composePrompt: when messages were sent", () => {
  const zone = "Europe/Berlin";

  it("shows a late reply and the next evening's check-in as two stamped parts of one assistant turn", () => {
    const log = [
      sentAt("a", "user", "Presentation tomorrow, wish me luck", "2026-03-04T23:05", zone),
      sentAt("b", "assistant", "Good luck! Sleep well.", "2026-03-04T23:10", zone),
      sentAt("c", "assistant", "How did the presentation go?", "2026-03-05T19:05", zone, {
        trigger: "heartbeat",
      }),
    ];
    const pending = [sentAt("d", "user", "it went great", "2026-03-05T19:20", zone)];
    const { params } = composePrompt(
      input({ log: [...log, ...pending], pending, zone, now: instant("2026-03-05T19:21", zone) }),
    );
    expect(params.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(textOf(params.messages[0] as Anthropic.MessageParam)).toBe("Presentation tomorrow, wish me luck");
    expect(textOf(params.messages[1] as Anthropic.MessageParam)).toBe(
      "[Wed 23:10] Good luck! Sleep well.|[19:05] How did the presentation go?",
    );
    // Fifteen minutes after the check-in the conversation flows: no time.
    expect(textOf(params.messages[2] as Anthropic.MessageParam)).toBe("it went great");
  });

  it("adds nothing to a flowing exchange, so the prompt does not grow", () => {
    const log = [
      sentAt("a", "user", "morning!", "2026-03-05T08:00", zone),
      sentAt("b", "assistant", "Morning! Coffee first?", "2026-03-05T08:01", zone),
      sentAt("c", "user", "already on it", "2026-03-05T08:20", zone),
      sentAt("d", "assistant", "Good.", "2026-03-05T08:21", zone),
      sentAt("e", "assistant", "And the bus?", "2026-03-05T08:45", zone),
    ];
    const pending = [sentAt("f", "user", "caught it", "2026-03-05T09:10", zone)];
    const { params } = composePrompt(
      input({ log: [...log, ...pending], pending, zone, now: instant("2026-03-05T09:10", zone) }),
    );
    const shown = params.messages.map(textOf);
    expect(shown).toEqual([
      "morning!",
      "Morning! Coffee first?",
      "already on it",
      "Good.|And the bus?",
      "caught it",
    ]);
    expect(shown.join("\n")).not.toMatch(SENT_TIME_AT_HEAD);
  });

  it("says the conversation begins with the companion's message only when nothing came before it", () => {
    const log = [
      sentAt("a", "assistant", "Hello! I'm here whenever you want to talk.", "2026-03-05T09:07", zone),
      sentAt("b", "user", "hi!", "2026-03-05T09:20", zone),
    ];
    const whole = composePrompt(
      input({ log, zone, now: instant("2026-03-05T11:30", zone), kind: "heartbeat", logIsWhole: true }),
    );
    expect(textOf(whole.params.messages[0] as Anthropic.MessageParam)).toBe(
      "(the conversation begins with your message below)",
    );
    const archivedBefore = composePrompt(
      input({ log, zone, now: instant("2026-03-05T11:30", zone), kind: "heartbeat" }),
    );
    expect(textOf(archivedBefore.params.messages[0] as Anthropic.MessageParam)).toContain(
      "earlier messages are not shown",
    );
  });

  it("does not repeat a time the first part of a turn follows on from", () => {
    const log = [
      sentAt("a", "assistant", "How's the water intake going today?", "2026-03-05T09:07", zone),
      sentAt("b", "user", "in meetings, fine", "2026-03-05T09:57", zone),
      sentAt("c", "assistant", "Got it, thanks for letting me know.", "2026-03-05T09:57", zone),
      sentAt("d", "assistant", "How did you sleep last night?", "2026-03-05T11:07", zone),
    ];
    const { params } = composePrompt(
      input({ log, zone, now: instant("2026-03-05T11:30", zone), kind: "heartbeat" }),
    );
    expect(params.messages.slice(0, 3).map(textOf)).toEqual([
      expect.stringContaining("earlier messages are not shown"),
      "How's the water intake going today?",
      "[09:57] in meetings, fine",
    ]);
    expect(textOf(params.messages[3] as Anthropic.MessageParam)).toBe(
      "Got it, thanks for letting me know.|[11:07] How did you sleep last night?",
    );
  });

  it("stamps the window's first message when it came after a pause from one the model is not shown", () => {
    const log = [
      sentAt("a", "user", "slept well, 2 glasses of water already", "2026-03-05T07:50", zone),
      sentAt("b", "assistant", "Nice start! Anything nice on today?", "2026-03-05T07:50", zone),
      sentAt(
        "c",
        "user",
        "Switching gears: deep work on the project all afternoon",
        "2026-03-05T11:00",
        zone,
      ),
      sentAt("d", "assistant", "Got it, I'll keep quiet.", "2026-03-05T11:01", zone),
    ];
    const switchAt = new Date(Date.parse(log[2]?.ts ?? ""));
    const moved = applyThreadOps(
      initialThreads(new Date(start)),
      [{ op: "scope", name: "project", note: "" }],
      {
        now: switchAt,
        switchAt,
      },
    );
    if (!moved.ok) throw new Error(moved.reason);
    const at = (now: string) =>
      composePrompt(
        input({ log, zone, threads: moved.threads, now: instant(now, zone), kind: "heartbeat" }),
      ).params.messages.map(textOf);
    // The morning is not shown; three hours after it, the opening turn says when it was sent.
    expect(at("2026-03-05T12:07")[0]).toBe("[11:00] Switching gears: deep work on the project all afternoon");
    // Cut from a flowing exchange instead, the first shown message carries no time.
    const flowing = log.map((m) =>
      m.id === "c" ? { ...m, ts: instant("2026-03-05T07:55", zone).toISOString() } : m,
    );
    const shown = composePrompt(
      input({
        log: flowing,
        zone,
        threads: moved.threads,
        now: instant("2026-03-05T08:00", zone),
        kind: "heartbeat",
      }),
    ).params.messages.map(textOf);
    expect(shown.join("\n")).not.toMatch(SENT_TIME_AT_HEAD);
  });

  it("stamps the person's message with when they sent it, which Telegram may say was earlier than it was logged", () => {
    const log = [sentAt("a", "assistant", "Sleep well!", "2026-03-04T22:00", zone)];
    const waited = sentAt("b", "user", "one more thing", "2026-03-05T07:30", zone, {
      external: { chatId: 1, messageId: 2, sentAt: instant("2026-03-04T23:40", zone).toISOString() },
    });
    const { params } = composePrompt(
      input({ log: [...log, waited], pending: [waited], zone, now: instant("2026-03-05T07:31", zone) }),
    );
    expect(textOf(params.messages.at(-1) as Anthropic.MessageParam)).toBe("[Wed 23:40] one more thing");
  });

  it("reads days and times in the person's zone, across a change to summer time", () => {
    // Berlin moves to summer time at 02:00 on Sunday 29 March 2026: the night is 23 hours long.
    const log = [
      sentAt("a", "user", "off to bed", "2026-03-28T23:45", zone),
      sentAt("b", "assistant", "Night!", "2026-03-28T23:50", zone),
      sentAt("c", "assistant", "Did the clock change wake you?", "2026-03-29T09:00", zone),
    ];
    const berlin = composePrompt(
      input({ log, zone, now: instant("2026-03-29T09:05", zone), kind: "heartbeat" }),
    );
    expect(textOf(berlin.params.messages[1] as Anthropic.MessageParam)).toBe(
      "[Sat 23:50] Night!|[09:00] Did the clock change wake you?",
    );
    // The same instants in Tokyo: 07:50 and 16:00 on Sunday, one local day; a week earlier reads as a date.
    const tokyo = composePrompt(
      input({ log, zone: "Asia/Tokyo", now: instant("2026-04-05T12:00", "Asia/Tokyo"), kind: "heartbeat" }),
    );
    expect(textOf(tokyo.params.messages[1] as Anthropic.MessageParam)).toBe(
      "[29 Mar 07:50] Night!|[29 Mar 16:00] Did the clock change wake you?",
    );
  });

  it("marks a new local day even without a long pause, in the zone and not in UTC", () => {
    const tokyo = "Asia/Tokyo";
    // 23:50 and 00:10 in Tokyo; 14:50 and 15:10 UTC, the same day there.
    const log = [
      sentAt("a", "user", "still up", "2026-03-05T23:50", tokyo),
      sentAt("b", "assistant", "Me too, apparently", "2026-03-06T00:10", tokyo),
    ];
    const now = instant("2026-03-06T00:11", tokyo);
    const inTokyo = composePrompt(input({ log, zone: tokyo, now, kind: "heartbeat" }));
    expect(inTokyo.params.messages.slice(0, 2).map(textOf)).toEqual([
      "still up",
      "[00:10] Me too, apparently",
    ]);
    const inUtc = composePrompt(input({ log, zone: "UTC", now, kind: "heartbeat" }));
    expect(inUtc.params.messages.slice(0, 2).map(textOf)).toEqual(["still up", "Me too, apparently"]);
  });
});
