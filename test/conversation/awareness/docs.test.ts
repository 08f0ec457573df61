import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildAwarenessContext } from "../../../src/conversation/awareness/build.ts";
import {
  awarenessContextSchema,
  defaultAwarenessSettings,
} from "../../../src/conversation/awareness/context.ts";
import { formatAwarenessForPrompt } from "../../../src/conversation/awareness/format.ts";
import { loadSituationLog } from "./lenient.ts";

/** The fenced blocks of docs/awareness.md of one language, in order. */
function fencedBlocks(language: string): string[] {
  const doc = readFileSync(fileURLToPath(new URL("../../../docs/awareness.md", import.meta.url)), "utf8");
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm");
  return [...doc.matchAll(fence)].map((match) => match[1] ?? "");
}

function contextAt(file: string, now: string, timezone: string, trigger: "heartbeat" | "reply") {
  return buildAwarenessContext(loadSituationLog(file), new Date(now), {
    ...defaultAwarenessSettings,
    timezone,
    trigger,
  });
}

describe("docs/awareness.md", () => {
  const hydration = contextAt(
    "hydration-pings.log.json",
    "2026-02-07T13:22:00Z",
    "Europe/Madrid",
    "heartbeat",
  );
  const terse = contextAt("warm-turning-terse.log.json", "2026-02-11T13:00:00Z", "Europe/London", "reply");

  it("shows the context the engine really builds for its example", () => {
    const [example] = fencedBlocks("json");
    const documented = awarenessContextSchema.parse(JSON.parse(example ?? ""));
    expect(documented).toEqual(hydration);
  });

  it("shows the blocks the engine really renders", () => {
    const [full, slim] = fencedBlocks("text");
    expect(formatAwarenessForPrompt(hydration, "heartbeat")).toBe(full);
    expect(formatAwarenessForPrompt(terse, "reply")).toBe(slim);
  });
});
