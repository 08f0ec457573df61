import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";

/**
 * A tool's `input_schema`, derived from the zod schema that parses the tool's input, so what
 * the model is told it may send and what the code accepts can never drift apart. Read as
 * input (`io: "input"`): fields with defaults stay optional, and unknown keys are not
 * forbidden (the parser strips them). The `$schema` key is left out: the API does not need
 * it, and it would cost prompt tokens on every call.
 */
export function toolInputSchema(schema: z.ZodObject): Anthropic.Tool.InputSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "input" }) as Record<string, unknown>;
  return { ...json, type: "object" };
}
