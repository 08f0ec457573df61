import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { toolInputSchema } from "./tool-schema.ts";

/**
 * A reaction instead of a message: when the person's message needs no answer ("ok thanks",
 * "👍", "night!"), the model may put one emoji on it rather than write. The choice is the
 * model's, made with the react tool in the reply call. Like every tool it is in the cached
 * prefix of every call (replies and check-ins offer the same tools), so the prefix stays
 * byte-identical; that costs its tokens on each call, which is why the list is short.
 */

/**
 * The reactions offered: six everyday ones out of the emoji Telegram accepts as a reaction
 * (Bot API ReactionTypeEmoji lists 73, written without the U+FE0F variation selector). The
 * tool is in the prefix of every call, so each emoji offered costs tokens on every call: with
 * this list the tool adds 88 prompt tokens by the project's estimate (model/tokens.ts).
 */
export const REACTION_EMOJI = ["👍", "❤", "😁", "🙏", "🎉", "😢"] as const;

/** One of the reactions offered. */
const reactionEmojiSchema = z.enum(REACTION_EMOJI);
export type ReactionEmoji = z.infer<typeof reactionEmojiSchema>;

/** What the react tool takes: the one emoji. */
export const reactInputSchema = z.object({
  emoji: reactionEmojiSchema,
});

/** The react tool of the reply call. */
export const REACT_TOOL: Anthropic.Tool = {
  name: "react",
  description:
    'React with one emoji instead of writing when their one waiting message needs no answer ("ok thanks"). Shown as [you reacted 👍].',
  input_schema: toolInputSchema(reactInputSchema),
};

/**
 * The emoji of a react call, or null when it is not one of the reactions offered. The
 * variation selector (U+FE0F) models often add ("❤️") is dropped first: Telegram's list is
 * written without it.
 */
export function parseReaction(input: unknown): ReactionEmoji | null {
  const raw = (input as { emoji?: unknown } | null)?.emoji;
  const emoji = typeof raw === "string" ? raw.replaceAll("\uFE0F", "").trim() : raw;
  const parsed = reactInputSchema.safeParse({ emoji });
  return parsed.success ? parsed.data.emoji : null;
}
