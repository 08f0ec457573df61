import { isDeepStrictEqual } from "node:util";
import type { Clock } from "../core/clock.ts";
import type { Message } from "../core/message.ts";
import { sameWords } from "../core/text.ts";
import {
  type ForgetResult,
  type ForgottenCopies,
  fixItem,
  forget,
  forgetCopies,
  forgetItem,
} from "../mind/forget.ts";
import { listed, listingIds, lookupListed, type NotListed, type ReviewGroup } from "../mind/review.ts";
import type { MessageLog } from "../store/messages.ts";
import type { NotesStore } from "../store/notes.ts";
import type { Trace } from "../store/trace.ts";
import type { MindStore } from "./mind-document.ts";

export type { ForgottenCopies } from "../mind/forget.ts";
export type { NotListed, ReviewGroup } from "../mind/review.ts";
/** The longest words /fix takes for one item: the channels refuse longer ones before asking. */
export { ITEM_TEXT_MAX_CHARS } from "../mind/understanding.ts";

/**
 * The person's side of memory, as the slash commands use it: the numbered listing (/memory),
 * deleting (/forget N, /forget TEXT) and correcting (/fix N) what it shows. The companion runs
 * the deleting and correcting with nothing else writing (Companion.exclusive).
 */

/** Where an item came from, as /memory shows it. */
type ItemSource =
  /** The first message it was learned from (the person's, when one of them is). */
  | { kind: "message"; text: string; byPerson: boolean }
  /** Learned before items kept their sources. */
  | { kind: "unknown" }
  /** Its messages are no longer in the log. */
  | { kind: "gone" };

/** One line of /memory. */
export interface MemoryEntry {
  number: number;
  group: ReviewGroup;
  text: string;
  learnedAt: string | null;
  corrected: boolean;
  source: ItemSource;
}

/** How /forget N or /fix N went: done, or why the number names nothing now. */
export type ListedChange<T> = ({ status: "done" } & T) | NotListed;

/** What the review needs from the companion's stores. */
export interface MemoryReviewDeps {
  log: Pick<MessageLog, "getMany">;
  mind: MindStore;
  notes: NotesStore;
  trace: Trace;
  /** When a correction is made (/fix). */
  clock: Clock;
  /** Runs work with nothing else writing (Companion.exclusive; a test without turns passes `(work) => work()`). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

/** The memory commands as the channels call them (Companion.memory). */
export type MemoryCommands = Pick<MemoryReview, "listMemory" | "forgetListed" | "forgetText" | "fixListed">;

/**
 * The memory commands' effects over the stores. Deleting and correcting run through
 * `exclusive` (the companion's turn lock), so no turn or reflection in flight writes back what
 * they change.
 */
export class MemoryReview {
  readonly #deps: MemoryReviewDeps;

  constructor(deps: MemoryReviewDeps) {
    this.#deps = deps;
  }

  /**
   * The listing the person asked for: fresh (/memory) or continued (/memory 2, same numbers),
   * saved in mind.json before it is shown so later numbers mean what the person saw.
   */
  async listMemory(options: { fresh: boolean }): Promise<MemoryEntry[]> {
    const { mind, log } = this.#deps;
    const state = mind.read();
    const ids = listingIds(state, options.fresh);
    if (!isDeepStrictEqual(ids, state.memoryListing?.ids)) {
      await mind.update((draft) => {
        draft.memoryListing = { ids };
      });
    }
    const shown = listed(state, ids);
    const sources = await log.getMany(shown.flatMap(({ item }) => item.sourceMessageIds));
    return shown.map(({ number, item }) => ({
      number,
      group: item.group,
      text: item.text,
      learnedAt: item.learnedAt,
      corrected: item.correctedAt !== null,
      source: sourceOf(sources, item.sourceMessageIds),
    }));
  }

  /**
   * Deletes the item numbered `number` in the last listing with its earlier versions
   * (mind/forget.ts forgetItem), and every copy of their words beside the mind. `earlierVersions`
   * counts the versions; their words are not repeated back.
   */
  forgetListed(
    number: number,
  ): Promise<ListedChange<{ text: string; earlierVersions: number; copies: ForgottenCopies }>> {
    return this.#deps.exclusive(async () => {
      const found = lookupListed(this.#deps.mind.read(), number);
      if (found.status !== "found") return found;
      const removed = await forgetItem(this.#deps.mind, found.item.id);
      if (!removed) return { status: "gone" };
      return {
        status: "done",
        text: removed.text,
        earlierVersions: removed.earlier.length,
        copies: await copiesOf(this.#deps, [removed.text, ...removed.earlier]),
      };
    });
  }

  /** Deletes everything that mentions `text` in the mind and beside it (/forget TEXT). */
  forgetText(text: string): Promise<{ removed: ForgetResult; copies: ForgottenCopies }> {
    return this.#deps.exclusive(async () => ({
      removed: await forget(this.#deps.mind, text),
      copies: await copiesOf(this.#deps, [text]),
    }));
  }

  /**
   * Replaces the words of the item numbered `number` in the last listing with the person's own,
   * and deletes the copies of the old words beside the mind, as /forget does: the person said
   * they were wrong, so no trace record, note or kept file goes on holding them.
   */
  fixListed(
    number: number,
    text: string,
  ): Promise<ListedChange<{ before: string; after: string; copies: ForgottenCopies }>> {
    return this.#deps.exclusive(async () => {
      const found = lookupListed(this.#deps.mind.read(), number);
      if (found.status !== "found") return found;
      const fixed = await fixItem(this.#deps.mind, found.item.id, text, this.#deps.clock.now());
      if (!fixed) return { status: "gone" };
      // Only punctuation or case changed: the old words are the ones kept, nothing to delete.
      const copies =
        sameWords(fixed.before) === sameWords(text) ? NO_COPIES : await copiesOf(this.#deps, [fixed.before]);
      return { status: "done", before: fixed.before, after: text, copies };
    });
  }
}

const NO_COPIES: ForgottenCopies = { traceRecords: 0, notes: 0, otherFiles: 0 };

function copiesOf(deps: MemoryReviewDeps, texts: readonly string[]): Promise<ForgottenCopies> {
  return forgetCopies(texts, { trace: deps.trace, notes: deps.notes, dataDir: deps.mind.dataDir });
}

/** The first message an item was learned from, the person's when one of them is. */
function sourceOf(messages: ReadonlyMap<string, Message>, ids: readonly string[]): ItemSource {
  if (ids.length === 0) return { kind: "unknown" };
  const found = ids.flatMap((id) => messages.get(id) ?? []);
  const chosen = found.find((m) => m.role === "user") ?? found[0];
  if (!chosen) return { kind: "gone" };
  return { kind: "message", text: chosen.text, byPerson: chosen.role === "user" };
}
