import { DateTime } from "luxon";
import { formatQuietHours, type QuietHours } from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { plural } from "../core/text.ts";
import type { ForgottenCopies } from "../mind/forget.ts";
import { activeMemory } from "../mind/memory.ts";
import type { MindStore } from "../store/mind.ts";
import type { MemoryItem } from "../store/mind-schema.ts";
import {
  BOT_COMMANDS,
  type CommandName,
  parseForgetArgs,
  parsePauseArgs,
  parseQuietArgs,
  parseTimezoneArgs,
  parseWipeArgs,
  type SlashCommand,
  WIPE_CONFIRMATION,
} from "./commands.ts";
import { decisionSentence } from "./reasons.ts";

/**
 * What each slash command does, apart from Telegram: it reads and changes the mind's state
 * and answers with text (or, for /export, a file). Kept out of the bot so every command can
 * be exercised against a real MindStore without a network.
 */

/** What a command answers with. */
export type CommandReply =
  | { text: string }
  | { document: { fileName: string; contents: Uint8Array; caption: string } };

export interface CommandHandlerDeps {
  mind: MindStore;
  clock: Clock;
  /** The configured zone and quiet hours; the person's /tz and /quiet override them. */
  settings: { timezone: string; quietHours: QuietHours };
  /** The /status text (built by the status module from the stores and the schedule). */
  status(): Promise<string>;
  /** Everything kept about the person, as one JSON-able object. */
  exportAll(): Promise<unknown>;
  /** Deletes everything kept about the person. */
  wipeAll(): Promise<void>;
  /** Deletes the copies of `text` kept beside the mind (trace records, note lines, other files) for /forget. */
  forgetCopies(text: string): Promise<ForgottenCopies>;
  /**
   * Runs /wipe and /forget with no turn or reflection writing meanwhile (Companion.exclusive),
   * so nothing in flight writes back what they delete. Without it they run at once.
   */
  exclusive?<T>(work: () => Promise<T>): Promise<T>;
  /** The person's zone changed (/tz): the heartbeat schedule follows it. */
  onTimezoneChange?(zone: string): void;
}

/** /forget leaves the conversation log as it is: the person's own record, removed only by /wipe. */
const LOG_KEEPS_IT = "Our past messages still contain it; /wipe removes everything.";

export const START_TEXT = [
  "Hi. I'm a companion for one person: you.",
  "",
  "Talk to me about anything. I remember what matters to you, and now and then I check in on my own — never during your quiet hours, and never piling up messages you haven't answered.",
  "",
  "Your words are kept on the computer that runs me and are sent to the AI model only to write my replies.",
  "",
  `Commands: ${BOT_COMMANDS.filter((c) => c.command !== "start" && c.command !== "help")
    .map((c) => `/${c.command}`)
    .join(", ")}. /help says what each one does.`,
].join("\n");

/** /help: every command with its menu line, from the same list as Telegram's menu; no model involved. */
const HELP_TEXT = [
  "The commands I understand:",
  "",
  ...BOT_COMMANDS.map((c) => `/${c.command} — ${c.description}`),
  "",
  "Anything else you write is just talk.",
].join("\n");

/** The local answer to a slash word that is no command of ours, instead of treating it as chat. */
function unknownCommandText(typed: string): string {
  return `I don't know the command /${typed}. /help lists the ones I do.`;
}

/** What /wipe deletes and what it keeps, said before the person confirms. */
const WIPE_QUESTION = [
  "This deletes everything I keep about you: our messages and the files you sent, my notes and memory, the check-in decisions and turn records, your /pause, /quiet and /tz settings, and any exported files on my computer. It can't be undone.",
  "",
  "It keeps only the count of tokens I've used (numbers, no words), so today's budget still holds.",
  "",
  `To go ahead, send /wipe ${WIPE_CONFIRMATION}. /wipe no cancels.`,
].join("\n");

/** Runs one command; `args` is the text after the command name. */
export class CommandHandlers {
  readonly #deps: CommandHandlerDeps;

  constructor(deps: CommandHandlerDeps) {
    this.#deps = deps;
  }

  /** Answers a slash command as typed: ours are run, an unknown one is pointed at /help. */
  answer(command: SlashCommand): Promise<CommandReply> {
    if (command.name === null) return Promise.resolve({ text: unknownCommandText(command.typed) });
    return this.run(command.name, command.args);
  }

  async run(name: CommandName, args: string): Promise<CommandReply> {
    switch (name) {
      case "help":
        return { text: HELP_TEXT };
      case "start":
        return { text: START_TEXT };
      case "status":
        return { text: await this.#deps.status() };
      case "pause":
        return this.#pause(args);
      case "resume":
        await this.#deps.mind.update((m) => {
          m.heartbeat.pausedIndefinitely = false;
          m.heartbeat.pausedUntil = null;
        });
        return { text: "Check-ins are back on." };
      case "quiet":
        return this.#quiet(args);
      case "tz":
        return this.#timezone(args);
      case "memory":
        return { text: this.#memory() };
      case "forget":
        return this.#forget(args);
      case "export":
        return this.#export();
      case "wipe":
        return this.#wipe(args);
      case "why":
        return { text: this.#why() };
    }
  }

  #zone(): string {
    return this.#deps.mind.read().heartbeat.timezone ?? this.#deps.settings.timezone;
  }

  #localTime(instant: Date | string): string {
    const local = DateTime.fromJSDate(new Date(instant), { zone: this.#zone() });
    const today = DateTime.fromJSDate(this.#deps.clock.now(), { zone: this.#zone() });
    return local.hasSame(today, "day") ? local.toFormat("HH:mm") : local.toFormat("ccc d LLL, HH:mm");
  }

  async #pause(args: string): Promise<CommandReply> {
    const parsed = parsePauseArgs(args, this.#deps.clock.now(), this.#zone());
    if (!parsed.ok) return { text: parsed.problem };
    const request = parsed.value;
    await this.#deps.mind.update((m) => {
      m.heartbeat.pausedIndefinitely = request.kind === "indefinitely";
      m.heartbeat.pausedUntil = request.kind === "until" ? request.until.toISOString() : null;
    });
    if (request.kind === "indefinitely")
      return { text: "Check-ins paused until you send /resume. I'm still here when you write." };
    return { text: `Check-ins paused until ${this.#localTime(request.until)} (${this.#zone()}).` };
  }

  async #quiet(args: string): Promise<CommandReply> {
    const parsed = parseQuietArgs(args);
    if (!parsed.ok) return { text: parsed.problem };
    const quiet = parsed.value;
    await this.#deps.mind.update((m) => {
      m.heartbeat.quietHours = quiet;
    });
    const effective = quiet ?? this.#deps.settings.quietHours;
    return {
      text:
        effective.start === effective.end
          ? "No quiet hours now: I may check in at any hour."
          : `Quiet hours: ${formatQuietHours(effective)} (${this.#zone()}). I won't check in then.`,
    };
  }

  async #timezone(args: string): Promise<CommandReply> {
    const parsed = parseTimezoneArgs(args);
    if (!parsed.ok) return { text: parsed.problem };
    const zone = parsed.value;
    await this.#deps.mind.update((m) => {
      m.heartbeat.timezone = zone;
    });
    this.#deps.onTimezoneChange?.(this.#zone());
    const now = DateTime.fromJSDate(this.#deps.clock.now(), { zone: this.#zone() }).toFormat("HH:mm");
    return {
      text:
        zone === null
          ? `Back to your home zone, ${this.#zone()} (it's ${now} there).`
          : `Got it: you're on ${zone} time now (it's ${now} there). Quiet hours follow you.`,
    };
  }

  #memory(): string {
    const mind = this.#deps.mind.read();
    const known = mind.scratchpad.understanding_known.trim();
    const active = activeMemory(mind.memory);
    const list = (items: MemoryItem[]) => items.map((item) => `• ${item.text}`).join("\n");
    const patterns = active.filter((i) => i.kind === "pattern");
    const loops = active.filter((i) => i.kind === "open_loop");
    const milestones = active.filter((i) => i.kind === "milestone");
    const sections = [
      known ? `What I know:\n${known}` : "",
      patterns.length ? `Patterns you've told me about:\n${list(patterns)}` : "",
      loops.length ? `Things still open:\n${list(loops)}` : "",
      milestones.length ? `Milestones:\n${list(milestones)}` : "",
    ].filter(Boolean);
    if (sections.length === 0) return "I don't know much about you yet. That will change as we talk.";
    return `${sections.join("\n\n")}\n\n/forget TEXT deletes anything here that mentions TEXT.`;
  }

  async #forget(args: string): Promise<CommandReply> {
    const parsed = parseForgetArgs(args);
    if (!parsed.ok) return { text: parsed.problem };
    const text = parsed.value;
    const { result, copies } = await this.#exclusive(async () => ({
      result: await this.#deps.mind.forget(text),
      copies: await this.#deps.forgetCopies(text),
    }));
    const removed = [
      ...result.memory.map((item) => item.text),
      ...result.scratchpadLines.map((line) => line.replace(/^[^:]*:\s*/, "")),
      ...result.threadNotes,
    ];
    const elsewhere = [
      copies.notes > 0 ? plural(copies.notes, "note") : "",
      copies.traceRecords > 0 ? plural(copies.traceRecords, "turn record") : "",
      copies.otherFiles > 0 ? plural(copies.otherFiles, "other file") : "",
    ].filter(Boolean);
    if (removed.length === 0 && elsewhere.length === 0) {
      return { text: `I had nothing in my memory or notes that mentions "${text}".\n\n${LOG_KEEPS_IT}` };
    }
    const lines = [`Forgotten: "${text}" (${plural(removed.length, "memory", "memories")}).`];
    if (removed.length > 0) lines.push(removed.map((line) => `• ${line}`).join("\n"));
    if (elsewhere.length > 0) lines.push(`Also deleted where it was mentioned: ${elsewhere.join(", ")}.`);
    lines.push(LOG_KEEPS_IT);
    return { text: lines.join("\n\n") };
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    return this.#deps.exclusive ? this.#deps.exclusive(work) : work();
  }

  async #export(): Promise<CommandReply> {
    const data = await this.#deps.exportAll();
    const stamp = DateTime.fromJSDate(this.#deps.clock.now(), { zone: "utc" }).toFormat("yyyy-LL-dd");
    return {
      document: {
        fileName: `presence-export-${stamp}.json`,
        contents: new TextEncoder().encode(`${JSON.stringify(data, null, 2)}\n`),
        caption:
          "Everything I keep about you: our messages and the files you sent, my notes and memory, check-in decisions.",
      },
    };
  }

  /**
   * `/wipe` asks (saying what goes and what stays); `/wipe yes` wipes; any other answer
   * cancels and says nothing was deleted. The "yes" is the confirmation, so a person who
   * knows what it does need not be asked first.
   */
  async #wipe(args: string): Promise<CommandReply> {
    const answer = parseWipeArgs(args);
    if (answer === "cancel") {
      return {
        text: `Cancelled: nothing was deleted. (/wipe ${WIPE_CONFIRMATION} deletes everything.)`,
      };
    }
    if (answer === "ask") return { text: WIPE_QUESTION };
    const zoneBefore = this.#zone();
    await this.#exclusive(() => this.#deps.wipeAll());
    // The wipe dropped any /tz: the check-in schedule goes back to the configured zone with it.
    if (this.#zone() !== zoneBefore) this.#deps.onTimezoneChange?.(this.#zone());
    return {
      text: "Done. Everything is deleted; I'm starting fresh. Only the count of tokens used stays, so today's budget still holds.",
    };
  }

  #why(): string {
    const decision = this.#deps.mind.lastDecision();
    if (!decision) return "I haven't considered a check-in yet.";
    return `At ${this.#localTime(decision.ts)} ${decisionSentence(decision)}`;
  }
}
