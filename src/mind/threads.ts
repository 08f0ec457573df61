import { z } from "zod";
import { isoUtc, type Message, messageTime } from "../core/message.ts";
import { mindRecord } from "../core/mind-record.ts";
import { estimateTokens } from "../model/tokens.ts";

/**
 * Threads of one conversation (habits, a project, a worry…). Only the current thread's
 * messages ride in the prompt; the others stay in the log, out of view, so an old subject
 * stops being dragged back. Moving between threads leaves notes: `scope` explains in the
 * thread being left why it was left, `goto` tells the thread arrived in what was brought.
 *
 * Which thread a message belongs to is kept as time segments, not per message: the
 * conversation is in one thread at a time, so a message belongs to the thread entered by
 * the last switch at or before it. This stays a handful of entries after a year of talk,
 * where a map from message id to thread would grow with every message.
 */

/** The thread every conversation starts in. */
const MAIN_THREAD = "main";

/** A line left in a thread so that whoever comes back to it knows why it was left or what was brought. */
const threadNoteSchema = z.object({
  ts: isoUtc,
  text: z.string(),
  /** left: written by `scope` in the origin; arrived: by `goto` in the destination; note: in place. */
  kind: z.enum(["left", "arrived", "note"]),
});
export type ThreadNote = z.infer<typeof threadNoteSchema>;

/** One subject of the conversation, with its notes (its messages stay in the log). */
const threadSchema = z.object({
  name: z.string().min(1),
  createdAt: isoUtc,
  notes: z.array(threadNoteSchema),
});
type Thread = z.infer<typeof threadSchema>;

/** All threads, which one is current, and when each stretch of conversation began (which thread a message belongs to). */
const threadsSchema = z.object({
  current: z.string().min(1),
  list: z.array(threadSchema).min(1),
  /** Moments the conversation entered a thread, oldest first; before the first, it was in main. */
  switches: z.array(z.object({ at: isoUtc, thread: z.string().min(1) })),
});
export type Threads = z.infer<typeof threadsSchema>;

/** A conversation's threads before anything happened. */
export function initialThreads(now: Date): Threads {
  return {
    current: MAIN_THREAD,
    list: [{ name: MAIN_THREAD, createdAt: now.toISOString(), notes: [] }],
    switches: [],
  };
}

/** The threads' record in mind.json. */
export const threadsRecord = mindRecord({ key: "threads", schema: threadsSchema, initial: initialThreads });

/** The newest message reflection has already been told is leaving the window. */
const flushMarkSchema = z.object({ messageId: z.string(), ts: isoUtc });
export type FlushMark = z.infer<typeof flushMarkSchema>;

/** The flush mark's record in mind.json: absent until a message first leaves the window. */
export const flushedThroughRecord = mindRecord({
  key: "flushedThrough",
  schema: flushMarkSchema.optional(),
  initial: () => undefined,
});

/** Notes kept per thread; older ones have done their work (only the last few are ever shown). */
const THREAD_NOTES_KEPT = 50;
/** Notes of the current thread shown in the prompt. */
const RECENT_NOTES = 5;
/** The part of the window (from its old end) that the next exchange is expected to push out. */
const EVICTION_MARGIN = 0.25;

const THREAD_NAME = /^[A-Za-z0-9][A-Za-z0-9 _-]{0,39}$/;

/** A thread operation as reflection proposes it. */
export const threadOpSchema = z.object({
  op: z
    .enum(["scope", "goto", "note"])
    .describe(
      "scope: start (or move to) thread `name`, note left in the thread you leave; goto: return to existing thread `name`, note placed there; note: note in the current thread",
    ),
  name: z.string().max(40).optional().describe("scope/goto: thread name, letters, digits, space, _ or -"),
  note: z
    .string()
    .min(1)
    .max(200)
    .describe("why you leave (scope), what you bring (goto), or what to remember (note)"),
});
export type ThreadOp = z.infer<typeof threadOpSchema>;

/** The thread a message (by its time) belongs to. */
export function threadAt(threads: Threads, ts: string): string {
  return threadAtMs(threads, Date.parse(ts));
}

function threadAtMs(threads: Threads, at: number): string {
  let thread = MAIN_THREAD;
  for (const s of threads.switches) {
    if (Date.parse(s.at) > at) break;
    thread = s.thread;
  }
  return thread;
}

/** The threads after the operations, or why the whole batch was refused. */
export type ThreadOpsResult =
  | { ok: true; threads: Threads; changes: string[] }
  | { ok: false; reason: string };

/**
 * Applies thread operations in order, all or nothing. `switchAt` is when the exchange that
 * prompted them began: its messages move with the conversation into the new thread.
 */
export function applyThreadOps(
  threads: Threads,
  ops: readonly ThreadOp[],
  ctx: { now: Date; switchAt: Date },
): ThreadOpsResult {
  const next: Threads = {
    current: threads.current,
    list: threads.list.map((t) => ({ ...t, notes: [...t.notes] })),
    switches: [...threads.switches],
  };
  const ts = ctx.now.toISOString();
  const changes: string[] = [];
  const find = (name: string) => next.list.find((t) => t.name.toLowerCase() === name.toLowerCase());
  const addNote = (thread: Thread, text: string, kind: ThreadNote["kind"]) => {
    thread.notes.push({ ts, text, kind });
    if (thread.notes.length > THREAD_NOTES_KEPT)
      thread.notes.splice(0, thread.notes.length - THREAD_NOTES_KEPT);
  };
  const moveTo = (thread: Thread) => {
    const last = next.switches.at(-1)?.at;
    const at =
      last !== undefined && Date.parse(last) > ctx.switchAt.getTime() ? last : ctx.switchAt.toISOString();
    next.switches.push({ at, thread: thread.name });
    next.current = thread.name;
  };

  for (const [index, op] of ops.entries()) {
    const where = `thread op ${index + 1} (${op.op})`;
    const note = op.note.trim();
    const origin = find(next.current);
    if (!origin) return { ok: false, reason: `${where}: the current thread "${next.current}" is missing` };
    if (op.op === "note") {
      addNote(origin, note, "note");
      changes.push(`note in ${origin.name}`);
      continue;
    }
    const name = op.name?.trim() ?? "";
    if (!THREAD_NAME.test(name)) {
      return {
        ok: false,
        reason: `${where}: "${name}" is not a thread name (1-40 letters, digits, space, _ or -)`,
      };
    }
    let destination = find(name);
    if (destination === origin) {
      addNote(origin, note, "note");
      changes.push(`already in ${origin.name}: kept as a note`);
      continue;
    }
    if (op.op === "goto" && !destination) {
      return { ok: false, reason: `${where}: there is no thread "${name}" (scope starts a new one)` };
    }
    if (!destination) {
      destination = { name, createdAt: ts, notes: [] };
      next.list.push(destination);
    }
    if (op.op === "scope") addNote(origin, `[→ ${destination.name}] ${note}`, "left");
    moveTo(destination);
    if (op.op === "goto") addNote(destination, `[← ${origin.name}] ${note}`, "arrived");
    changes.push(`${op.op} ${origin.name} → ${destination.name}`);
  }
  return { ok: true, threads: next, changes };
}

/** The current thread's last notes, oldest first: the episodic lines of the prompt. */
export function recentThreadNotes(threads: Threads, count = RECENT_NOTES): ThreadNote[] {
  const current = threads.list.find((t) => t.name === threads.current);
  return current ? current.notes.slice(-count) : [];
}

/** Tokens a message costs among the working messages: its text plus role and time. */
export function workingMessageTokens(message: Message): number {
  const known = tokensOfMessage.get(message);
  if (known?.text === message.text) return known.tokens;
  const tokens = estimateTokens(message.text) + 6;
  tokensOfMessage.set(message, { text: message.text, tokens });
  return tokens;
}

/** Each message's size, with the text it was taken from: every turn sizes the whole window again. */
const tokensOfMessage = new WeakMap<Message, { text: string; tokens: number }>();

/**
 * The working window: the current thread's most recent messages within the budget (other
 * threads' messages are hidden), and the ones about to leave it that reflection has not
 * been told about — the pre-eviction flush. "About to leave" means already out of the
 * window, or in its oldest quarter, which the next exchange will push out. `log` is
 * oldest first.
 */
export function workingMessages(
  log: readonly Message[],
  mind: { threads: Threads; flushedThrough?: FlushMark | undefined },
  budgetTokens: number,
): { kept: Message[]; evicting: Message[] } {
  const inThread = log.filter((m) => threadAtMs(mind.threads, messageTime(m)) === mind.threads.current);
  // Newest first, put in order at the end: unshifting a month's window one message at a time
  // moved it whole each time.
  const kept: Message[] = [];
  const leaving: Message[] = [];
  let used = 0;
  let windowFull = false;
  for (let i = inThread.length - 1; i >= 0; i--) {
    const message = inThread[i] as Message;
    used += workingMessageTokens(message);
    if (!windowFull && used <= budgetTokens) {
      kept.push(message);
      if (used > budgetTokens * (1 - EVICTION_MARGIN)) leaving.push(message);
    } else {
      windowFull = true;
      leaving.push(message);
    }
  }
  kept.reverse();
  leaving.reverse();
  const flushed = mind.flushedThrough;
  const unflushed = leaving.filter((m) => flushed === undefined || after(m, flushed));
  const evicting: Message[] = [];
  let evictingTokens = 0;
  for (let i = unflushed.length - 1; i >= 0; i--) {
    const message = unflushed[i] as Message;
    evictingTokens += workingMessageTokens(message);
    if (evictingTokens > budgetTokens) break;
    evicting.unshift(message);
  }
  return { kept, evicting };
}

/** The mark after telling reflection about these messages (the newest of them), or the old mark. */
export function flushMarkAfter(
  current: FlushMark | undefined,
  evicting: readonly Message[],
): FlushMark | undefined {
  const newest = evicting.reduce<Message | undefined>(
    (a, m) => (a === undefined || after(m, a) ? m : a),
    undefined,
  );
  if (newest === undefined) return current;
  const mark = { messageId: newest.id, ts: newest.ts };
  return current === undefined || after(mark, current) ? mark : current;
}

type Stamped = { ts: string; id?: string; messageId?: string };

/** Later in the log: by time, then by id (ids sort in creation order). */
function after(a: Stamped, b: Stamped): boolean {
  const ta = messageTime(a);
  const tb = messageTime(b);
  if (ta !== tb) return ta > tb;
  return (a.id ?? a.messageId ?? "") > (b.id ?? b.messageId ?? "");
}
