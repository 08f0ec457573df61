import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { Channel } from "../core/message.ts";
import type { OutboundPort } from "../core/port.ts";
import type { UsageRecord } from "../core/usage.ts";
import { recordUsage } from "../core/usage.ts";
import type { PendingImage } from "../mind/compose.ts";
import type { GenerateDeps } from "../mind/generate.ts";
import type { ModelClient } from "../model/llm.ts";
import type { Transcriber } from "../model/transcription.ts";
import type { NotesStore } from "../store/notes.ts";
import type { Trace } from "../store/trace.ts";
import type { MindStore } from "./mind-document.ts";
import type { Outbox } from "./outbox.ts";
import type { ReflectionSchedule } from "./reflection-schedule.ts";
import type { ReplyRetry } from "./reply-retry.ts";
import type { TurnPromptDeps } from "./turn-prompt.ts";

/**
 * What a turn works with, built once by the companion and shared by its reply and check-in
 * turns: the stores and the model, plus the parts that each carry one idea (the outbox, the
 * reply retry, the reflection schedule), so a turn only orders steps.
 */
export interface TurnContext extends TurnPromptDeps {
  clock: Clock;
  mind: MindStore;
  notes: NotesStore;
  llm: ModelClient;
  /** Hears the person's voice notes (voice-notes.ts); absent when no transcription service is set up. */
  transcriber?: Transcriber;
  port: OutboundPort;
  logger: Logger;
  /** Filled as messages arrive, emptied once they are answered. */
  images: Map<string, PendingImage>;
  outbox: Outbox;
  retry: ReplyRetry;
  reflection: ReflectionSchedule;
  trace: Pick<Trace, "note">;
  /** When this process started (the companion was built): replies to earlier messages are anchored. */
  startedAt: Date;
  /** The channel assistant messages are logged with when the person has not written yet. */
  defaultChannel: Channel;
  /**
   * The download of a sound this process logged and is still keeping, by where it will be kept
   * (media.stored), to wait for; undefined when none is under way (it was kept, or a crash cut it off).
   */
  soundArriving(stored: string): Promise<void> | undefined;
  /** True once the companion is closing: a turn that starts then does nothing. */
  isClosed(): boolean;
}

/** The slice of the context the generation steps call, with the same model and notes as the turn. */
export function generateDepsOf(context: TurnContext): GenerateDeps {
  return { llm: context.llm, notes: context.notes };
}

/**
 * Records what a turn's model calls used in the mind's ledger (what the daily budget counts),
 * also when the turn failed after some of them; a failed write is logged, never fails the turn.
 */
export async function recordSpent(context: TurnContext, usage: readonly UsageRecord[]): Promise<void> {
  try {
    await recordUsage(context.mind, usage, context.clock.now());
  } catch (error) {
    context.logger.warn({ err: error }, "could not record model usage");
  }
}
