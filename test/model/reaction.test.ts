import type { ReactionTypeEmoji } from "grammy/types";
import { describe, expect, it } from "vitest";
import { parseReaction, REACT_TOOL, REACTION_EMOJI, reactInputSchema } from "../../src/model/reaction.ts";
import { toolInputSchema } from "../../src/model/tool-schema.ts";

describe("the react tool", () => {
  it("offers only emoji Telegram accepts as a reaction (checked against grammY's Bot API types)", () => {
    const accepted: readonly ReactionTypeEmoji["emoji"][] = REACTION_EMOJI;
    expect(accepted.length).toBeGreaterThanOrEqual(6);
    expect(new Set(REACTION_EMOJI).size).toBe(REACTION_EMOJI.length);
    expect(REACTION_EMOJI.some((e) => e.includes("\uFE0F"))).toBe(false);
  });

  it("tells the model the same list the code accepts", () => {
    expect(REACT_TOOL.input_schema).toEqual(toolInputSchema(reactInputSchema));
    expect(REACT_TOOL.input_schema.properties).toMatchObject({ emoji: { enum: [...REACTION_EMOJI] } });
  });

  it("takes an offered emoji, also with the variation selector models add, and refuses the rest", () => {
    expect(parseReaction({ emoji: "👍" })).toBe("👍");
    expect(parseReaction({ emoji: "❤️" })).toBe("❤");
    expect(parseReaction({ emoji: " 🙏 " })).toBe("🙏");
    expect(parseReaction({ emoji: "🖕" })).toBeNull();
    expect(parseReaction({ emoji: "👍👍" })).toBeNull();
    expect(parseReaction({})).toBeNull();
    expect(parseReaction(null)).toBeNull();
  });
});
