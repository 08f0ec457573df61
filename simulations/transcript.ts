import { localTime } from "../src/core/zones.ts";
import type { SimEvent } from "./events.ts";
import type { RunResult } from "./result.ts";
import { clockTime } from "./zones.ts";

/**
 * The run as a plain conversation to read top to bottom (transcript.md): what the person
 * wrote, what the companion said, every check-in it held back with the reason, re-asks of
 * answered topics and the life of open loops, under a heading per local day.
 */
export function renderTranscript(result: RunResult): string {
  const { scenario } = result;
  const lines = [
    `# ${scenario.name}`,
    "",
    scenario.description,
    "",
    `Model: ${result.model} · zone ${scenario.timezone} · heartbeat \`${scenario.heartbeatCron}\` · ${result.passed ? "expectations met" : "EXPECTATIONS NOT MET"}`,
  ];
  const reasks = new Map(result.metrics.reasks.map((r) => [r.at, r]));
  let day = "";
  for (const event of result.events) {
    const local = localTime(Date.parse(event.at), event.zone);
    // A heading per local day and zone, worded only when it changes.
    const dayAndZone = `${local.year}-${local.month}-${local.day} ${event.zone}`;
    if (dayAndZone !== day) {
      day = dayAndZone;
      lines.push("", `## ${local.toFormat("cccc d LLLL yyyy")} (${event.zone})`, "");
    }
    const reask = reasks.get(event.at);
    const note = reask
      ? ` — _re-ask: ${reask.topic} was answered at ${clockTime(localTime(Date.parse(reask.answeredAt), event.zone))}, ${reask.withinWindow ? "inside" : "outside"} the ${result.metrics.answeredTopicHours} h window_`
      : "";
    lines.push(`- ${clockTime(local)} ${describe(event)}${event.kind === "checkin-sent" ? note : ""}`);
  }
  lines.push("", "## Expectations", "");
  for (const e of result.expectations) {
    lines.push(`- ${e.ok ? "✓" : "✗"} ${e.name}: wanted ${e.wanted}, got ${e.got}`);
  }
  if (result.judge) lines.push("", `Judge: ${result.judge.score}/5 — ${result.judge.verdict}`);
  return `${lines.join("\n")}\n`;
}

function quote(text: string): string {
  return text.replace(/\s*\n\s*/g, " / ");
}

function describe(event: SimEvent): string {
  switch (event.kind) {
    case "person":
      return `**Person**${event.cause === "script" ? "" : ` (${event.cause})`}: ${quote(event.text)}`;
    case "reply":
      return `**Companion**: ${quote(event.text)}`;
    case "checkin-sent":
      return `**Companion** (check-in${event.topic ? `, ${event.topic}` : ""}${event.stripped ? ", reasoning stripped" : ""}): ${quote(event.text)}`;
    case "checkin-held":
      return `_held back_ (${event.stage}: ${event.reason}${event.topic ? `, topic ${event.topic}` : ""})${event.detail ? ` — ${event.detail}` : ""}`;
    case "tz-change":
      return `**Person**: /tz ${event.to} (from ${event.from})${event.reply ? ` → **Companion**: ${quote(event.reply)}` : ""}`;
    case "open-loop":
      return `_open loop ${event.change === "known" ? "remembered from before" : event.change}: ${quote(event.text)}${event.note ? ` (${quote(event.note)})` : ""}_`;
    case "notice":
      return `**Companion** (notice): ${quote(event.text)}`;
  }
}
