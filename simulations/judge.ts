import type Anthropic from "@anthropic-ai/sdk";
import { z } from "zod";
import type { ModelClient } from "../src/model/llm.ts";
import { toolInputSchema } from "../src/model/tool-schema.ts";
import type { JudgeGrade, RunResult } from "./result.ts";
import { renderTranscript } from "./transcript.ts";

/**
 * The one thing the figures cannot say: was the companion contextually appropriate? One
 * extra call shows a reviewer model the whole transcript (held-back check-ins included)
 * and makes it grade through a forced tool, so the answer is a number and a sentence.
 */

const JUDGE_SYSTEM = `You review transcripts of a companion app that talks with one person and sometimes checks in on its own. Judge the companion only: did it read the situation (silence, time of day, weekends, what was already answered, changes of topic and tone), back off when it should, and never nag or repeat itself? Held-back check-ins are decisions not to write; they are never seen by the person.`;

const gradeSchema = z.object({
  score: z
    .number()
    .int()
    .min(1)
    .max(5)
    .describe("1 = tone-deaf or pushy, 3 = acceptable, 5 = what a perceptive, caring friend would do"),
  verdict: z.string().min(1).describe("two or three sentences: what was right, what was off"),
});

const GRADE_TOOL: Anthropic.Tool = {
  name: "grade_run",
  description: "Grade how contextually appropriate the companion was over the whole transcript.",
  input_schema: toolInputSchema(gradeSchema),
};

/** Grades one run with one call to the reflection (cheaper) model. */
export async function judgeRun(result: RunResult, llm: ModelClient): Promise<JudgeGrade> {
  const { message } = await llm.create(
    {
      model: llm.modelFor("judge"),
      max_tokens: 400,
      system: JUDGE_SYSTEM,
      tools: [GRADE_TOOL],
      tool_choice: { type: "tool", name: GRADE_TOOL.name },
      messages: [{ role: "user", content: renderTranscript(result) }],
    },
    "judge",
  );
  const use = message.content.find((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
  const grade = gradeSchema.safeParse(use?.input);
  // No caller tells this failure from another: the batch stops and the command prints the message.
  if (!grade.success) throw new Error(`the judge did not return a grade (${result.scenario.name})`);
  return grade.data;
}
