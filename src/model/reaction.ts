import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import { toolInputSchema } from "./tool-schema.ts";

/**
 * A reaction instead of a message: when the person's message needs no answer ("ok thanks",
 * "👍", "night!"), the model may put one emoji on it rather than write. The choice is the
 * model's, made with the react tool in the reply call; the tool is part of the cached prefix
 * of every call, like the other tools, so offering it costs nothing per turn.
 */

/** The emoji Telegram accepts as a message reaction (Bot API ReactionTypeEmoji), in its order. */
// biome-ignore format: the list as Telegram writes it, not one emoji a line
export const REACTION_EMOJI = [
  "👍", "👎", "❤", "🔥", "🥰", "👏", "😁", "🤔", "🤯", "😱", "🤬", "😢", "🎉", "🤩", "🤮", "💩", "🙏", "👌", "🕊",
  "🤡", "🥱", "🥴", "😍", "🐳", "❤‍🔥", "🌚", "🌭", "💯", "🤣", "⚡", "🍌", "🏆", "💔", "🤨", "😐", "🍓", "🍾", "💋",
  "🖕", "😈", "😴", "😭", "🤓", "👻", "👨‍💻", "👀", "🎃", "🙈", "😇", "😨", "🤝", "✍", "🤗", "🫡", "🎅", "🎄", "☃",
  "💅", "🤪", "🗿", "🆒", "💘", "🙉", "🦄", "😘", "💊", "🙊", "😎", "👾", "🤷‍♂", "🤷", "🤷‍♀", "😡",
] as const;

/** One emoji Telegram accepts as a reaction. */
export const reactionEmojiSchema = z.enum(REACTION_EMOJI);
export type ReactionEmoji = z.infer<typeof reactionEmojiSchema>;

/** What the react tool takes: the one emoji. */
export const reactInputSchema = z.object({
  emoji: reactionEmojiSchema.describe("the one emoji to put on their newest message"),
});

/** The react tool of the reply call. */
export const REACT_TOOL: Anthropic.Tool = {
  name: "react",
  description:
    'Only when replying, and only when their message needs no answer ("ok thanks", "👍", "night!"): put one emoji on their newest message instead of writing. Write nothing else in that answer; if you also write text, the text is sent and the reaction is not.',
  input_schema: toolInputSchema(reactInputSchema),
};

/**
 * The emoji of a react call, or null when it is not one Telegram accepts. The variation
 * selector (U+FE0F) models often add ("❤️") is dropped first: Telegram's list is written without it.
 */
export function parseReaction(input: unknown): ReactionEmoji | null {
  const raw = (input as { emoji?: unknown } | null)?.emoji;
  const emoji = typeof raw === "string" ? raw.replaceAll("\uFE0F", "").trim() : raw;
  const parsed = reactInputSchema.safeParse({ emoji });
  return parsed.success ? parsed.data.emoji : null;
}
