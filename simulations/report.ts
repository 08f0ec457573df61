import { DateTime } from "luxon";
import { formatQuietHours } from "../src/config.ts";
import { EVENT_KINDS, type SimEvent, type SimEventKind } from "./events.ts";
import type { CallFigures, Metrics } from "./metrics.ts";
import type { RunResult } from "./result.ts";
import { readIn, ZoneTimeline } from "./zones.ts";

/**
 * report.html: one self-contained page per run (inline CSS and SVG, nothing fetched) that
 * shows the day as a timeline — the person's messages, the replies, check-ins sent and
 * held back with their reasons, the tone, quiet hours shaded — with the figures beside
 * it. Every timeline event is one SVG element carrying `data-event="<kind>"`, so a
 * browser test can count what was drawn against what happened.
 */

const WIDTH = 1000;
const LEFT = 84;
const RIGHT = 12;
const PLOT = WIDTH - LEFT - RIGHT;
const LANES = { person: 24, companion: 52, held: 80, tone: 98 } as const;
const HEIGHT = 128;

const KIND_LABEL: Record<SimEventKind, string> = {
  person: "person writes",
  reply: "reply",
  "checkin-sent": "check-in sent",
  "checkin-held": "check-in held back",
  "tz-change": "/tz change",
  notice: "notice",
};

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
  ${legend()}
  ${days.map((day) => dayBlock(day, result)).join("\n")}
  <h2>Events</h2>
  ${days.map((day) => eventTable(day, days.length <= 2)).join("\n")}
</section>
<aside class="figures" aria-label="figures">
  ${expectationsBlock(result)}
  ${figuresBlock(metrics)}
  ${heldBlock(metrics)}
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

function dayBlock(day: DayRow, result: RunResult): string {
  return `<figure class="day" data-date="${day.date}">
  <figcaption>${esc(dayTitle(day))} <span class="zone">${esc(day.zones.join(" → "))}</span></figcaption>
  ${daySvg(day, result)}
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
  shade(0, day.outsideBefore, "outside", "before the run");
  shade(24 * 60 - day.outsideAfter, 24 * 60, "outside", "after the run");
  const quietLabel = `quiet hours ${formatQuietHours(quiet)}`;
  if (quiet.start < quiet.end) shade(quiet.start, quiet.end, "quiet", quietLabel);
  else if (quiet.start > quiet.end) {
    shade(0, quiet.end, "quiet", quietLabel);
    shade(quiet.start, 24 * 60, "quiet", quietLabel);
  }

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
    `<text class="lane" x="6" y="${LANES.tone + 4}">tone</text>`,
  ];
  const marks = day.events.map(marker).join("");
  const tones = day.events.map(toneMark).join("");
  return `<svg class="day-chart" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="events on ${day.date}">
${shades.join("")}${grid.join("")}${lanes.join("")}${tones}${marks}
</svg>`;
}

function marker(event: SimEvent): string {
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
      return `<path class="ev checkin-sent${event.stripped ? " stripped" : ""}" ${attrs} d="M${c} ${y - 8}L${c + 8} ${y}L${c} ${y + 8}L${c - 8} ${y}Z">${tip}</path>`;
    }
    case "checkin-held": {
      const y = LANES.held;
      const c = Number(cx);
      return `<path class="ev checkin-held ${event.stage}" ${attrs} d="M${c - 5} ${y - 5}L${c + 5} ${y + 5}M${c + 5} ${y - 5}L${c - 5} ${y + 5}">${tip}</path>`;
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
      return `${event.from} → ${event.to}`;
  }
}

function eventTable(day: DayRow, open: boolean): string {
  const { events } = day;
  const title = `${esc(dayTitle(day))}: ${events.length} event${events.length === 1 ? "" : "s"}`;
  if (events.length === 0) return `<p class="empty">${title}</p>`;
  const rows = events.map((event) => {
    const reading = readIn(new Date(event.at), event.zone);
    const tone = event.kind === "checkin-sent" || event.kind === "checkin-held" ? event.tone : "";
    return `<tr class="row ${event.kind}"><td class="time">${reading.time}</td><td><span class="tag ${event.kind}">${KIND_LABEL[event.kind]}</span></td><td>${esc(summary(event))}</td><td>${tone ? `<span class="tone-tag" style="background:${TONE_COLOR[tone]}">${tone}</span>` : ""}</td></tr>`;
  });
  return `<details class="events"${open ? " open" : ""}><summary>${title}</summary><table>${rows.join("")}</table></details>`;
}

function legend(): string {
  const items = EVENT_KINDS.map(
    (k) => `<span class="legend-item"><span class="tag ${k}">${KIND_LABEL[k]}</span></span>`,
  );
  const tones = Object.entries(TONE_COLOR).map(
    ([tone, color]) =>
      `<span class="legend-item"><span class="tone-tag" style="background:${color}">${tone}</span></span>`,
  );
  return `<p class="legend">${items.join("")}<span class="legend-item"><span class="swatch quiet"></span>quiet hours</span> · tone: ${tones.join("")}</p>`;
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
    ["re-asks of answered topics (window)", m.reasksOfAnswered],
    ["re-asks of answered topics (same day)", m.reasksSameDay],
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
      `<div class="bar-row"><span class="bar-label">${esc(reason)}</span><span class="bar" style="width:${((n / max) * 100).toFixed(0)}%"></span><span class="bar-value">${n}</span></div>`,
  );
  const stages = Object.entries(m.heldByStage)
    .map(([stage, n]) => `${esc(stage)} ${n}`)
    .join(" · ");
  return `<h2>Held back, by reason</h2>${bars.join("")}<p class="note">by step: ${stages}</p>`;
}

function perDayBlock(m: Metrics): string {
  const rows = m.perDay.map(
    (d) =>
      `<tr><td>${d.date}</td><td>${d.personMessages}</td><td>${d.replies}</td><td>${d.checkinsSent}</td><td>${d.checkinsHeld}</td></tr>`,
  );
  return `<h2>Messages per day</h2><table class="per-day"><tr><th>day</th><th>person</th><th>replies</th><th>check-ins</th><th>held</th></tr>${rows.join("")}</table>`;
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
    return `<rect x="${(i * bw).toFixed(2)}" y="${(h - bh).toFixed(1)}" width="${Math.max(bw - 0.5, 0.5).toFixed(2)}" height="${bh.toFixed(1)}" fill="${PURPOSE_COLOR[c.purpose] ?? "#777"}"><title>${esc(`${c.purpose}: prompt ${c.prompt} (input ${c.input}, cache read ${c.cacheRead}, cache write ${c.cacheWrite}), output ${c.output}`)}</title></rect>`;
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
:root{--ink:#1f2933;--muted:#616e7c;--line:#e4e7eb;--bg:#fbfbfa;--person:#3d7dd8;--reply:#5fa36a;--sent:#e9a23b;--held:#9aa5b1;--tz:#8e6cc0;--notice:#8e6cc0;--bad:#d1495b;--ok:#2f855a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);background:var(--bg)}
header{padding:18px 24px 8px;border-bottom:1px solid var(--line);background:#fff}
h1{margin:0 0 4px;font-size:22px}
h2{font-size:14px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:18px 0 6px}
.description{margin:0 0 4px;max-width:80ch}
.meta{margin:0;color:var(--muted)}
.badge{font-size:12px;padding:2px 8px;border-radius:10px;vertical-align:middle;color:#fff}
.badge.pass{background:var(--ok)}.badge.fail{background:var(--bad)}
main{display:grid;grid-template-columns:minmax(0,1fr) 400px;gap:20px;padding:12px 24px 32px}
@media (max-width:1100px){main{grid-template-columns:1fr}}
.day{margin:0 0 14px;background:#fff;border:1px solid var(--line);border-radius:8px;padding:8px 10px}
figcaption{font-weight:600}.zone{font-weight:400;color:var(--muted);margin-left:6px}
.day-chart{width:100%;height:auto;display:block}
.quiet{fill:#c9d8f0;opacity:.75}.outside{fill:#eeeeec}
.grid{stroke:var(--line)}.hour{font-size:11px;fill:var(--muted);text-anchor:middle}
.lane{font-size:11px;fill:var(--muted)}
.ev.person{fill:var(--person)}.ev.reply{fill:var(--reply)}.ev.notice{fill:var(--notice)}
.ev.checkin-sent{fill:var(--sent);stroke:#b57406;stroke-width:1}.ev.checkin-sent.stripped{stroke:var(--bad);stroke-width:2.5}
.ev.checkin-held{stroke:var(--held);stroke-width:2.5;fill:none}.ev.checkin-held.topic-guard{stroke:var(--bad)}
.ev.tz-change{stroke:var(--tz);stroke-width:2;stroke-dasharray:4 3}
.events{margin:0 0 8px}.events summary{cursor:pointer;font-weight:600}
.events table{width:100%;border-collapse:collapse;margin-top:4px}
.events td{padding:3px 6px;border-top:1px solid var(--line);vertical-align:top}
.events td.time{font-variant-numeric:tabular-nums;color:var(--muted);width:3.5em}
.tag{display:inline-block;font-size:11px;padding:1px 6px;border-radius:4px;color:#fff;white-space:nowrap}
.tag.person{background:var(--person)}.tag.reply{background:var(--reply)}.tag.checkin-sent{background:var(--sent)}
.tag.checkin-held{background:var(--held)}.tag.tz-change{background:var(--tz)}.tag.notice{background:var(--notice)}
.tone-tag{display:inline-block;font-size:11px;padding:1px 6px;border-radius:4px;color:#1f2933}
.legend{display:flex;flex-wrap:wrap;gap:6px;align-items:center;color:var(--muted);font-size:12px;margin:0 0 10px}
.legend-item{display:inline-flex;align-items:center;gap:4px}
.swatch{display:inline-block;width:14px;height:10px;border-radius:2px}.swatch.quiet{background:#d6e2f5}
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
`;
