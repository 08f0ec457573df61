import { DateTime } from "luxon";
import type { CheckinCommands } from "../companion/checkin-controls.ts";
import type {
  DataRightsCommands,
  ForgottenCopies,
  MemoryEntry,
  NotListed,
  ReviewGroup,
} from "../companion/data-rights.ts";
import { formatQuietHours } from "../core/checkin-settings.ts";
import type { Clock } from "../core/clock.ts";
import { clip, plural } from "../core/text.ts";
import {
  BOT_COMMANDS,
  type CommandName,
  parseFixArgs,
  parseForgetArgs,
  parseMemoryArgs,
  parsePauseArgs,
  parseQuietArgs,
  parseTimezoneArgs,
  parseWipeArgs,
  type SlashCommand,
  WIPE_CONFIRMATION,
} from "./commands.ts";
import { decisionSentence } from "./reasons.ts";

/**
 * What each slash command does, apart from any channel: it reads and changes the person's
 * settings and what is kept about them through the companion (Companion.checkins,
 * Companion.rights) and answers
 * with text (or, for /export, a file). Kept out of the bot so every command can be exercised
 * against real stores without a network.
 */

/** What a command answers with. */
export type CommandReply =
  | { text: string }
  | { document: { fileName: string; contents: Uint8Array; caption: string } };

export interface CommandHandlerDeps {
  clock: Clock;
  /** /pause, /resume, /quiet, /tz and /why: the companion's check-in settings (it tells the schedule a new zone). */
  checkins: CheckinCommands;
  /** The /status text (built by the status module from the stores and the schedule). */
  status(): Promise<string>;
  /**
   * Whether voice notes are heard and where they are transcribed, in words (the status module's
   * voiceNotesWords): /help says it. Without it, /help says nothing about voice notes.
   */
  voiceNotes?: string;
  /**
   * /memory, /forget, /fix, /export and /wipe: the person's rights over what is kept, which the
   * companion runs (deleting and correcting with nothing else writing, so nothing in flight
   * writes back what they change, and the schedule follows a /tz a wipe dropped).
   */
  rights: DataRightsCommands;
  /**
   * The longest text the channel shows as one message (each channel says its own): a /memory
   * page fits in it. Without one, the whole list is one page.
   */
  textLimit?: number;
}

/** /forget leaves the conversation log as it is: the person's own record, removed only by /wipe. */
const LOG_KEEPS_IT = "Our past messages still contain it; /wipe removes everything.";

const START_TEXT = [
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

/**
 * /help: every command with its menu line, from the same list as Telegram's menu, and whether
 * voice notes are heard; no model involved.
 */
function helpText(voiceNotes: string | undefined): string {
  return [
    "The commands I understand:",
    "",
    ...BOT_COMMANDS.map((c) => `/${c.command} — ${c.description}`),
    "",
    "Anything else you write is just talk.",
    ...(voiceNotes === undefined ? [] : [`Voice notes: ${voiceNotes}.`]),
  ].join("\n");
}

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

/** Room a /memory page leaves under the channel's text limit for its header and footer. */
const MEMORY_PAGE_FRAME_CHARS = 300;

/** The headings of /memory's groups. */
const GROUP_HEADINGS: Record<ReviewGroup, string> = {
  understanding_known: "What I know",
  understanding_believed: "What I believe (might be wrong)",
  understanding_unknown: "What I don't know yet",
  pattern: "Patterns you've told me about",
  open_loop: "Things still open",
  milestone: "Milestones",
};

/** The listing cut into pages of at most `pageChars`, each group headed (again on a new page). */
function memoryPages(entries: readonly { group: ReviewGroup; text: string }[], pageChars: number): string[] {
  const pages: string[] = [];
  let page = "";
  let group: ReviewGroup | null = null;
  for (const entry of entries) {
    const heading = `${GROUP_HEADINGS[entry.group]}\n${entry.text}`;
    const piece = entry.group === group ? entry.text : page === "" ? heading : `\n${heading}`;
    const joined = page === "" ? piece : `${page}\n${piece}`;
    if (page !== "" && joined.length > pageChars) {
      pages.push(page);
      page = heading;
    } else page = joined;
    group = entry.group;
  }
  if (page !== "") pages.push(page);
  return pages;
}

/** /memory quotes where an item came from in this many characters at most, "…" included: "I work nights at the…". */
const SOURCE_QUOTE_CHARS = 60;

/**
 * Why a /memory number names nothing now, and what to do. For /forget, digits the person meant
 * as words are one step away: the answer says how to ask for them as text.
 */
function notInListing(number: number, outcome: NotListed, command: "forget" | "fix"): string {
  if (outcome.status === "gone") {
    return `Number ${number} in your last /memory list is gone already (forgotten or changed since). Send /memory to see the list as it is now.`;
  }
  const asText = command === "forget" ? ` To forget the words "${number}", send /forget "${number}".` : "";
  if (outcome.count === 0)
    return `There is no list to take ${number} from yet. Send /memory to see the list.${asText}`;
  return `There is no ${number} in your last /memory list (it had ${outcome.count}). Send /memory to see the list.${asText}`;
}

/** "Also deleted where it was mentioned: 2 turn records.", or null when nothing was. */
function copiesSentence(copies: ForgottenCopies, what = "it was"): string | null {
  const elsewhere = [
    copies.notes > 0 ? plural(copies.notes, "note") : "",
    copies.traceRecords > 0 ? plural(copies.traceRecords, "turn record") : "",
    copies.otherFiles > 0 ? plural(copies.otherFiles, "other file") : "",
  ].filter(Boolean);
  return elsewhere.length > 0 ? `Also deleted where ${what} mentioned: ${elsewhere.join(", ")}.` : null;
}

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
        return { text: helpText(this.#deps.voiceNotes) };
      case "start":
        return { text: START_TEXT };
      case "status":
        return { text: await this.#deps.status() };
      case "pause":
        return this.#pause(args);
      case "resume":
        await this.#deps.checkins.resume();
        return { text: "Check-ins are back on." };
      case "quiet":
        return this.#quiet(args);
      case "tz":
        return this.#timezone(args);
      case "memory":
        return this.#memory(args);
      case "forget":
        return this.#forget(args);
      case "fix":
        return this.#fix(args);
      case "export":
        return this.#export();
      case "wipe":
        return this.#wipe(args);
      case "why":
        return { text: this.#why() };
    }
  }

  #zone(): string {
    return this.#deps.checkins.settings().timezone;
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
    await this.#deps.checkins.pause(request.kind === "until" ? request.until : null);
    if (request.kind === "indefinitely")
      return { text: "Check-ins paused until you send /resume. I'm still here when you write." };
    return { text: `Check-ins paused until ${this.#localTime(request.until)} (${this.#zone()}).` };
  }

  async #quiet(args: string): Promise<CommandReply> {
    const parsed = parseQuietArgs(args);
    if (!parsed.ok) return { text: parsed.problem };
    await this.#deps.checkins.setQuietHours(parsed.value);
    const effective = this.#deps.checkins.settings().quietHours;
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
    await this.#deps.checkins.setZone(zone);
    const now = DateTime.fromJSDate(this.#deps.clock.now(), { zone: this.#zone() }).toFormat("HH:mm");
    return {
      text:
        zone === null
          ? `Back to your home zone, ${this.#zone()} (it's ${now} there).`
          : `Got it: you're on ${zone} time now (it's ${now} there). Quiet hours follow you.`,
    };
  }

  async #memory(args: string): Promise<CommandReply> {
    const parsed = parseMemoryArgs(args);
    if (!parsed.ok) return { text: parsed.problem };
    const page = parsed.value;
    const entries = await this.#deps.rights.listMemory({ fresh: page === 1 });
    if (entries.length === 0)
      return { text: "I don't know much about you yet. That will change as we talk." };
    const shown = entries.map((entry) => this.#memoryEntry(entry));
    const pages = memoryPages(
      shown,
      (this.#deps.textLimit ?? Number.POSITIVE_INFINITY) - MEMORY_PAGE_FRAME_CHARS,
    );
    const body = pages[page - 1];
    if (body === undefined) {
      return {
        text: `Your /memory list has ${plural(pages.length, "page")}; /memory ${pages.length} is the last.`,
      };
    }
    const header =
      pages.length === 1
        ? "What I remember about you:"
        : `What I remember about you (page ${page} of ${pages.length}):`;
    const next = page < pages.length ? `/memory ${page + 1} for the next page. ` : "";
    const footer = `${next}/forget 3 deletes number 3; /fix 3 new words corrects it.`;
    return { text: `${header}\n\n${body}\n\n${footer}` };
  }

  /** One item as /memory shows it: number, words, when it was learned and a short quote of where from. */
  #memoryEntry(entry: MemoryEntry): { group: ReviewGroup; text: string } {
    const learned = entry.learnedAt === null ? "" : `learned ${this.#localDate(entry.learnedAt)}`;
    const source =
      entry.source.kind === "unknown"
        ? "source unknown"
        : entry.source.kind === "gone"
          ? "its messages are no longer kept"
          : `from ${entry.source.byPerson ? "your" : "my"} message "${clip(entry.source.text, SOURCE_QUOTE_CHARS, { oneLine: true, fit: true })}"`;
    const about = [learned, source, entry.corrected ? "corrected by you" : ""].filter(Boolean).join(" · ");
    return { group: entry.group, text: `${entry.number}. ${entry.text}\n    ${about}` };
  }

  #localDate(instant: string): string {
    const local = DateTime.fromISO(instant, { zone: this.#zone() });
    const today = DateTime.fromJSDate(this.#deps.clock.now(), { zone: this.#zone() });
    return local.toFormat(local.hasSame(today, "year") ? "ccc d LLL" : "d LLL yyyy");
  }

  async #forget(args: string): Promise<CommandReply> {
    const parsed = parseForgetArgs(args);
    if (!parsed.ok) return { text: parsed.problem };
    const request = parsed.value;
    if (request.kind === "number") {
      const outcome = await this.#deps.rights.forgetListed(request.number);
      if (outcome.status !== "done") return { text: notInListing(request.number, outcome, "forget") };
      const earlier =
        outcome.earlierVersions > 0
          ? ` (with ${plural(outcome.earlierVersions, "earlier version")} of it)`
          : "";
      const lines = [`Forgotten: "${outcome.text}"${earlier}.`];
      const elsewhere = copiesSentence(outcome.copies);
      if (elsewhere) lines.push(elsewhere);
      lines.push(`The other numbers stay as they were until you send /memory again. ${LOG_KEEPS_IT}`);
      return { text: lines.join("\n\n") };
    }
    const text = request.text;
    const { removed: result, copies } = await this.#deps.rights.forgetText(text);
    const removed = [
      ...result.memory.map((item) => item.text),
      ...result.scratchpadLines.map((line) => line.replace(/^[^:]*:\s*/, "")),
      ...result.threadNotes,
    ];
    const elsewhere = copiesSentence(copies);
    if (removed.length === 0 && elsewhere === null) {
      return { text: `I had nothing in my memory or notes that mentions "${text}".\n\n${LOG_KEEPS_IT}` };
    }
    const lines = [`Forgotten: "${text}" (${plural(removed.length, "memory", "memories")}).`];
    if (removed.length > 0) lines.push(removed.map((line) => `• ${line}`).join("\n"));
    if (elsewhere) lines.push(elsewhere);
    lines.push(LOG_KEEPS_IT);
    return { text: lines.join("\n\n") };
  }

  async #fix(args: string): Promise<CommandReply> {
    const parsed = parseFixArgs(args);
    if (!parsed.ok) return { text: parsed.problem };
    const { number, text } = parsed.value;
    const outcome = await this.#deps.rights.fixListed(number, text);
    if (outcome.status !== "done") return { text: notInListing(number, outcome, "fix") };
    const lines = [
      `Corrected ${number}: "${outcome.after}" (it said "${outcome.before}"). I'll keep it as you wrote it.`,
    ];
    const elsewhere = copiesSentence(outcome.copies, "the old words were");
    if (elsewhere) lines.push(elsewhere);
    return { text: lines.join("\n\n") };
  }

  async #export(): Promise<CommandReply> {
    const data = await this.#deps.rights.exportAll();
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
    await this.#deps.rights.wipeAll();
    return {
      text: "Done. Everything is deleted; I'm starting fresh. Only the count of tokens used stays, so today's budget still holds.",
    };
  }

  #why(): string {
    const decision = this.#deps.checkins.lastDecision();
    if (!decision) return "I haven't considered a check-in yet.";
    return `At ${this.#localTime(decision.ts)} ${decisionSentence(decision)}`;
  }
}
