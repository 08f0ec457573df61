import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import type { Message } from "../../src/core/message.ts";
import {
  type ComposeInput,
  composePrompt,
  DOCUMENT_TURN_TOKENS,
  PDF_PAGE_TOKENS,
  PromptCeilingError,
  type ShownDocument,
} from "../../src/mind/compose.ts";
import { NOTES_TOOLS } from "../../src/mind/notes-tools.ts";
import { FIELD_MAX_CHARS, renderScratchpad } from "../../src/mind/scratchpad.ts";
import { applyThreadOps } from "../../src/mind/threads.ts";
import { loadPersona } from "../../src/model/persona.ts";
import { buildStablePrefix } from "../../src/model/prompts.ts";
import { estimateTokens } from "../../src/model/tokens.ts";
import {
  initialScratchpad,
  initialThreads,
  isItemField,
  type MemoryItem,
  SCRATCHPAD_FIELDS,
  type Threads,
} from "../../src/store/mind-schema.ts";
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
    const week = composePrompt(input({ log: conversation(7 * 20) })).sections.total;
    const year = composePrompt(input({ log: conversation(365 * 20) })).sections.total;
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
    expect(() => composePrompt(input({ ceiling: 2_000 }))).toThrow(PromptCeilingError);
    expect(() => composePrompt(input({ ceiling: 2_000 }))).toThrow(/PRESENCE_PROMPT_CEILING/);
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
