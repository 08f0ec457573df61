import { type PriceTable, usageDollars } from "../src/model/prices.ts";
import { estimateTokens } from "../src/model/tokens.ts";
import { type CacheBlock, messageBlockText, messagesStart, PromptCache } from "../testkit/prompt-cache.ts";
import type { SimEvent } from "./events.ts";

/**
 * What the same run would have cost two other ways of building a companion, replayed over
 * the same timeline of the person's messages and priced with the same table and the same
 * cache model (the Messages API fake's, on the run's clock), so that presence's dollars
 * can be read against something:
 *
 * - **transcript**: one `claude-sonnet-5-5` call at each moment presence replied or sent a
 *   check-in, with presence's protocol and persona as the system prompt and the whole log
 *   so far as alternating turns, one cache breakpoint at the end of the previous call's
 *   content (the last message of the log that call saw, its own answer included), as
 *   transcript agents do; its output is presence's message at that moment. When the
 *   history passes 150k tokens, one call that reads it all compacts it to a 10k-token summary.
 * - **everyTick**: the transcript bot, plus one call on every cron tick (quiet hours
 *   included: its quiet rules live in the prompt) with the same system prompt, the whole log
 *   and the HEARTBEAT.md text, answering 20 tokens when it stays silent (at a tick where
 *   presence sent a check-in, that call is the check-in).
 */

/** The model both baselines run on. */
const BASELINE_MODEL = "claude-sonnet-5-5";
/** History length (tokens) past which a transcript bot compacts it. */
export const COMPACT_AT_TOKENS = 150_000;
/** The summary a compaction leaves (tokens). */
const SUMMARY_TOKENS = 10_000;
/** What a silent tick answers (tokens). */
export const SILENT_TICK_TOKENS = 20;

/** What the baselines carry: presence's own protocol + persona, and the persona's HEARTBEAT.md. */
export interface BaselinePrompt {
  system: string;
  heartbeat: string;
}

/** One baseline's bill for the run. */
interface BaselineFigures {
  dollars: number;
  calls: number;
  /** Calls that compacted the history. */
  compactions: number;
}

/** Both baselines' bills. */
export interface Baselines {
  transcript: BaselineFigures;
  everyTick: BaselineFigures;
}

/** The turn a transcript bot gets when it writes first: no new message, a moment to check in. */
const CHECKIN_TURN = "(No new message. A moment where you may write to them first.)";
const COMPACT_TURN =
  "Summarise the conversation so far for your own memory, keeping everything that matters.";
const OPENING_TURN = "(The conversation starts.)";

/** Replays the run's timeline through both baseline bots and prices every call they would make. */
export function baselineCosts(
  events: readonly SimEvent[],
  prompt: BaselinePrompt,
  prices: PriceTable,
): Baselines {
  const transcript = new TranscriptBot(prompt, prices, false);
  const everyTick = new TranscriptBot(prompt, prices, true);
  for (const event of events) {
    const at = new Date(event.at);
    switch (event.kind) {
      case "person":
        for (const bot of [transcript, everyTick]) bot.hear("user", event.text);
        break;
      case "reply":
        for (const bot of [transcript, everyTick]) bot.say(at, event.text, undefined);
        break;
      case "checkin-sent":
        transcript.say(at, event.text, CHECKIN_TURN);
        everyTick.say(at, event.text, prompt.heartbeat);
        break;
      case "checkin-held":
        everyTick.tick(at);
        break;
      case "notice":
      case "tz-change":
      case "open-loop":
        break;
    }
  }
  return { transcript: transcript.figures(), everyTick: everyTick.figures() };
}

interface LogEntry {
  role: "user" | "assistant";
  text: string;
}

/** A log entry with the cache blocks it makes, built once: first in the messages, or later. */
interface Logged extends LogEntry {
  asFirst: CacheBlock;
  asLater: CacheBlock;
}

/** A bot that replays its whole log on every call, with its own prompt cache on the run's clock. */
class TranscriptBot {
  readonly #log: Logged[] = [];
  /** How many log entries the previous call's content ended with (its breakpoint goes after the last). */
  #previousEnd = 0;
  #historyTokens = 0;
  #now = new Date(0);
  readonly #cache = new PromptCache({ now: () => this.#now });
  readonly #system: CacheBlock;
  /** Turns that are not in the log (a check-in moment, HEARTBEAT.md, the compaction request), built once each. */
  readonly #turns = new Map<string, Logged>();
  #micro = 0;
  #calls = 0;
  #compactions = 0;

  constructor(
    readonly prompt: BaselinePrompt,
    readonly prices: PriceTable,
    readonly ticks: boolean,
  ) {
    this.#system = { bytes: prompt.system, tokens: estimateTokens(prompt.system) };
  }

  /** A message joins the log. */
  hear(role: LogEntry["role"], text: string, tokens?: number): void {
    const entry = logged(role, text, tokens);
    this.#log.push(entry);
    this.#historyTokens += entry.asLater.tokens;
  }

  /** A call at `at` that writes presence's message, which then joins the log. */
  say(at: Date, text: string, trigger: string | undefined): void {
    this.#call(at, trigger, estimateTokens(text));
    this.hear("assistant", text);
    this.#previousEnd = this.#log.length;
  }

  /** A cron tick that stays silent. */
  tick(at: Date): void {
    if (!this.ticks) return;
    this.#call(at, this.prompt.heartbeat, SILENT_TICK_TOKENS);
    this.#previousEnd = this.#log.length;
  }

  figures(): BaselineFigures {
    return { dollars: this.#micro / 1_000_000, calls: this.#calls, compactions: this.#compactions };
  }

  #call(at: Date, trigger: string | undefined, output: number): void {
    this.#now = at;
    if (this.#historyTokens > COMPACT_AT_TOKENS) this.#compact();
    this.#bill(this.#blocks(trigger), output);
  }

  /** One call reads the whole history and leaves a summary in its place. */
  #compact(): void {
    this.#bill(this.#blocks(COMPACT_TURN), SUMMARY_TOKENS);
    this.#compactions += 1;
    this.#log.length = 0;
    this.#historyTokens = 0;
    this.hear("user", `[Summary ${this.#compactions} of the conversation so far.]`, SUMMARY_TOKENS);
    this.#previousEnd = this.#log.length;
  }

  #bill(blocks: CacheBlock[], output: number): void {
    const cached = this.#cache.measure(BASELINE_MODEL, blocks);
    const usage = {
      model: BASELINE_MODEL,
      input: cached.input,
      output,
      cacheRead: cached.cacheRead,
      cacheWrite: cached.cacheWrite5m + cached.cacheWrite1h,
      cacheWrite1h: cached.cacheWrite1h,
    };
    this.#micro += usageDollars(usage, this.prices) * 1_000_000;
    this.#calls += 1;
  }

  /**
   * The request as the cache sees it (the Messages API fake's blocks for it): the system
   * prompt, the log as turns with one text block per message and the breakpoint after the
   * previous call's content, then the trigger turn. Log entries keep their block objects
   * from call to call, so the cache hashes only what is new.
   */
  #blocks(trigger: string | undefined): CacheBlock[] {
    const breakpointAt = this.#previousEnd > 0 ? this.#log[this.#previousEnd - 1] : undefined;
    const blocks: CacheBlock[] = [this.#system];
    const add = (entry: Logged) => {
      const block = blocks.length === 1 ? entry.asFirst : entry.asLater;
      blocks.push(entry === breakpointAt ? { ...block, breakpoint: "5m" as const } : block);
    };
    if (this.#log[0]?.role !== "user") add(this.#turn(OPENING_TURN));
    for (const entry of this.#log) add(entry);
    // An empty log is the opening turn alone, which is the user's.
    const lastRole = this.#log.at(-1)?.role ?? "user";
    if (trigger !== undefined || lastRole !== "user") add(this.#turn(trigger ?? CHECKIN_TURN));
    return blocks;
  }

  #turn(text: string): Logged {
    let turn = this.#turns.get(text);
    if (!turn) {
      turn = logged("user", text);
      this.#turns.set(text, turn);
    }
    return turn;
  }
}

/** A message with its cache blocks; `tokens` overrides the estimate (a summary stands for 10k tokens). */
function logged(role: LogEntry["role"], text: string, tokens?: number): Logged {
  const blockText = messageBlockText(role, { type: "text", text });
  const size = tokens ?? estimateTokens(blockText);
  return {
    role,
    text,
    asFirst: { bytes: `${messagesStart(null, false)}${blockText}`, tokens: size },
    asLater: { bytes: blockText, tokens: size },
  };
}
