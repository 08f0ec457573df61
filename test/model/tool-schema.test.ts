import { describe, expect, it } from "vitest";
import { z } from "zod";
import { REFLECT_TOOL, reflectionUpdateSchema } from "../../src/mind/reflect.ts";
import {
  checkinDecisionSchema,
  checkinMessageSchema,
  DECIDE_CHECKIN_TOOL,
  WRITE_MESSAGE_TOOL,
} from "../../src/model/prompts.ts";
import { toolInputSchema } from "../../src/model/tool-schema.ts";

describe("toolInputSchema", () => {
  it("says what the parser accepts: descriptions kept, defaults optional, no $schema", () => {
    const schema = toolInputSchema(
      z.object({
        key: z.string().describe("the key"),
        count: z.number().int().min(1).max(5),
        tone: z.enum(["warm", "tense"]).default("warm"),
        note: z.string().optional(),
      }),
    );
    expect(schema).toEqual({
      type: "object",
      properties: {
        key: { type: "string", description: "the key" },
        count: { type: "integer", minimum: 1, maximum: 5 },
        tone: { type: "string", enum: ["warm", "tense"], default: "warm" },
        note: { type: "string" },
      },
      required: ["key", "count"],
    });
  });
});

describe("the model's tools", () => {
  it.each([
    { name: DECIDE_CHECKIN_TOOL.name, tool: DECIDE_CHECKIN_TOOL, schema: checkinDecisionSchema },
    { name: WRITE_MESSAGE_TOOL.name, tool: WRITE_MESSAGE_TOOL, schema: checkinMessageSchema },
    { name: REFLECT_TOOL.name, tool: REFLECT_TOOL, schema: reflectionUpdateSchema },
  ])("$name is described by the schema its input is parsed with", ({ tool, schema }) => {
    expect(tool.input_schema).toEqual(toolInputSchema(schema));
    expect(JSON.stringify(tool.input_schema)).not.toContain("$schema");
  });
});
