import { DateTime } from "luxon";
import { buildAwarenessContext } from "../conversation/awareness/build.ts";
import {
  type AwarenessContext,
  defaultAwarenessSettings,
  type PriorMemory,
  type Trigger,
} from "../conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../conversation/awareness/format.ts";
import { detectTopics } from "../conversation/awareness/topics.ts";
import { effectiveSettings, type HeartbeatSettings } from "../core/checkin-settings.ts";
import { type Message, messageTime } from "../core/message.ts";
import { pdfPageCount } from "../core/pdf.ts";
import {
  type ComposedPrompt,
  composePrompt,
  DOCUMENT_SHOWN_MS,
  type PendingImage,
  type ShownDocument,
} from "../mind/compose.ts";
import { MAX_TOKENS } from "../mind/generate.ts";
import { PRIOR_CONTEXT_TOKENS, priorMemoryFor, rankMemory, withoutPriorContext } from "../mind/memory.ts";
import { NOTES_TOOLS } from "../mind/notes-tools.ts";
import { REFLECT_TOOL } from "../mind/reflect.ts";
import { renderScratchpad } from "../mind/scratchpad.ts";
import { recentThreadNotes } from "../mind/threads.ts";
import { prefixCacheFor, TURN_PREFIX_PURPOSES } from "../model/cache-plan.ts";
import type { Persona, PersonaSource } from "../model/persona.ts";
import { buildStablePrefix, checkinMomentText, type StablePrefix } from "../model/prompts.ts";
import type { ModelConfig } from "../model/settings.ts";
import type { MessageLog } from "../store/messages.ts";
import type { SentFiles } from "../store/sent-files.ts";
import type { MindState } from "./mind-document.ts";

/** Where a turn's prompt is read from: settings, the log, the persona, the images waiting with messages, the documents sent. */
export interface TurnPromptDeps {
  core: HeartbeatSettings;
  model: ModelConfig;
  log: MessageLog;
  persona: PersonaSource;
  /** Images of the person's messages not answered yet, by message id (they are not in the log). */
  images: ReadonlyMap<string, PendingImage>;
  /** The documents the person sent, which the log points at (media.stored). */
  files: SentFiles;
  /** Voice notes are transcribed (a transcription service is set up): the protocol says so. */
  hearsVoiceNotes: boolean;
}

/** A turn's prompt and which awareness block it showed, which the trace records. */
export interface Composed {
  prompt: ComposedPrompt;
  awarenessFormat: "full" | "slim";
}

/** What a check-in already computed for its pre-check, so the prompt shows exactly what was checked. */
export interface KnownContext {
  slice: Message[];
  awareness: AwarenessContext;
  zone: string;
  /** What memory was ranked against for `prior`: the same ranks the memory shown. */
  query: ReturnType<typeof queryOf>;
  prior: PriorMemory;
}

/**
 * Assembles the prompt fresh for one turn — stable prefix, scratchpad, awareness, episodic
 * memory, working messages — so nothing rides along from a replayed transcript and the size
 * stays flat however long the relationship runs.
 */
export async function composeTurnPrompt(
  deps: TurnPromptDeps,
  kind: Trigger,
  now: Date,
  mind: MindState,
  pending: readonly Message[],
  known?: KnownContext,
): Promise<Composed> {
  const zone = known?.zone ?? effectiveSettings(deps.core, mind.heartbeat, now).timezone;
  const slice = known?.slice ?? (await deps.log.awarenessSlice(now, defaultAwarenessSettings.windowHours));
  const query = known?.query ?? queryOf(kind === "reply" ? pending : slice.slice(-4));
  const prior = known?.prior ?? priorMemoryFor(mind, query, now, PRIOR_CONTEXT_TOKENS);
  const awareness = known?.awareness ?? awarenessFor(slice, now, zone, kind, prior);
  const awarenessFormat = kind === "heartbeat" ? "full" : awareness.format;
  const ranked = rankMemory(mind.memory, query, now).map((r) => r.item);
  const prefix = await stablePrefix(deps);
  const local = DateTime.fromJSDate(now, { zone });
  const log = deps.log.recent().filter((m) => messageTime(m) <= now.getTime());
  const prompt = composePrompt({
    kind,
    now,
    zone,
    model: deps.model.model,
    maxTokens: kind === "reply" ? MAX_TOKENS.reply : MAX_TOKENS.decide,
    ceiling: deps.model.promptCeiling,
    prefix,
    // In single-phase mode this call also reflects, so it sees the UNDERSTANDING ids it edits by.
    scratchpad: renderScratchpad(mind.scratchpad, { ids: deps.model.reflectMode === "single-phase" }),
    awareness: formatAwarenessForPrompt(awareness, kind),
    threadNotes: recentThreadNotes(mind.threads),
    // The full awareness block shows the prior context; the episodic section shows the rest.
    memory: awarenessFormat === "full" ? withoutPriorContext(ranked, prior) : ranked,
    log,
    logIsWhole: !(await deps.log.hasArchived()),
    threads: mind.threads,
    flushedThrough: mind.flushedThrough,
    pending,
    images: deps.images,
    documents: await documentsToShow(deps.files, log, pending, now),
    waitedMinutes: waitedMinutes(pending, awareness, now),
    ...(kind === "heartbeat"
      ? { checkinText: checkinMomentText(`${local.toFormat("cccc HH:mm")}, ${zone}`) }
      : {}),
    prefixCache: prefixCacheFor(mind.usage, TURN_PREFIX_PURPOSES, deps.model.model, deps.model.prices),
  });
  return { prompt, awarenessFormat };
}

/**
 * The stored documents to show: those of the messages waiting for this answer, however long they
 * waited, and those of other shown messages that arrived within DOCUMENT_SHOWN_MS; read from
 * files/, a missing file as `missing`. Compose decides where each goes.
 */
async function documentsToShow(
  files: SentFiles,
  log: readonly Message[],
  pending: readonly Message[],
  now: Date,
): Promise<Map<string, ShownDocument>> {
  const recent = log.filter((m) => now.getTime() - Date.parse(m.ts) <= DOCUMENT_SHOWN_MS);
  const documents = new Map<string, ShownDocument>();
  for (const message of [...pending, ...recent]) {
    const stored = message.media?.kind === "document" ? message.media.stored : undefined;
    if (!stored || message.media?.notRead || documents.has(message.id)) continue;
    const kept = await files.read(stored);
    documents.set(
      message.id,
      kept === null
        ? { kind: "missing" }
        : kept.kind === "pdf"
          ? { kind: "pdf", base64: kept.bytes.toString("base64"), pages: pdfPageCount(kept.bytes) }
          : { kind: "text", text: kept.bytes.toString("utf8") },
    );
  }
  return documents;
}

/** The awareness block for a turn, in the person's zone, with what memory says was going on before. */
export function awarenessFor(
  slice: readonly Message[],
  now: Date,
  zone: string,
  trigger: Trigger,
  prior: PriorMemory,
): AwarenessContext {
  return buildAwarenessContext(slice, now, { ...defaultAwarenessSettings, timezone: zone, trigger }, prior);
}

/** What memory is ranked against: the words of the messages at hand and the topics in them. */
export function queryOf(messages: readonly Message[]): { text: string; topics: string[] } {
  const text = messages.map((m) => m.text).join("\n");
  let topics = recentQueryTopics.get(text);
  if (topics === undefined) {
    topics = detectTopics(text);
    const oldest = recentQueryTopics.keys().next();
    if (recentQueryTopics.size >= QUERIES_KEPT && !oldest.done) recentQueryTopics.delete(oldest.value);
    recentQueryTopics.set(text, topics);
  }
  return { text, topics: [...topics] };
}

/**
 * The topics of the latest query texts (a few hundred short texts). Check-in ticks ask about
 * the same last messages hour after hour: nine queries in ten of a simulated month repeat one
 * of the last 256 (half of them one of the last 16), and detecting topics is 0.25 ms a text.
 */
const recentQueryTopics = new Map<string, readonly string[]>();
const QUERIES_KEPT = 256;

async function stablePrefix(deps: TurnPromptDeps): Promise<StablePrefix> {
  const persona = await deps.persona.current();
  const singlePhase = deps.model.reflectMode === "single-phase";
  const variant = `${singlePhase}:${deps.hearsVoiceNotes}`;
  let built = prefixesOf.get(persona);
  if (built === undefined) {
    built = new Map();
    prefixesOf.set(persona, built);
  }
  let prefix = built.get(variant);
  if (prefix === undefined) {
    prefix = buildStablePrefix(persona, {
      notes: NOTES_TOOLS,
      ...(singlePhase ? { reflect: REFLECT_TOOL } : {}),
      hearsVoiceNotes: deps.hearsVoiceNotes,
    });
    built.set(variant, prefix);
  }
  return prefix;
}

/**
 * Each persona's stable prefixes, by whether reflection is single-phase and voice notes are
 * heard. The persona is the same object while its files are (personaFromDir), and building the
 * prefix every turn (its text, and the size of it and of the tools) was 0.05 s of a month.
 */
const prefixesOf = new WeakMap<Persona, Map<string, StablePrefix>>();

/** How long the oldest pending message waited, when the awareness block cannot say it (a notice came between). */
function waitedMinutes(
  pending: readonly Message[],
  awareness: AwarenessContext,
  now: Date,
): number | undefined {
  const oldest = pending[0];
  if (!oldest || awareness.conversationState.waitingMinutes !== null) return undefined;
  return Math.floor((now.getTime() - Date.parse(oldest.ts)) / 60_000);
}
