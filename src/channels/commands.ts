import { DateTime } from "luxon";
import { ITEM_TEXT_MAX_CHARS } from "../companion/data-rights.ts";
import { parseQuietHours, type QuietHours } from "../core/checkin-settings.ts";
import { canonicalZone } from "../core/zones.ts";

/**
 * The slash commands, on Telegram and in the terminal: the menu Telegram shows (setMyCommands)
 * and the parsing of their arguments. Pure — time comes in as `now` and a zone — so every
 * phrasing is unit-tested; the effects live in command-handlers.ts.
 */

/**
 * The commands, in the order Telegram's menu shows them and /help lists them: one list, so
 * the menu and /help never disagree. Descriptions are 3–256 characters (Telegram's limit).
 */
export const BOT_COMMANDS = [
  { command: "help", description: "These commands, one line each" },
  { command: "start", description: "What this is and how it works" },
  { command: "status", description: "Check-ins on or paused, next check-in, tokens today" },
  { command: "pause", description: "Pause check-ins: /pause, /pause 2h, /pause until 18:00" },
  { command: "resume", description: "Resume check-ins" },
  { command: "quiet", description: "Set quiet hours: /quiet 22:00-08:00" },
  { command: "tz", description: "Set your time zone while travelling: /tz Europe/Lisbon" },
  { command: "memory", description: "What I remember about you, numbered: /memory, /memory 2 for page 2" },
  {
    command: "forget",
    description:
      'Delete one thing: /forget 3 (its /memory number), or /forget TEXT (digits in quotes: /forget "1234")',
  },
  { command: "fix", description: "Correct one thing in your own words: /fix 3 the right words" },
  { command: "export", description: "Everything I keep about you, as a file" },
  { command: "wipe", description: "Delete everything about you (asks first)" },
  { command: "why", description: "Why the last check-in was sent or held back" },
] as const;

export type CommandName = (typeof BOT_COMMANDS)[number]["command"];

/** A parsed argument, or the sentence to say back when it cannot be understood. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const problem = <T>(text: string): Parsed<T> => ({ ok: false, problem: text });

/**
 * A message that is a slash command: one of ours with its arguments, or a word we don't know
 * (`name: null`), which is answered locally too rather than sent to the model as chat.
 */
export type SlashCommand = { name: CommandName; args: string } | { name: null; typed: string };

/**
 * Which command a message is, when it is one ("/pause@my_bot 2h" included). Only a slash
 * followed by a command word counts: "/etc/hosts is broken" or "/ hi" is ordinary text.
 */
export function commandOf(text: string): SlashCommand | null {
  const match = /^\/([a-z][a-z0-9_]*)(?:@\w+)?(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!match) return null;
  const typed = (match[1] ?? "").toLowerCase();
  const known = BOT_COMMANDS.find((c) => c.command === typed);
  return known ? { name: known.command, args: (match[2] ?? "").trim() } : { name: null, typed };
}

/** Check-ins paused until /resume, or until an instant. */
export type PauseRequest = { kind: "indefinitely" } | { kind: "until"; until: Date };

/** The longest pause with an end; longer ones are what plain /pause is for. */
const MAX_PAUSE_DAYS = 30;

const UNIT_MINUTES: Record<string, number> = { m: 1, min: 1, h: 60, hr: 60, d: 1440 };

/**
 * `/pause` (until /resume), `/pause 2h`, `/pause 90m`, `/pause 1h30m`, `/pause 2 days`,
 * `/pause until 18:00` (the next 18:00 in the person's zone: today, or tomorrow if past).
 */
export function parsePauseArgs(args: string, now: Date, zone: string): Parsed<PauseRequest> {
  const text = args.trim().toLowerCase();
  if (text === "") return ok({ kind: "indefinitely" });
  const until = /^until\s+(\d{1,2})(?::(\d{2}))?$/.exec(text);
  if (until) {
    const hour = Number(until[1]);
    const minute = Number(until[2] ?? "0");
    if (hour > 23 || minute > 59) return problem(`"${args}" is not a time of day; try /pause until 18:00`);
    const local = DateTime.fromJSDate(now, { zone });
    let end = local.set({ hour, minute, second: 0, millisecond: 0 });
    if (end <= local) end = end.plus({ days: 1 });
    return ok({ kind: "until", until: end.toUTC().toJSDate() });
  }
  const minutes = durationMinutes(text);
  if (minutes === null) {
    return problem(`I didn't understand "${args}". Try /pause, /pause 2h, /pause 30m or /pause until 18:00.`);
  }
  if (minutes <= 0) return problem("A pause needs some length; try /pause 2h.");
  if (minutes > MAX_PAUSE_DAYS * 1440) {
    return problem(
      `That's longer than ${MAX_PAUSE_DAYS} days; use /pause with no time to pause until /resume.`,
    );
  }
  return ok({ kind: "until", until: new Date(now.getTime() + minutes * 60_000) });
}

const DURATION_PIECE = /(\d+(?:\.\d+)?)\s*(minutes?|mins?|m|hours?|hrs?|h|days?|d)\s*/g;
const WHOLE_DURATION = /^(?:\d+(?:\.\d+)?\s*(?:minutes?|mins?|m|hours?|hrs?|h|days?|d)\s*)+$/;

/** "2h", "90m", "1h30m", "2 days", "45 minutes" → minutes; null when not a duration. */
function durationMinutes(text: string): number | null {
  if (!WHOLE_DURATION.test(text)) return null;
  let total = 0;
  for (const [, amount, unit = ""] of text.matchAll(DURATION_PIECE)) {
    const key = unit.startsWith("mi") || unit === "m" ? "m" : unit.startsWith("h") ? "h" : "d";
    total += Number(amount) * (UNIT_MINUTES[key] ?? 0);
  }
  return Math.round(total);
}

/** `/quiet 22:00-08:00`; `/quiet off` clears the override, back to the configured hours. */
export function parseQuietArgs(args: string): Parsed<QuietHours | null> {
  const text = args.trim();
  if (/^(off|default|reset)$/i.test(text)) return ok(null);
  const quiet = parseQuietHours(text.replace(/\s*[-–—]\s*/, "-"));
  if (!quiet) return problem("Tell me the quiet hours as HH:MM-HH:MM, for example /quiet 22:00-08:00.");
  return ok(quiet);
}

/** `/tz Area/City` (an IANA zone); `/tz off` goes back to the configured zone. */
export function parseTimezoneArgs(args: string): Parsed<string | null> {
  const text = args.trim();
  if (/^(off|default|reset|home)$/i.test(text)) return ok(null);
  if (text === "") return problem("Tell me the zone, for example /tz Europe/Lisbon or /tz America/New_York.");
  if (!text.includes("/") && text.toUpperCase() !== "UTC") {
    return problem(`"${text}" is not a zone name I can use; zones look like Europe/Lisbon or Asia/Tokyo.`);
  }
  const zone = canonicalZone(text);
  if (zone !== null) return ok(zone);
  return problem(`I don't know the zone "${text}"; zones look like Europe/Lisbon or Asia/Tokyo.`);
}

/** A number of the /memory listing (an item or a page) as typed, up to six digits; null when it is not one. */
function listNumber(text: string): number | null {
  return /^\d{1,6}$/.test(text) ? Number(text) : null;
}

/** `/memory` (a new listing) or `/memory 2` (that page of the last listing). */
export function parseMemoryArgs(args: string): Parsed<number> {
  const text = args.trim();
  if (text === "") return ok(1);
  const page = listNumber(text);
  if (page === null || page < 1) {
    return problem(`"${args}" is not a page number; try /memory, or /memory 2 for the second page.`);
  }
  return ok(page);
}

/** What /forget is asked to delete: one item by its /memory number, or everything mentioning a text. */
type ForgetRequest = { kind: "number"; number: number } | { kind: "text"; text: string };

/** Text in straight or curly double quotes, as phones type them: what is inside. */
const QUOTED = /^["“”„]([\s\S]*)["“”]$/;

/**
 * `/forget 3` (number 3 of the last /memory list) or `/forget TEXT` (at least two characters,
 * so one letter cannot erase everything). Text in quotes is always text, without its quotes:
 * `/forget "1234"` forgets the digits, which bare would be a list number.
 */
export function parseForgetArgs(args: string): Parsed<ForgetRequest> {
  const typed = args.trim();
  const number = listNumber(typed);
  if (number !== null) return ok({ kind: "number", number });
  const text = (QUOTED.exec(typed)?.[1] ?? typed).trim();
  if (text.length < 2) {
    return problem(
      'Tell me what to forget: its number in /memory (/forget 3), or words it mentions (/forget my sister\'s wedding; digits in quotes: /forget "1234").',
    );
  }
  return ok({ kind: "text", text });
}

/** `/fix 3 the right words`: the /memory number and the item's new words (one sentence). */
export function parseFixArgs(args: string): Parsed<{ number: number; text: string }> {
  const match = /^(\S+)\s+([\s\S]+)$/.exec(args.trim());
  const number = listNumber(match?.[1] ?? "");
  const text = match?.[2]?.replace(/\s+/g, " ").trim() ?? "";
  if (number === null || text === "") {
    return problem(
      "Tell me the number from /memory and the right words, for example /fix 3 I work days now.",
    );
  }
  if (text.length > ITEM_TEXT_MAX_CHARS) {
    return problem(
      `That's ${text.length} characters; one thing I remember is at most ${ITEM_TEXT_MAX_CHARS}. Say it in a sentence.`,
    );
  }
  return ok({ number, text });
}

/** The word that confirms /wipe. */
export const WIPE_CONFIRMATION = "yes";

/**
 * `/wipe` asks; `/wipe yes` confirms; anything else (`/wipe no`,
 * `/wipe cancel`, a typo) cancels, so only the one deliberate word can delete everything.
 */
export function parseWipeArgs(args: string): "ask" | "confirm" | "cancel" {
  const answer = args.trim().toLowerCase();
  if (answer === "") return "ask";
  return answer === WIPE_CONFIRMATION ? "confirm" : "cancel";
}
