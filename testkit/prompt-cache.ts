import { createHash } from "node:crypto";
import { estimateTokens } from "../src/model/tokens.ts";
import type { MessagesRequestBody } from "./messages-api.ts";
import { fakeMinCacheableTokens } from "./prices.ts";

/**
 * The Messages API's prompt cache, modelled honestly on a clock the caller gives (the
 * virtual clock in simulations): a prompt is a run of blocks (tools, then system, then
 * messages); a block marked with `cache_control` is a breakpoint. The prefix up to a
 * breakpoint is read from the cache only if the same bytes were written or read less than
 * its TTL ago (5 minutes, or 1 hour for `ttl: "1h"`), and each hit starts the TTL again.
 * Like the real API, a breakpoint also finds an entry written at any of the 20 block
 * boundaries before it (so a transcript's breakpoint at its new end still reads what the
 * previous call wrote), and a prefix shorter than the model's minimum cacheable length
 * (the test kit's own prices.json) is neither written nor read. Whatever lies between the
 * read prefix and the last breakpoint is written, at the TTL of the breakpoint that covers it.
 */

/** How long an entry lives after its last write or read. */
type CacheTtl = "5m" | "1h";

const TTL_MS: Record<CacheTtl, number> = { "5m": 5 * 60_000, "1h": 60 * 60_000 };

/** How many block boundaries before a breakpoint the API checks for an earlier entry. */
const LOOKBACK_BLOCKS = 20;

/** Most breakpoints one request may carry. */
const MAX_BREAKPOINTS = 4;

/** One block of a prompt as the cache sees it: its bytes, its size, and whether it is a breakpoint. */
export interface CacheBlock {
  /** The block's content, exactly: equal bytes make equal prefixes. */
  bytes: string;
  tokens: number;
  breakpoint?: CacheTtl | undefined;
}

/** A prompt's tokens split as the API reports them. */
export interface CacheUsage {
  /** Tokens after the last cached breakpoint (or all of them): billed as plain input. */
  input: number;
  cacheRead: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
}

/** What is wrong with a request's breakpoints, as the real API would refuse them; undefined when fine. */
export function breakpointProblem(blocks: readonly CacheBlock[]): string | undefined {
  const ttls = blocks.flatMap((b) => (b.breakpoint ? [b.breakpoint] : []));
  if (ttls.length > MAX_BREAKPOINTS) {
    return `a maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided, got ${ttls.length}`;
  }
  const firstShort = ttls.indexOf("5m");
  if (firstShort >= 0 && ttls.lastIndexOf("1h") > firstShort) {
    return 'a cache_control with ttl "1h" must not come after one with the default 5 minutes';
  }
  return undefined;
}

interface Entry {
  expiresAt: number;
  ttl: CacheTtl;
}

/** One account's cache: entries by model and prefix bytes, each with the instant it expires. */
export class PromptCache {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: { now(): Date };
  /** The key each block object last ended, after which key: a caller that reuses block objects hashes only new ones. */
  readonly #chain = new WeakMap<CacheBlock, { after: string; key: string }>();
  /** The previous prompt's blocks and keys: a transcript replayed call after call starts with the same block objects. */
  #previous: { model: string; blocks: CacheBlock[]; keys: string[] } | undefined;

  constructor(clock: { now(): Date }) {
    this.#clock = clock;
  }

  /** Looks the prompt up, writes what its breakpoints ask for, and says how its tokens are billed. */
  measure(model: string, blocks: readonly CacheBlock[]): CacheUsage {
    const now = this.#clock.now().getTime();
    const minimum = fakeMinCacheableTokens(model);
    // One pass: the simulations' baselines measure a month's transcript (a thousand blocks) per call.
    const cumulative: number[] = new Array(blocks.length);
    const breakpoints: number[] = [];
    let total = 0;
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i] as CacheBlock;
      total += block.tokens;
      cumulative[i] = total;
      if (block.breakpoint && total >= minimum) breakpoints.push(i);
    }
    if (breakpoints.length === 0) return { input: total, cacheRead: 0, cacheWrite5m: 0, cacheWrite1h: 0 };

    const keys = this.#prefixKeys(model, blocks, (breakpoints.at(-1) as number) + 1);
    let readEnd = -1;
    for (const bp of breakpoints) {
      for (let j = bp; j >= Math.max(0, bp - LOOKBACK_BLOCKS + 1) && j > readEnd; j--) {
        if (this.#alive(keys[j] as string, now)) {
          readEnd = j;
          break;
        }
      }
    }
    if (readEnd >= 0) this.#refresh(keys[readEnd] as string, now);

    const cacheRead = readEnd >= 0 ? (cumulative[readEnd] as number) : 0;
    let cacheWrite5m = 0;
    let cacheWrite1h = 0;
    let written = cacheRead;
    for (const bp of breakpoints) {
      if (bp <= readEnd) continue;
      const ttl = blocks[bp]?.breakpoint as CacheTtl;
      const upTo = cumulative[bp] as number;
      if (ttl === "1h") cacheWrite1h += upTo - written;
      else cacheWrite5m += upTo - written;
      written = upTo;
      this.#entries.set(keys[bp] as string, { expiresAt: now + TTL_MS[ttl], ttl });
    }
    this.#sweep(now);
    return { input: total - written, cacheRead, cacheWrite5m, cacheWrite1h };
  }

  #alive(key: string, now: number): boolean {
    const entry = this.#entries.get(key);
    return entry !== undefined && now < entry.expiresAt;
  }

  #refresh(key: string, now: number): void {
    const entry = this.#entries.get(key);
    if (entry) entry.expiresAt = now + TTL_MS[entry.ttl];
  }

  /**
   * The identity of every prefix up to `count` blocks: a chain of hashes over the model and
   * each block's bytes (equal bytes, equal keys). A block object seen before after the same
   * key is not hashed again, so a transcript replayed call after call costs only its new blocks;
   * and the run of block objects the previous prompt began with keeps its keys without even
   * a lookup each (a month's baselines looked up a thousand blocks per call).
   */
  #prefixKeys(model: string, blocks: readonly CacheBlock[], count: number): readonly string[] {
    if (this.#previous?.model !== model) this.#previous = { model, blocks: [], keys: [] };
    // The previous prompt's lists become this one's: kept up to where the blocks differ, then extended.
    const { blocks: seen, keys } = this.#previous;
    let same = 0;
    while (same < count && same < keys.length && blocks[same] === seen[same]) same++;
    seen.length = same;
    keys.length = same;
    let key = keys.at(-1) ?? createHash("sha256").update(model).digest("hex");
    for (let i = same; i < count; i++) {
      const block = blocks[i] as CacheBlock;
      seen.push(block);
      const known = this.#chain.get(block);
      if (known?.after === key) key = known.key;
      else {
        const after = key;
        key = createHash("sha256")
          .update(`${after}\u0000${block.bytes.length}\u0000`)
          .update(block.bytes)
          .digest("hex");
        this.#chain.set(block, { after, key });
      }
      keys.push(key);
    }
    return keys;
  }

  /** Forgets expired entries once the map grows, so a long simulation's cache stays small. */
  #sweep(now: number): void {
    if (this.#entries.size < 1_000) return;
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}

/** The TTL a `cache_control` asks for; undefined when the block is not a breakpoint. */
function ttlOf(cacheControl: unknown): CacheTtl | undefined {
  if (!cacheControl) return undefined;
  return (cacheControl as { ttl?: unknown }).ttl === "1h" ? "1h" : "5m";
}

/**
 * A request's prompt as the cache sees it: tools, then system, then messages, in order,
 * each block sized by `tokensOf` (the project's estimator unless a caller memoises it).
 * The messages' part starts with the request's tool_choice and whether it carries images,
 * because changing either makes the API treat the message blocks as new.
 */
export function cacheBlocks(
  body: MessagesRequestBody,
  tokensOf: (text: string) => number = estimateTokens,
): CacheBlock[] {
  const blocks: CacheBlock[] = [];
  const add = (text: string, cacheControl: unknown, bytes = text) =>
    blocks.push({ bytes, tokens: tokensOf(text), breakpoint: ttlOf(cacheControl) });
  for (const tool of body.tools ?? [])
    add(JSON.stringify({ ...tool, cache_control: undefined }), tool.cache_control);
  if (typeof body.system === "string") add(body.system, undefined);
  for (const block of Array.isArray(body.system) ? body.system : []) add(block.text, block.cache_control);
  const contents = body.messages.map((m) => ({
    role: m.role,
    blocks: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content,
  }));
  const images = contents.some((m) => m.blocks.some((b) => b.type === "image"));
  let start = messagesStart(body.tool_choice, images);
  for (const message of contents) {
    for (const block of message.blocks) {
      const { cache_control, ...rest } = block;
      const text = messageBlockText(message.role, rest);
      add(text, cache_control, `${start}${text}`);
      start = "";
    }
  }
  return blocks;
}

/** A message block as the cache reads it (without its cache_control), and as it is sized. */
export function messageBlockText(role: string, block: Record<string, unknown>): string {
  return `${role}:${JSON.stringify(block)}`;
}

/**
 * What the first message block's bytes begin with: the request's tool_choice and whether
 * it carries images, since changing either makes the API treat every message block as new.
 */
export function messagesStart(toolChoice: unknown, images: boolean): string {
  return `tool_choice=${JSON.stringify(toolChoice ?? null)};images=${images}\u0000`;
}
