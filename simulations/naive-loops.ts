/**
 * The naive model's only memory habit, kept dumb on purpose: a sentence of the person's
 * that names a day ahead ("tomorrow", "back Friday", "next week") is a plan, so it becomes an open
 * loop; a later message that says something is done or that they are home closes the
 * open loop it shares the most words with (the first one listed when it shares none).
 * Word matching, not understanding — enough to give an open loop a visible life in a run
 * (opened on Monday, closed on Friday) without making the model clever.
 */

/** A memory operation of the reflection tool, as the naive model fills it. */
export type NaiveMemoryOp =
  | { op: "add"; kind: "open_loop"; text: string; importance: number }
  | { op: "close"; id: string; note: string };

/** "tomorrow", "next week", or a weekday ahead: "back Friday", "by Monday", "the release is Friday". */
const DAY_WORD =
  /\b(?:tomorrow|next week|(?:on|by|until|till|back|before|is|this|next) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b/i;
const DONE_WORD = /\b(?:done|finished|home again|back home|made it back)\b/i;
/** The reflection prompt's lines, as src/mind/reflect.ts writes them. */
const PERSON_LINE = /^\[[^\]]+\] .*? person: (.+)$/;
const OPEN_LOOP_LINE = /^- \[([^\]]+)\] open loop \(importance \d\): (.+)$/;
const LOOP_TEXT_MAX = 300;

/** The memory operations the naive model proposes for a reflection prompt; none when nothing matches. */
export function naiveLoopOps(reflectionPrompt: string): NaiveMemoryOp[] {
  const openLoops = linesOf(reflectionPrompt, "memory").flatMap((line) => {
    const match = OPEN_LOOP_LINE.exec(line);
    return match ? [{ id: match[1] as string, text: match[2] as string }] : [];
  });
  const ops: NaiveMemoryOp[] = [];
  const closed = new Set<string>();
  for (const line of linesOf(reflectionPrompt, "exchange")) {
    const said = PERSON_LINE.exec(line)?.[1];
    if (said === undefined) continue;
    const plan = sentences(said).find((s) => DAY_WORD.test(s));
    if (plan !== undefined) {
      ops.push({ op: "add", kind: "open_loop", text: plan.slice(0, LOOP_TEXT_MAX), importance: 3 });
      continue;
    }
    if (!DONE_WORD.test(said)) continue;
    const candidates = openLoops.filter((loop) => !closed.has(loop.id));
    const loop = mostShared(said, candidates) ?? candidates[0];
    if (loop === undefined) continue;
    closed.add(loop.id);
    ops.push({ op: "close", id: loop.id, note: said.slice(0, 200) });
  }
  return ops;
}

/** The lines inside one `<name>…</name>` section of the prompt. */
function linesOf(prompt: string, name: string): string[] {
  const match = new RegExp(`<${name}>\\n([\\s\\S]*?)\\n</${name}>`).exec(prompt);
  return match ? (match[1] as string).split("\n") : [];
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Words of four letters or more, lower-cased: crude, on purpose. */
function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? []);
}

function mostShared<T extends { text: string }>(said: string, loops: readonly T[]): T | undefined {
  const mine = words(said);
  let best: T | undefined;
  let bestCount = 0;
  for (const loop of loops) {
    const count = [...words(loop.text)].filter((w) => mine.has(w)).length;
    if (count > bestCount) {
      best = loop;
      bestCount = count;
    }
  }
  return best;
}
