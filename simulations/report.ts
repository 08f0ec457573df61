import { DateTime } from "luxon";
import { formatQuietHours } from "../src/core/checkin-settings.ts";
import { formatDuration } from "../src/core/text.ts";
import { formatDollars, timesPresence } from "./cost.ts";
import { EVENT_KINDS, type SimEvent, type SimEventKind } from "./events.ts";
import type { CallFigures, Metrics, Reask } from "./metrics.ts";
import type { RunResult } from "./result.ts";
import { readIn, ZoneTimeline } from "./zones.ts";

/**
 * report.html: one self-contained page per run (inline CSS and SVG, nothing fetched) that
 * shows the day as a timeline — the person's messages, the replies, check-ins sent and
 * held back (coloured by reason), open loops, the tone, quiet hours shaded — and under
 * each day its events in words, with the figures beside it all. Every timeline event is
 * one SVG element carrying `data-event="<kind>"`, so a browser test can count what was
 * drawn against what happened.
 */

const WIDTH = 1000;
const LEFT = 84;
const RIGHT = 12;
const PLOT = WIDTH - LEFT - RIGHT;
const LANES = { person: 22, companion: 46, held: 70, loops: 94, tone: 114 } as const;
const HEIGHT = 146;

const KIND_LABEL: Record<SimEventKind, string> = {
  person: "person writes",
  reply: "reply",
  "checkin-sent": "check-in sent",
  "checkin-held": "check-in held back",
  "tz-change": "/tz change",
  notice: "notice",
  "open-loop": "open loop",
};

/** Held-back marks are coloured by reason, so a day of "why not" reads without hovering. */
const REASON_COLOR: Record<string, string> = {
  "quiet-hours": "#7b93c4",
  "unanswered-limit": "#6d4fa3",
  "weekend-limit": "#b07cc6",
  "recent-conversation": "#5fa36a",
  "too-soon": "#c2a14b",
  "daily-limit": "#52606d",
  "unlikely-moment": "#2a9d8f",
  "already-answered": "#d1495b",
  "repeated-topic": "#a4243b",
  "model-declined": "#3d7dd8",
};
const OTHER_REASON_COLOR = "#9aa5b1";

function reasonColor(reason: string): string {
  return REASON_COLOR[reason] ?? OTHER_REASON_COLOR;
}

const TONE_COLOR: Record<string, string> = {
  warm: "#e9a23b",
  neutral: "#a3acb9",
  tense: "#d1495b",
  unknown: "#e6e9ee",
};

/** The whole page for one run, as one string with nothing external. */
export function renderReport(result: RunResult): string {
  const { scenario, metrics } = result;
  const days = dayRows(result);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(scenario.name)} — presence simulation</title>
<style>${CSS}</style>
</head>
<body>
<header>
  <h1>${esc(scenario.name)} <span class="badge ${result.passed ? "pass" : "fail"}">${result.passed ? "expectations met" : "expectations not met"}</span></h1>
  <p class="description">${esc(scenario.description)}</p>
  <p class="meta">model <b>${result.model}</b> · zone <b>${esc(scenario.timezone)}</b> · heartbeat <code>${esc(scenario.heartbeatCron)}</code> · quiet hours <b>${formatQuietHours(scenario.quietHours)}</b> · ${esc(span(result))}</p>
</header>
<main>
<section class="timeline" aria-label="timeline">
  ${legend(result)}
  ${days.map((day) => dayBlock(day, result)).join("\n")}
</section>
<aside class="figures" aria-label="figures">
  ${expectationsBlock(result)}
  ${figuresBlock(metrics)}
  ${heldBlock(metrics)}
  ${reasksBlock(result)}
  ${loopsBlock(result)}
  ${costBlock(metrics)}
  ${perDayBlock(metrics)}
  ${tokensBlock(metrics)}
  ${result.judge ? `<h2>Judge</h2><p class="judge"><b>${result.judge.score}/5</b> ${esc(result.judge.verdict)}</p>` : ""}
</aside>
</main>
</body>
</html>
`;
}

interface DayRow {
  date: string;
  /** The zones the person was in that day, in order (two on a travel day). */
  zones: string[];
  events: SimEvent[];
  /** Minutes of the day before the run starts / after it ends, greyed out. */
  outsideBefore: number;
  outsideAfter: number;
}

function dayRows(result: RunResult): DayRow[] {
  const zones = new ZoneTimeline(result.scenario.timezone, result.scenario.timezoneChanges);
  const start = new Date(result.span.start);
  const end = new Date(result.span.end);
  const rows = new Map<string, DayRow>();
  const row = (date: string, zone: string): DayRow => {
    let r = rows.get(date);
    if (!r) {
      r = { date, zones: [], events: [], outsideBefore: 0, outsideAfter: 0 };
      rows.set(date, r);
    }
    if (!r.zones.includes(zone)) r.zones.push(zone);
    return r;
  };
  for (let t = start.getTime(); t <= end.getTime(); t += 3_600_000) {
    const reading = zones.reading(new Date(t));
    row(reading.date, reading.zone);
  }
  const first = zones.reading(start);
  const last = zones.reading(end);
  row(first.date, first.zone).outsideBefore = first.minutesOfDay;
  row(last.date, last.zone).outsideAfter = 24 * 60 - last.minutesOfDay;
  for (const event of result.events) {
    const reading = readIn(new Date(event.at), event.zone);
    row(reading.date, reading.zone).events.push(event);
  }
  return [...rows.values()].sort((a, b) => a.date.localeCompare(b.date));
}

function x(minutesOfDay: number): number {
  return LEFT + (minutesOfDay / (24 * 60)) * PLOT;
}

function dayTitle(day: DayRow): string {
  return DateTime.fromISO(day.date).toFormat("cccc d LLLL yyyy");
}

/** "23-hour day" when the clocks change in the zone the day starts in; the chart still spans 00:00–24:00. */
function dayLength(day: DayRow): string {
  const midnight = DateTime.fromISO(day.date, { zone: day.zones[0] });
  const hours = midnight.plus({ days: 1 }).diff(midnight, "hours").hours;
  return hours === 24 ? "" : ` <span class="clock-change">${hours}-hour day: the clocks changed</span>`;
}

function dayBlock(day: DayRow, result: RunResult): string {
  return `<figure class="day" data-date="${day.date}">
  <figcaption>${esc(dayTitle(day))} <span class="zone">${esc(day.zones.join(" → "))}</span>${dayLength(day)}</figcaption>
  ${daySvg(day, result)}
  ${eventTable(day, result.metrics)}
</figure>`;
}

function daySvg(day: DayRow, result: RunResult): string {
  const quiet = result.scenario.quietHours;
  const shades: string[] = [];
  const shade = (from: number, to: number, cls: string, label: string) => {
    if (to > from) {
      shades.push(
        `<rect class="${cls}" x="${x(from).toFixed(1)}" y="8" width="${(x(to) - x(from)).toFixed(1)}" height="${HEIGHT - 30}"><title>${esc(label)}</title></rect>`,
      );
    }
  };
  const quietLabel = `quiet hours ${formatQuietHours(quiet)}`;
  if (quiet.start < quiet.end) shade(quiet.start, quiet.end, "quiet", quietLabel);
  else if (quiet.start > quiet.end) {
    shade(0, quiet.end, "quiet", quietLabel);
    shade(quiet.start, 24 * 60, "quiet", quietLabel);
  }
  // Hours the run did not live are greyed over everything, quiet hours included.
  shade(0, day.outsideBefore, "outside", "before the run");
  shade(24 * 60 - day.outsideAfter, 24 * 60, "outside", "after the run");

  const grid: string[] = [];
  for (let h = 0; h <= 24; h += 3) {
    const gx = x(h * 60).toFixed(1);
    grid.push(`<line class="grid" x1="${gx}" x2="${gx}" y1="8" y2="${HEIGHT - 22}"/>`);
    grid.push(`<text class="hour" x="${gx}" y="${HEIGHT - 8}">${String(h).padStart(2, "0")}:00</text>`);
  }
  const lanes = [
    `<text class="lane" x="6" y="${LANES.person + 4}">person</text>`,
    `<text class="lane" x="6" y="${LANES.companion + 4}">companion</text>`,
    `<text class="lane" x="6" y="${LANES.held + 4}">held back</text>`,
    `<text class="lane" x="6" y="${LANES.loops + 4}">open loops</text>`,
    `<text class="lane" x="6" y="${LANES.tone + 4}">tone</text>`,
  ];
  const reasked = new Set(result.metrics.reasks.map((r) => r.at));
  const marks = day.events.map((event) => marker(event, reasked.has(event.at))).join("");
  const tones = day.events.map(toneMark).join("");
  return `<svg class="day-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="events on ${day.date}">
${shades.join("")}${grid.join("")}${lanes.join("")}${tones}${marks}
</svg>`;
}

function marker(event: SimEvent, reask: boolean): string {
  const reading = readIn(new Date(event.at), event.zone);
  const cx = x(reading.minutesOfDay).toFixed(1);
  const attrs = `data-event="${event.kind}" data-at="${event.at}"`;
  const tip = `<title>${esc(`${reading.time} ${KIND_LABEL[event.kind]}: ${summary(event)}`)}</title>`;
  switch (event.kind) {
    case "person":
      return `<circle class="ev person" ${attrs} cx="${cx}" cy="${LANES.person}" r="6">${tip}</circle>`;
    case "reply":
      return `<circle class="ev reply" ${attrs} cx="${cx}" cy="${LANES.companion}" r="6">${tip}</circle>`;
    case "notice":
      return `<rect class="ev notice" ${attrs} x="${Number(cx) - 5}" y="${LANES.companion - 5}" width="10" height="10">${tip}</rect>`;
    case "checkin-sent": {
      const y = LANES.companion;
      const c = Number(cx);
      const ring = reask ? `<circle class="reask-ring" cx="${c}" cy="${y}" r="11"/>` : "";
      return `${ring}<path class="ev checkin-sent${event.stripped ? " stripped" : ""}" ${attrs} d="M${c} ${y - 8}L${c + 8} ${y}L${c} ${y + 8}L${c - 8} ${y}Z">${tip}</path>`;
    }
    case "checkin-held": {
      const y = LANES.held;
      const c = Number(cx);
      return `<path class="ev checkin-held ${event.stage}" ${attrs} stroke="${reasonColor(event.reason)}" d="M${c - 5} ${y - 5}L${c + 5} ${y + 5}M${c + 5} ${y - 5}L${c - 5} ${y + 5}">${tip}</path>`;
    }
    case "open-loop": {
      const y = LANES.loops;
      const c = Number(cx);
      const shape =
        event.change === "closed"
          ? `d="M${c - 6} ${y}L${c - 2} ${y + 5}L${c + 6} ${y - 5}"`
          : `d="M${c - 5} ${y - 6}L${c + 6} ${y}L${c - 5} ${y + 6}Z"`;
      return `<path class="ev open-loop ${event.change}" ${attrs} ${shape}>${tip}</path>`;
    }
    case "tz-change":
      return `<line class="ev tz-change" ${attrs} x1="${cx}" x2="${cx}" y1="8" y2="${HEIGHT - 22}">${tip}</line>`;
  }
}

function toneMark(event: SimEvent): string {
  if (event.kind !== "checkin-sent" && event.kind !== "checkin-held") return "";
  const reading = readIn(new Date(event.at), event.zone);
  const left = x(reading.minutesOfDay) - 4;
  return `<rect class="tone" x="${left.toFixed(1)}" y="${LANES.tone - 4}" width="8" height="8" rx="2" fill="${TONE_COLOR[event.tone] ?? TONE_COLOR.unknown}"><title>tone of the last exchange: ${event.tone}</title></rect>`;
}

function summary(event: SimEvent): string {
  switch (event.kind) {
    case "person":
    case "reply":
    case "notice":
      return event.text;
    case "checkin-sent":
      return `${event.topic ? `[${event.topic}] ` : ""}${event.text}${event.stripped ? " (reasoning stripped)" : ""}`;
    case "checkin-held":
      return `${event.reason}${event.topic ? ` [${event.topic}]` : ""}${event.detail ? ` — ${event.detail}` : ""}`;
    case "tz-change":
      return `/tz ${event.to} (from ${event.from})${event.reply ? ` — the bot answered: ${event.reply}` : ""}`;
    case "open-loop":
      return `${LOOP_CHANGE[event.change]}: ${event.text}${event.note ? ` — ${event.note}` : ""}`;
  }
}

const LOOP_CHANGE: Record<Extract<SimEvent, { kind: "open-loop" }>["change"], string> = {
  known: "remembered from before",
  opened: "opened",
  closed: "closed",
};

/** A row of the day's table: one event, or a run of check-ins held back in a row for the same reason. */
type TableRow = { event: SimEvent; until?: SimEvent; count: number };

function tableRows(events: readonly SimEvent[]): TableRow[] {
  const rows: TableRow[] = [];
  for (const event of events) {
    const last = rows[rows.length - 1];
    if (
      last &&
      event.kind === "checkin-held" &&
      last.event.kind === "checkin-held" &&
      last.event.reason === event.reason
    ) {
      last.until = event;
      last.count += 1;
    } else rows.push({ event, count: 1 });
  }
  return rows;
}

function eventTable(day: DayRow, metrics: Metrics): string {
  if (day.events.length === 0) return `<p class="empty">Nothing happened this day.</p>`;
  const reasks = new Map(metrics.reasks.map((r) => [r.at, r]));
  const rows = tableRows(day.events).map(({ event, until, count }) => {
    const reading = readIn(new Date(event.at), event.zone);
    const time = until ? `${reading.time}–${readIn(new Date(until.at), until.zone).time}` : reading.time;
    const tone = event.kind === "checkin-sent" || event.kind === "checkin-held" ? event.tone : "";
    const label = count > 1 ? `${KIND_LABEL[event.kind]} ×${count}` : KIND_LABEL[event.kind];
    const color = event.kind === "checkin-held" ? ` style="background:${reasonColor(event.reason)}"` : "";
    const reask = reasks.get(event.at);
    const note = reask ? reaskNote(reask, metrics.answeredTopicHours, event.zone) : "";
    return `<tr class="row ${event.kind}"><td class="time">${time}</td><td><span class="tag ${event.kind}"${color}>${label}</span></td><td>${esc(summary(event))}${note}</td><td>${tone ? `<span class="tone-tag" style="background:${TONE_COLOR[tone]}">${tone}</span>` : ""}</td></tr>`;
  });
  return `<table class="events">${rows.join("")}</table>`;
}

function reaskNote(reask: Reask, hours: number, zone: string): string {
  const minutes = Math.round((Date.parse(reask.at) - Date.parse(reask.answeredAt)) / 60_000);
  const ago = formatDuration(minutes);
  const answered = readIn(new Date(reask.answeredAt), zone).time;
  const verdict = reask.withinWindow
    ? `inside the ${hours} h window: a failure`
    : `after the ${hours} h window: allowed`;
  return ` <span class="reask ${reask.withinWindow ? "within" : "after"}">re-ask of ${esc(reask.topic)}, answered ${answered} (${ago} before), ${verdict}</span>`;
}

function legend(result: RunResult): string {
  const items = EVENT_KINDS.filter((k) => result.events.some((e) => e.kind === k)).map(
    (k) => `<span class="legend-item"><span class="tag ${k}">${KIND_LABEL[k]}</span></span>`,
  );
  const tones = Object.entries(TONE_COLOR).map(
    ([tone, color]) =>
      `<span class="legend-item"><span class="tone-tag" style="background:${color}">${tone}</span></span>`,
  );
  const reasons = Object.keys(result.metrics.heldByReason).map(
    (reason) =>
      `<span class="legend-item"><span class="cross" style="color:${reasonColor(reason)}">✕</span>${esc(reason)}</span>`,
  );
  const reask =
    result.metrics.reasks.length > 0
      ? `<span class="legend-item"><span class="ring"></span>re-ask of an answered topic</span>`
      : "";
  const stripped =
    result.metrics.leaksStripped > 0
      ? `<span class="legend-item"><span class="diamond"></span>reasoning stripped by the leak guard</span>`
      : "";
  return `<p class="legend">${items.join("")}<span class="legend-item"><span class="swatch quiet"></span>quiet hours</span><span class="legend-item"><span class="swatch outside"></span>outside the run</span>${reask}${stripped} · tone: ${tones.join("")}</p>${
    reasons.length > 0 ? `<p class="legend">held back because: ${reasons.join("")}</p>` : ""
  }`;
}

function expectationsBlock(result: RunResult): string {
  const rows = result.expectations.map(
    (e) =>
      `<tr class="${e.ok ? "ok" : "bad"}"><td>${e.ok ? "✓" : "✗"}</td><td>${esc(e.name)}</td><td>${esc(e.wanted)}</td><td><b>${esc(e.got)}</b></td></tr>`,
  );
  return `<h2>Expectations</h2><table class="expectations"><tr><th></th><th>what</th><th>wanted</th><th>got</th></tr>${rows.join("")}</table>`;
}

function figuresBlock(m: Metrics): string {
  const figures: [string, string | number][] = [
    ["check-ins considered", m.considered],
    ["fired", m.fired],
    ["held back", m.held],
    ["longest unanswered run", m.longestUnansweredRun],
    ["repeated-topic asks while unanswered", m.repeatedTopicAsks],
    [`re-asks of answered topics within ${m.answeredTopicHours} h`, m.reasksOfAnswered],
    [`re-asks later the same day (allowed)`, m.reasksAfterWindow],
    ["check-ins in quiet hours", m.quietHourCheckins],
    ["leaked text delivered", m.leaksDelivered],
    ["leaks stripped by the guard", m.leaksStripped],
  ];
  return `<h2>At a glance</h2><dl class="glance">${figures.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>`;
}

function heldBlock(m: Metrics): string {
  const entries = Object.entries(m.heldByReason).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) return `<h2>Held back</h2><p class="empty">Nothing was held back.</p>`;
  const max = Math.max(...entries.map(([, n]) => n));
  const bars = entries.map(
    ([reason, n]) =>
      `<div class="bar-row"><span class="bar-label">${esc(reason)}</span><span class="bar" style="width:${((n / max) * 100).toFixed(0)}%;background:${reasonColor(reason)}"></span><span class="bar-value">${n}</span></div>`,
  );
  const stages = Object.entries(m.heldByStage)
    .map(([stage, n]) => `${esc(stage)} ${n}`)
    .join(" · ");
  return `<h2>Held back, by reason</h2>${bars.join("")}<p class="note">by step: ${stages}</p>`;
}

function reasksBlock(result: RunResult): string {
  const { reasks, answeredTopicHours } = result.metrics;
  if (reasks.length === 0) return "";
  const zones = new ZoneTimeline(result.scenario.timezone, result.scenario.timezoneChanges);
  const rows = reasks.map((r) => {
    const asked = zones.reading(new Date(r.at));
    const answered = zones.reading(new Date(r.answeredAt));
    return `<tr class="${r.withinWindow ? "bad" : ""}"><td>${esc(r.topic)}</td><td>${answered.time}</td><td>${asked.date === answered.date ? "" : `${asked.date} `}${asked.time}</td><td>${r.withinWindow ? "inside: a failure" : "outside: allowed"}</td></tr>`;
  });
  return `<h2>Re-asks of answered topics</h2><p class="note">The topic guard holds a topic back for ${answeredTopicHours} h after the person answered it; a later ask the same day is allowed and listed here so it can be judged.</p><table class="reasks"><tr><th>topic</th><th>answered</th><th>asked again</th><th>${answeredTopicHours} h window</th></tr>${rows.join("")}</table>`;
}

function loopsBlock(result: RunResult): string {
  const loops = new Map<string, { text: string; from: string; to: string }>();
  const zones = new ZoneTimeline(result.scenario.timezone, result.scenario.timezoneChanges);
  const when = (at: string) => {
    const dt = DateTime.fromJSDate(new Date(at), { zone: zones.zoneAt(new Date(at)) });
    return dt.toFormat("ccc HH:mm");
  };
  for (const event of result.events) {
    if (event.kind !== "open-loop") continue;
    if (event.change === "closed") {
      const loop = loops.get(event.id);
      if (loop) loop.to = `closed ${when(event.at)}${event.note ? `: “${event.note}”` : ""}`;
    } else {
      loops.set(event.id, {
        text: event.text,
        from: event.change === "known" ? "known at the start" : `opened ${when(event.at)}`,
        to: "still open",
      });
    }
  }
  if (loops.size === 0) return "";
  const items = [...loops.values()].map(
    (l) => `<li><b>${esc(l.text)}</b><br><span class="note">${esc(l.from)} → ${esc(l.to)}</span></li>`,
  );
  return `<h2>Open loops</h2><ul class="loops">${items.join("")}</ul>`;
}

/** What the run cost, beside what the two baselines would have cost over the same timeline. */
function costBlock(m: Metrics): string {
  const { cost } = m;
  const days = Math.max(cost.perDay.length, 1);
  const row = (name: string, dollars: number, cls: string) =>
    `<tr class="${cls}"><td>${esc(name)}</td><td>${formatDollars(dollars)}</td><td>${formatDollars(dollars / days)}</td><td>${cls === "presence" ? "" : timesPresence(dollars, cost.dollars)}</td></tr>`;
  const purposes = Object.entries(cost.byPurpose)
    .map(([p, d]) => `${esc(p)} ${formatDollars(d)}`)
    .join(" · ");
  return `<h2>Cost</h2><table class="cost"><tr><th></th><th>run</th><th>a day</th><th title="what the bot would have cost as a multiple of presence's dollars (×2.0: twice as much; under ×1: less)">costs × presence</th></tr>${row("presence", cost.dollars, "presence")}${row("transcript bot", cost.baselines.transcript.dollars, "transcript")}${row("every-tick bot", cost.baselines.everyTick.dollars, "every-tick")}</table><p class="note">${purposes || "no model calls"}</p><p class="note">Modelled: each call's reported usage is priced at ${esc(cost.prices)}. The bots replay the whole log on the same timeline (transcript: a call per message sent; every-tick: plus one per cron tick), with the same cache model. Offline, the naive model's outputs are short, so real replies cost more.</p>`;
}

function perDayBlock(m: Metrics): string {
  const dollars = new Map(m.cost.perDay.map((d) => [d.date, d.dollars]));
  const rows = m.perDay.map(
    (d) =>
      `<tr><td>${d.date}</td><td>${d.personMessages}</td><td>${d.replies}</td><td>${d.checkinsSent}</td><td>${d.checkinsHeld}</td><td>${formatDollars(dollars.get(d.date) ?? 0)}</td></tr>`,
  );
  return `<h2>Messages per day</h2><table class="per-day"><tr><th>day</th><th>person</th><th>replies</th><th>check-ins</th><th>held</th><th>cost</th></tr>${rows.join("")}</table>`;
}

function tokensBlock(m: Metrics): string {
  const { total, byPurpose, calls } = m.tokens;
  const row = (name: string, f: typeof total) =>
    `<tr><td>${esc(name)}</td><td>${f.calls}</td><td>${f.promptAvg}</td><td>${f.promptMax}</td><td>${f.input}</td><td>${f.output}</td><td>${f.cacheRead}</td><td>${f.cacheWrite}</td></tr>`;
  const rows = [...Object.entries(byPurpose).map(([p, f]) => row(p, f)), row("all calls", total)];
  return `<h2>Tokens</h2><table class="tokens"><tr><th>call</th><th>n</th><th title="prompt tokens per call, average">prompt ⌀</th><th title="largest prompt">max</th><th>input</th><th>output</th><th title="cache read">c.read</th><th title="cache write">c.write</th></tr>${rows.join("")}</table>${promptChart(calls)}`;
}

const PURPOSE_COLOR: Record<string, string> = {
  reply: "#3d7dd8",
  "heartbeat-decide": "#9aa5b1",
  "heartbeat-write": "#e9a23b",
  reflect: "#5fa36a",
  judge: "#8e6cc0",
};

function promptChart(calls: CallFigures[]): string {
  if (calls.length === 0) return `<p class="empty">No model calls.</p>`;
  const w = 360;
  const h = 90;
  const max = Math.max(...calls.map((c) => c.prompt), 1);
  const bw = w / calls.length;
  const bars = calls.map((c, i) => {
    const bh = (c.prompt / max) * (h - 10);
    return `<rect x="${(i * bw).toFixed(2)}" y="${(h - bh).toFixed(1)}" width="${Math.max(bw - 0.5, 0.5).toFixed(2)}" height="${bh.toFixed(1)}" fill="${PURPOSE_COLOR[c.purpose] ?? "#777"}"><title>${esc(`${c.purpose}: prompt ${c.prompt} (input ${c.input}, cache read ${c.cacheRead}, cache write ${c.cacheWrite}), output ${c.output}, ${formatDollars(c.dollars)}`)}</title></rect>`;
  });
  const key = Object.entries(PURPOSE_COLOR)
    .filter(([p]) => calls.some((c) => c.purpose === p))
    .map(
      ([p, color]) =>
        `<span class="legend-item"><span class="swatch" style="background:${color}"></span>${p}</span>`,
    )
    .join("");
  return `<p class="note">Prompt size per call, in order (max ${max} tokens)</p><svg class="prompt-chart" viewBox="0 0 ${w} ${h}" role="img" aria-label="prompt size per call">${bars.join("")}</svg><p class="legend">${key}</p>`;
}

function span(result: RunResult): string {
  const zones = new ZoneTimeline(result.scenario.timezone, result.scenario.timezoneChanges);
  const a = zones.reading(new Date(result.span.start));
  const b = zones.reading(new Date(result.span.end));
  return `${a.date} ${a.time} → ${b.date} ${b.time}`;
}

function esc(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

const CSS = `
:root{--ink:#1f2933;--muted:#616e7c;--line:#e4e7eb;--bg:#fbfbfa;--person:#3d7dd8;--reply:#5fa36a;--sent:#e9a23b;--held:#9aa5b1;--tz:#2a9d8f;--notice:#8e6cc0;--loop:#2f855a;--bad:#d1495b;--ok:#2f855a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:var(--bg)}
header{padding:18px 24px 8px;border-bottom:1px solid var(--line);background:#fff}
h1{margin:0 0 4px;font-size:22px}
h2{font-size:14px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:18px 0 6px}
.description{margin:0 0 4px;max-width:80ch}
.meta{margin:0;color:var(--muted)}
.badge{font-size:12px;padding:2px 8px;border-radius:10px;vertical-align:middle;color:#fff}
.badge.pass{background:var(--ok)}.badge.fail{background:var(--bad)}
main{display:grid;grid-template-columns:minmax(0,1fr) 430px;gap:20px;padding:12px 24px 32px}
@media (max-width:1100px){main{grid-template-columns:1fr}}
.day{margin:0 0 14px;background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 10px}
figcaption{font-weight:600}.zone{font-weight:400;color:var(--muted);margin-left:6px}
.day-chart{width:100%;height:auto;display:block}
.quiet{fill:#c9d8f0;opacity:.75}.outside{fill:#eeeeec;opacity:.9}
.grid{stroke:var(--line)}.hour{font-size:11px;fill:var(--muted);text-anchor:middle}
.lane{font-size:11px;fill:var(--muted)}
.ev.person{fill:var(--person)}.ev.reply{fill:var(--reply)}.ev.notice{fill:var(--notice)}
.ev.checkin-sent{fill:var(--sent);stroke:#b57406;stroke-width:1}.ev.checkin-sent.stripped{stroke:var(--bad);stroke-width:2.5}
.ev.checkin-held{stroke-width:2.5;fill:none}
.reask-ring{fill:none;stroke:var(--bad);stroke-width:1.5;stroke-dasharray:3 2}
.ev.open-loop{fill:var(--loop);stroke:var(--loop);stroke-width:2}.ev.open-loop.closed{fill:none;stroke-width:2.5}.ev.open-loop.known{fill:#fff}
.ev.tz-change{stroke:var(--tz);stroke-width:2;stroke-dasharray:4 3}
.events{width:100%;border-collapse:collapse;margin-top:6px;font-size:13px}
.events td{padding:3px 6px;border-top:1px solid var(--line);vertical-align:top}
.events td.time{font-variant-numeric:tabular-nums;color:var(--muted);width:3.5em}
.tag{display:inline-block;font-size:11px;padding:1px 6px;border-radius:4px;color:#fff;white-space:nowrap}
.tag.person{background:var(--person)}.tag.reply{background:var(--reply)}.tag.checkin-sent{background:var(--sent)}
.tag.checkin-held{background:var(--held)}.tag.tz-change{background:var(--tz)}.tag.notice{background:var(--notice)}.tag.open-loop{background:var(--loop)}
.row.checkin-held td{color:var(--muted)}
.reask{display:inline-block;font-size:11.5px;margin-left:4px;padding:0 5px;border-radius:4px;border:1px dashed var(--bad);color:var(--bad)}.reask.after{border-color:var(--muted);color:var(--muted)}
.cross{font-weight:700;font-size:13px}
.diamond{display:inline-block;width:9px;height:9px;margin:0 2px;transform:rotate(45deg);background:var(--sent);border:2px solid var(--bad)}
.clock-change{font-weight:400;font-size:12px;margin-left:8px;padding:1px 6px;border-radius:4px;background:#fdf3e1;color:#8a5a00}
.ring{display:inline-block;width:12px;height:12px;border-radius:50%;border:1.5px dashed var(--bad)}
.loops{margin:0;padding-left:18px}.loops li{margin:0 0 6px}
.reasks tr.bad td{color:var(--bad)}
.tone-tag{display:inline-block;font-size:11px;padding:1px 6px;border-radius:4px;color:#1f2933}
.legend{display:flex;flex-wrap:wrap;gap:6px;align-items:center;color:var(--muted);font-size:12px;margin:0 0 10px}
.legend-item{display:inline-flex;align-items:center;gap:4px}
.swatch{display:inline-block;width:14px;height:10px;border-radius:2px}.swatch.quiet{background:#d6e2f5}.swatch.outside{background:#eeeeec;border:1px solid #d9d9d6}
.figures{background:#fff;border:1px solid var(--line);border-radius:8px;padding:4px 14px 14px;align-self:start;position:sticky;top:12px}
.figures table{width:100%;border-collapse:collapse;font-size:12.5px}
.figures td,.figures th{padding:3px 4px;border-top:1px solid var(--line);text-align:left}
.figures th{color:var(--muted);font-weight:500}
.expectations tr.ok td:first-child{color:var(--ok)}.expectations tr.bad td{color:var(--bad)}
.glance{display:grid;grid-template-columns:1fr auto;gap:2px 12px;margin:0}
.glance dt{color:var(--muted)}.glance dd{margin:0;font-weight:600;text-align:right;font-variant-numeric:tabular-nums}
.bar-row{display:grid;grid-template-columns:140px 1fr 32px;align-items:center;gap:6px;font-size:12.5px;margin:2px 0}
.bar{display:block;height:10px;background:var(--held);border-radius:2px}.bar-value{text-align:right}
.note,.empty{color:var(--muted);font-size:12px;margin:4px 0}
.prompt-chart{width:100%;height:90px;background:#fafafa;border:1px solid var(--line)}
.judge{margin:0}
.tokens td,.tokens th{font-size:11.5px;padding:3px 2px}.tokens td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}
.tokens td:first-child{word-break:break-word}
.cost td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}.cost tr.presence td{font-weight:600}
`;
