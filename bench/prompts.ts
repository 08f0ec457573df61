import { performance } from "node:perf_hooks";
import { initialMindState, type MindState } from "../src/companion/mind-document.ts";
import { buildAwarenessContext } from "../src/conversation/awareness/build.ts";
import { defaultAwarenessSettings } from "../src/conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../src/conversation/awareness/format.ts";
import { detectTopics } from "../src/conversation/awareness/topics.ts";
import type { Message } from "../src/core/message.ts";
import { type ComposedPrompt, composePrompt, describeMessage } from "../src/mind/compose.ts";
import { MAX_TOKENS } from "../src/mind/generate.ts";
import type { MemoryItem } from "../src/mind/memory.ts";
import { rankMemory } from "../src/mind/memory.ts";
import { NOTES_TOOLS } from "../src/mind/notes-tools.ts";
import { REFLECT_TOOL, reflectionPrompt, reflectionSystem } from "../src/mind/reflect.ts";
import { renderScratchpad } from "../src/mind/scratchpad.ts";
import type { Threads } from "../src/mind/threads.ts";
import { recentThreadNotes } from "../src/mind/threads.ts";
import { loadPersona } from "../src/model/persona.ts";
import { minCacheableTokens, shippedPriceTable } from "../src/model/prices.ts";
import {
  buildStablePrefix,
  CACHE_MARGIN,
  checkinMomentText,
  type StablePrefix,
} from "../src/model/prompts.ts";
import { DEFAULT_MODEL, DEFAULT_REFLECT_MODEL } from "../src/model/settings.ts";
import { estimateTokens } from "../src/model/tokens.ts";
import type { BenchRow } from "./types.ts";

/**
 * What each turn costs in prompt tokens as the relationship grows from a day to a year,
 * beside two baselines on the same synthetic histories: replaying the whole log, and the
 * last 10 messages. Two rhythms of use: steady (about 15 exchanges and 3 check-ins a day)
 * and heavy (about 130 exchanges and 8 check-ins a day, the awareness benchmark's volume).
 * Ours depends on neither; the whole-log baseline grows with both. What that means in
 * dollars, with the prompt cache as it really behaves, is the cost suite's (cost.ts). The mind is what reflection would have
 * curated by then (a scratchpad that fills up and then stays curated, memory that keeps
 * growing, a dozen threads). Token counts use the project's one estimator throughout.
 */

const SUITE = "prompts";
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const ZONE = "Europe/Berlin";
const END = Date.parse("2027-03-03T15:40:00.000Z");
const CEILING = 12_000;
const SIZES = [
  { size: "day", days: 1 },
  { size: "week", days: 7 },
  { size: "month", days: 30 },
  { size: "year", days: 365 },
] as const;
const RHYTHMS = [
  { rhythm: "steady", exchanges: 15, checkins: 3 },
  { rhythm: "heavy", exchanges: 130, checkins: 8 },
] as const;
type Rhythm = (typeof RHYTHMS)[number];

const USER_TEXTS = [
  "Morning. Slept about six hours, woke up twice.",
  "Had two glasses of water already and a coffee.",
  "Work is hectic, the release moved to Friday and nobody told me.",
  "Went for a 30 minute walk at lunch, felt good.",
  "Honestly a bit low today, not sure why.",
  "Dinner with my sister tonight, she's in town for the week.",
  "Finished the chapter I was stuck on!",
  "ok",
  "Thinking about signing up for that pottery class again.",
  "My back hurts from the new chair, might return it.",
  "Can you remind me what I said about the budget last week?",
  "Long day. Going to read and sleep early.",
];
const ASSISTANT_TEXTS = [
  "Six hours with two wake-ups is rough. Anything on your mind when you woke?",
  "Nice start. Is the coffee the one you promised yourself to keep to a single cup?",
  "That's frustrating — finding out late makes it feel worse. What's the one thing that has to be done by Friday?",
  "A lunch walk in this weather sounds lovely. Same loop as usual?",
  "Low days happen, even without a reason. Want to talk, or would something small help more?",
  "How lovely that she's here. Is there something you're hoping to do together this week?",
  "That's a real milestone after being stuck for so long. What unlocked it?",
  "Here if you want to pick anything up later.",
  "You lit up talking about pottery last time. What's holding you back?",
  "If it hurts after a few days, returning it sounds wise. Does the shop take it back?",
  "You said you wanted to keep groceries under 400 a month and stop the second streaming service.",
  "Sounds like exactly the right plan. Sleep well.",
];
const CHECKIN_TEXTS = [
  "How did the release planning go?",
  "Did the walk happen today?",
  "Thinking of you — how's the evening with your sister?",
];

/** Runs the prompt-size benchmarks and checks the targets. */
export async function runPromptsBench(): Promise<BenchRow[]> {
  const persona = await loadPersona();
  const prefix = buildStablePrefix(persona, { notes: NOTES_TOOLS });
  const reflectPrefix =
    estimateTokens(reflectionSystem(persona)) + estimateTokens(JSON.stringify(REFLECT_TOOL));
  const rows: BenchRow[] = [];
  for (const rhythm of RHYTHMS) rows.push(...rhythmRows(rhythm, prefix, reflectPrefix));
  const minimum = minCacheableTokens(shippedPriceTable(), DEFAULT_MODEL);
  const reflectMinimum = minCacheableTokens(shippedPriceTable(), DEFAULT_REFLECT_MODEL);
  rows.push(
    {
      suite: SUITE,
      name: "protocol + persona",
      size: "-",
      value: prefix.protocolAndPersonaTokens,
      unit: "tokens",
      target: "< 2500",
      met: prefix.protocolAndPersonaTokens < 2_500,
    },
    {
      suite: SUITE,
      name: "stable prefix ÷ minimum cacheable",
      size: `${DEFAULT_MODEL} (${minimum})`,
      value: round(prefix.tokens / minimum),
      unit: "ratio",
      target: `≥ ${CACHE_MARGIN}`,
      met: prefix.tokens >= minimum * CACHE_MARGIN,
      note: `prefix ${prefix.tokens} tokens (tools + protocol + persona): replies and check-in messages`,
    },
    {
      suite: SUITE,
      name: "stable prefix ÷ minimum cacheable",
      size: `${DEFAULT_REFLECT_MODEL} (${reflectMinimum})`,
      value: round(prefix.tokens / reflectMinimum),
      unit: "ratio",
      target: `≥ ${CACHE_MARGIN}`,
      met: prefix.tokens >= reflectMinimum * CACHE_MARGIN,
      note: `prefix ${prefix.tokens} tokens: check-in decisions, on the cheaper model by default`,
    },
    {
      suite: SUITE,
      name: "reflection prefix ÷ minimum cacheable",
      size: `${DEFAULT_REFLECT_MODEL} (${reflectMinimum})`,
      value: round(reflectPrefix / reflectMinimum),
      unit: "ratio",
      target: `≥ ${CACHE_MARGIN}`,
      met: reflectPrefix >= reflectMinimum * CACHE_MARGIN,
      note: `prefix ${reflectPrefix} tokens (tool + guidance + persona)`,
    },
  );
  return rows;
}

function rhythmRows(rhythm: Rhythm, prefix: StablePrefix, reflectPrefix: number): BenchRow[] {
  const rows: BenchRow[] = [];
  const figures = new Map<string, Figures>();
  for (const { size, days } of SIZES) {
    const f = measureHistory(days, rhythm, prefix, reflectPrefix);
    figures.set(size, f);
    const label = `${size}, ${rhythm.rhythm} (${f.messages} msgs)`;
    const row = (name: string, value: number, extra: Partial<BenchRow> = {}): BenchRow => ({
      suite: SUITE,
      name,
      size: label,
      value,
      unit: "tokens",
      ...extra,
    });
    rows.push(
      row("reply prompt (ours)", f.reply.total, {
        note: `prefix ${f.reply.prefix} · pad ${f.reply.scratchpad} · awareness ${f.reply.awareness} · episodic ${f.reply.episodic} · working ${f.reply.working} · input ${f.reply.input}`,
      }),
      row("check-in decide prompt (ours)", f.heartbeat.total, {
        note: "a write call, when it sends, adds about 60",
      }),
      row("reflection prompt (ours)", f.reflection, {
        note: `${DEFAULT_REFLECT_MODEL}: system + tool + state + exchange (${reflectPrefix} of it the cached prefix)`,
      }),
      row("whole-log replay (baseline)", f.wholeLog),
      row("last 10 messages (baseline)", f.lastTen),
      {
        suite: SUITE,
        name: "reply prompt: stable prefix share",
        size: label,
        value: round(f.reply.prefix / f.reply.total),
        unit: "share",
        note: "cacheable, not cached: it is read back only when the next call comes within five minutes (see the cost suite)",
      },
      { suite: SUITE, name: "compose a reply prompt", size: label, ...f.composeTiming },
    );
  }
  const week = figures.get("week") as Figures;
  const year = figures.get("year") as Figures;
  const flat = year.reply.total / week.reply.total;
  rows.push({
    suite: SUITE,
    name: "reply prompt, year ÷ week",
    size: `year, ${rhythm.rhythm}`,
    value: round(flat),
    unit: "ratio",
    target: "≤ 1.2",
    met: flat <= 1.2,
  });
  return rows;
}

interface Figures {
  messages: number;
  reply: ComposedPrompt["sections"];
  heartbeat: ComposedPrompt["sections"];
  reflection: number;
  wholeLog: number;
  lastTen: number;
  composeTiming: { median_ms: number; p95_ms: number };
}

function measureHistory(days: number, rhythm: Rhythm, prefix: StablePrefix, reflectPrefix: number): Figures {
  const history = generateHistory(days, rhythm);
  const now = new Date(END);
  const mind = curatedMind(days, now);
  const window = history.filter((m) => Date.parse(m.ts) >= END - 3 * DAY);
  const slice = history.filter(
    (m) => Date.parse(m.ts) >= END - defaultAwarenessSettings.windowHours * 60 * MINUTE,
  );
  const pending = [history[history.length - 1] as Message];
  const awarenessFor = (trigger: "reply" | "heartbeat") =>
    formatAwarenessForPrompt(
      buildAwarenessContext(slice, now, { ...defaultAwarenessSettings, timezone: ZONE, trigger }),
      trigger,
    );
  const query = { text: pending.map((m) => m.text).join("\n"), topics: detectTopics(pending[0]?.text ?? "") };
  const common = {
    now,
    zone: ZONE,
    model: DEFAULT_MODEL,
    ceiling: CEILING,
    prefix,
    scratchpad: renderScratchpad(mind.scratchpad),
    threadNotes: recentThreadNotes(mind.threads),
    memory: rankMemory(mind.memory, query, now).map((r) => r.item),
    log: window,
    threads: mind.threads,
  };
  const composeReply = () =>
    composePrompt({
      ...common,
      kind: "reply",
      maxTokens: MAX_TOKENS.reply,
      awareness: awarenessFor("reply"),
      pending,
    });
  const reply = composeReply();
  const heartbeat = composePrompt({
    ...common,
    kind: "heartbeat",
    maxTokens: MAX_TOKENS.decide,
    log: window.slice(0, -1),
    awareness: awarenessFor("heartbeat"),
    checkinText: checkinMomentText(`Wednesday 16:40, ${ZONE}`),
  });

  const exchange = [...pending, assistantAt(END + MINUTE, "Sounds like a good plan.")];
  const evicting = window.filter((m) => reply.workingIds.includes(m.id)).slice(0, 2);
  const sections = reflectionPrompt(mind, exchange, evicting, now, ZONE);
  const reflection = reflectPrefix + sections.reduce((sum, s) => sum + s.tokens, 0);

  const turnTokens = (m: Message) => estimateTokens(describeMessage(m)) + 6;
  const wholeLog = prefix.tokens + history.reduce((sum, m) => sum + turnTokens(m), 0);
  const lastTen = prefix.tokens + history.slice(-10).reduce((sum, m) => sum + turnTokens(m), 0);
  return {
    messages: history.length,
    reply: reply.sections,
    heartbeat: heartbeat.sections,
    reflection,
    wholeLog,
    lastTen,
    composeTiming: time(composeReply),
  };
}

/** A daily routine of exchanges and check-ins between 8:00 and 22:00 local. */
function generateHistory(days: number, rhythm: Rhythm): Message[] {
  const messages: Message[] = [];
  let n = 0;
  const random = seeded(days);
  const start = END - days * DAY;
  for (let day = 0; day < days; day++) {
    const morning = start + day * DAY + 7 * 60 * MINUTE;
    const events: Array<{ at: number; kind: "exchange" | "checkin" }> = [];
    for (let i = 0; i < rhythm.exchanges; i++)
      events.push({ at: morning + Math.floor(random() * 14 * 60) * MINUTE, kind: "exchange" });
    for (let i = 0; i < rhythm.checkins; i++) {
      events.push({
        at: morning + Math.floor(60 + (i * 13 * 60) / rhythm.checkins) * MINUTE,
        kind: "checkin",
      });
    }
    events.sort((a, b) => a.at - b.at);
    for (const event of events) {
      if (event.at >= END) continue;
      if (event.kind === "checkin") {
        messages.push(assistantAt(event.at, pick(CHECKIN_TEXTS, random), "heartbeat", n++));
        continue;
      }
      messages.push(message(n++, event.at, "user", pick(USER_TEXTS, random)));
      if (event.at + 2 * MINUTE < END)
        messages.push(assistantAt(event.at + 2 * MINUTE, pick(ASSISTANT_TEXTS, random), "reply", n++));
    }
  }
  messages.push(
    message(n, END - MINUTE, "user", "Back home now. The release is moved again, I'm tired of it."),
  );
  return messages.sort((a, b) => Date.parse(a.ts) - Date.parse(b.ts));
}

/** The mind reflection would have curated after this many days. */
function curatedMind(days: number, now: Date): MindState {
  const mind = initialMindState(now);
  const facts = Math.min(2 + Math.floor(days / 2), 14);
  const lines = (prefix: string, texts: string[]) =>
    texts.map((text, i) => ({
      id: `${prefix}${i + 1}`,
      text,
      learnedAt: now.toISOString(),
      sourceMessageIds: [],
    }));
  mind.scratchpad.understanding_known = lines(
    "k",
    Array.from(
      { length: facts },
      (_, i) => `- (user) ${USER_TEXTS[i % USER_TEXTS.length]?.slice(0, 60)} [fact ${i + 1}]`,
    ),
  );
  mind.scratchpad.understanding_believed = lines(
    "b",
    days > 3 ? ["- Evenings are when they open up most.", "- Work stress peaks before releases."] : [],
  );
  mind.scratchpad.trajectory_now = "The release moved again; they are tired and frustrated.";
  mind.scratchpad.trajectory_path =
    days > 1 ? "sleep worries → work release slipping → tired evenings → now venting about the release" : "";
  mind.scratchpad.trajectory_later =
    days > 7 ? "- Pottery class: ask after the release ships.\n- Chair: check if returned." : "";
  mind.scratchpad.workspace =
    days > 7
      ? "Budget notes: groceries ≤ 400/month; cancel second streaming service; review on the 1st."
      : "";
  mind.scratchpad.self_confidence =
    days > 7 ? "MEDIUM - know their routine, less sure about their mood swings" : "LOW - early days";
  mind.scratchpad.self_flags =
    days > 7 ? "PROTECT: sister visiting this week\nREVISIT: how often to check in on work days" : "";
  const items = Math.min(days * 2, 800);
  mind.memory = Array.from({ length: items }, (_, i): MemoryItem => {
    const kinds = ["pattern", "open_loop", "milestone"] as const;
    return {
      id: `m${i}`,
      kind: kinds[i % 3] as MemoryItem["kind"],
      text: `${["Weekends are loose", "Wants to finish the pottery piece", "Shipped the first release"][i % 3]} (${i})`,
      learnedAt: new Date(now.getTime() - (i % Math.max(days, 1)) * DAY).toISOString(),
      sourceMessageIds: [],
      importance: 1 + (i % 5),
      topics: [["work", "social", "learning"][i % 3] as string],
      ...(i % 7 === 0 && i > 0 ? { retiredAt: now.toISOString(), retiredWhy: "closed" as const } : {}),
    };
  });
  mind.threads = threadsFor(days, now);
  return mind;
}

function threadsFor(days: number, now: Date): Threads {
  const names = [
    "main",
    "work",
    "health",
    "family",
    "budget",
    "pottery",
    "sleep",
    "reading",
    "travel",
    "chair",
    "garden",
    "friends",
  ];
  const count = Math.min(1 + Math.floor(days / 20), names.length);
  const list = names.slice(0, count).map((name) => ({
    name,
    createdAt: new Date(now.getTime() - days * DAY).toISOString(),
    notes: Array.from({ length: Math.min(days, 12) }, (_, i) => ({
      ts: new Date(now.getTime() - i * DAY).toISOString(),
      text: `[${i % 2 ? "←" : "→"} ${name}] a short note on why we moved, number ${i}`,
      kind: "note" as const,
    })),
  }));
  return { current: "main", list, switches: [] };
}

function message(n: number, at: number, role: Message["role"], text: string): Message {
  return {
    id: `b${String(n).padStart(7, "0")}`,
    ts: new Date(at).toISOString(),
    role,
    text,
    channel: "telegram",
  };
}

function assistantAt(
  at: number,
  text: string,
  trigger: "reply" | "heartbeat" = "reply",
  n = 9_999_999,
): Message {
  return { ...message(n, at, "assistant", text), trigger };
}

function seeded(seed: number): () => number {
  let state = seed * 2_654_435_761;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

function pick<T>(list: readonly T[], random: () => number): T {
  return list[Math.floor(random() * list.length)] as T;
}

function time(fn: () => unknown): { median_ms: number; p95_ms: number } {
  const samples: number[] = [];
  for (let i = 0; i < 25; i++) {
    const started = performance.now();
    fn();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { median_ms: round(samples[12] ?? 0), p95_ms: round(samples[23] ?? 0) };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
