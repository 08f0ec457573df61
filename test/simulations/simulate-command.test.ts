import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NaiveModel } from "../../simulations/naive-model.ts";
import type { CommandIO } from "../../src/app/commands/command.ts";
import { runCli } from "../../src/cli.ts";
import {
  type MessagesApiFake,
  type MessagesRequestBody,
  startMessagesApiFake,
} from "../../testkit/messages-api.ts";

/** `presence simulate` as a person runs it: the table, the progress, the files, the exit code. */

let outDir: string;
let api: MessagesApiFake;

beforeAll(async () => {
  outDir = await mkdtemp(join(tmpdir(), "presence-simulate-"));
  api = await startMessagesApiFake();
});

afterAll(async () => {
  await api.close();
  await rm(outDir, { recursive: true, force: true });
});

async function simulate(args: string[], env: Record<string, string | undefined> = {}, columns?: number) {
  let stdout = "";
  let stderr = "";
  const io: CommandIO = {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: { PRESENCE_SIMULATIONS_OUT: outDir, ...env },
    interactive: false,
    ...(columns === undefined ? {} : { columns }),
  };
  const code = await runCli(["simulate", ...args], io);
  return { code, stdout, stderr };
}

/** Writes a five-hour UTC scenario file with the given name, description and extra fields. */
async function scenarioFile(name: string, description: string, fields: Record<string, unknown>) {
  const file = join(outDir, `${name}.json`);
  const scenario = { name, description, timezone: "UTC", start: "2026-02-10T07:00", end: "2026-02-10T12:00" };
  await writeFile(file, JSON.stringify({ ...scenario, ...fields }));
  return file;
}

describe("presence simulate", () => {
  it("runs a scenario offline, prints one table, reports progress and writes the three files", async () => {
    const { code, stdout, stderr } = await simulate(["weekend"]);
    expect(code).toBe(0);
    const [, , head, rule, row, blank, ...legend] = stdout.trim().split("\n");
    expect(head).toMatch(/^scenario\s+expectations\s+fired\s+held\s+unanswered\s+\(later\)\s+\(stripped\)$/);
    expect(rule).toMatch(/^-+( +-+)+$/);
    expect(row).toMatch(/^weekend\s+met \d+\/\d+/);
    expect(blank).toBe("");
    expect(legend.join(" ")).toMatch(/"in window" \(less than 6 h after the answer\) must be 0/);
    expect(stderr).toMatch(/weekend: ok · \d+ sent, \d+ held/);
    expect(stderr).toMatch(/1 of 1 met their expectations in \d+\.\d s/);
    for (const file of ["transcript.md", "metrics.json", "report.html"]) {
      expect(existsSync(join(outDir, "weekend", file)), file).toBe(true);
    }
    const figures = JSON.parse(await readFile(join(outDir, "weekend", "metrics.json"), "utf8"));
    expect(figures).toMatchObject({ scenario: "weekend", model: "naive", passed: true });
    expect(figures.events.length).toBeGreaterThan(0);
    // The cost: dollars per call, per local day and purpose, and both baselines, in the table too.
    const { cost, tokens } = figures.metrics;
    expect(tokens.calls.every((c: { dollars: unknown }) => typeof c.dollars === "number")).toBe(true);
    expect(cost.perDay.map((d: { date: string }) => d.date)).toEqual(["2026-02-14", "2026-02-15"]);
    expect(Object.keys(cost.byPurpose)).toEqual(expect.arrayContaining(["reply", "reflect"]));
    expect(cost.baselines.everyTick.dollars).toBeGreaterThan(cost.baselines.transcript.dollars);
    const costRow = legend.find((line) => line.startsWith("weekend "));
    const dollars = (n: number) => `$${n.toFixed(4)}`;
    expect(costRow).toContain(dollars(cost.dollars));
    expect(costRow).toContain(dollars(cost.baselines.transcript.dollars));
    expect(costRow).toContain(dollars(cost.baselines.everyTick.dollars));
    // Each bot as a multiple of presence, the direction the report, bench and README use, said in words.
    const times = (bot: number) => `×${(bot / cost.dollars).toFixed(1)}`;
    expect(costRow).toContain(
      `${dollars(cost.baselines.transcript.dollars)}  ${times(cost.baselines.transcript.dollars).padStart(8)}`,
    );
    const costHead = legend.slice(legend.findIndex((line) => line.includes("transcript bot")));
    expect(costHead[0]).toMatch(/transcript bot\s+every-tick bot$/);
    expect(costHead[1]).toMatch(/costs ×\s+costs ×$/);
    expect(costHead[2]).toMatch(
      /^scenario\s+days\s+dollars\s+a day\s+dollars\s+presence\s+dollars\s+presence$/,
    );
    const notes = legend.join(" ");
    expect(notes).toContain(
      "costs × presence: what the bot would have cost as a multiple of presence's dollars",
    );
    expect(notes).toContain(
      "Dollars are modelled: each call's usage is priced at the 2026-10 prices (source: public price trackers, not checked online).",
    );
    const report = await readFile(join(outDir, "weekend", "report.html"), "utf8");
    expect(report).toContain(">costs × presence</th>");
    expect(report).toContain(`<tr class="transcript"><td>transcript bot</td>`);
    expect(report).toContain(
      "each call's reported usage is priced at the 2026-10 prices (source: public price trackers, not checked online).",
    );
    expect(figures.metrics.cost.prices).toBe(
      "the 2026-10 prices (source: public price trackers, not checked online)",
    );
    // Table, notes and progress keep within 100 columns when the output is not a terminal.
    for (const line of [...stdout.split("\n"), ...stderr.split("\n")])
      expect(line.length, line).toBeLessThanOrEqual(100);
  });

  it("on an 80-column terminal puts a long scenario name above its figures, no line over 80", async () => {
    const name = "saturday-good-morning-then-silence";
    const { code, stdout, stderr } = await simulate([name], {}, 80);
    expect(code).toBe(0);
    for (const line of [...stdout.split("\n"), ...stderr.split("\n")]) {
      expect(line.length, line).toBeLessThanOrEqual(80);
    }
    const printed = stdout.split("\n");
    const rows = printed.flatMap((line, i) => (line === name ? [printed[i + 1]] : []));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^ {2}\s*met \d+\/\d+\s+\d+/);
    expect(rows[1]).toMatch(/^ {2}\s*1\s+\$0\.\d{4}\s+\$0\.\d{4}\s+\$0\.\d{4}\s+×\d+\.\d/);
    expect(stdout).toMatch(/^ {2}days\s+dollars\s+a day\s+dollars\s+presence\s+dollars\s+presence$/m);
    expect(stdout).toMatch(/transcript bot\s+every-tick bot$/m);
  });

  it("exits 1 when a scenario's expectations are not met", async () => {
    const file = await scenarioFile(
      "too-strict",
      "Expects a check-in on a silent weekday morning and none held back: impossible by design.",
      { expect: { fired: { min: 10 } } },
    );
    const { code, stdout, stderr } = await simulate([file]);
    expect(code).toBe(1);
    expect(stdout).toMatch(/too-strict\s+NOT MET/);
    expect(stderr).toMatch(/too-strict: FAILED \(check-ins fired\)/);
  });

  it("refuses a scenario with a time it cannot place before running anything, naming the field", async () => {
    const file = await scenarioFile("stray-message", "A message the day after the scenario ends.", {
      messages: [{ at: "2026-02-11T09:00", text: "hi" }],
    });
    const { code, stdout, stderr } = await simulate(["weekend", file]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain('stray-message: messages[0].at "2026-02-11T09:00" lies outside start…end');
    expect(stderr).not.toContain("simulating");
  });

  it("names the known scenarios when asked for one that does not exist", async () => {
    const { code, stderr } = await simulate(["no-such-day"]);
    expect(code).toBe(2);
    expect(stderr).toContain("no scenario named no-such-day");
    expect(stderr).toContain("trip-week");
  });

  it("refuses --live without exactly one scenario, and without a key says which setting is missing", async () => {
    expect((await simulate(["--live"])).code).toBe(2);
    const missing = await simulate(["weekend", "--live"], { ANTHROPIC_API_KEY: undefined });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("ANTHROPIC_API_KEY");
  });

  it("--live refuses, before any call, a model the price table does not list", async () => {
    const env = {
      ANTHROPIC_API_KEY: api.apiKey,
      ANTHROPIC_BASE_URL: api.url,
      PRESENCE_DECIDE_MODEL: "claude-opus-9",
    };
    const before = api.requests.length;
    const { code, stderr } = await simulate(["weekend", "--live"], env);
    expect(code).toBe(2);
    expect(stderr).toMatch(/model "claude-opus-9" has no price in .*prices\.json.*PRESENCE_PRICES_FILE/);
    expect(api.requests).toHaveLength(before);
  });

  it("--live talks to whatever ANTHROPIC_BASE_URL names, and --judge adds one graded call per run", async () => {
    const naive = new NaiveModel();
    api.setHandler((body: MessagesRequestBody) =>
      body.tool_choice?.name === "grade_run"
        ? {
            content: [
              { type: "tool_use", name: "grade_run", input: { score: 4, verdict: "Backed off well." } },
            ],
          }
        : naive.handler(body),
    );
    const env = { ANTHROPIC_API_KEY: api.apiKey, ANTHROPIC_BASE_URL: api.url, PRESENCE_MAX_RETRIES: "0" };
    const { code, stdout } = await simulate(["saturday-good-morning-then-silence", "--live", "--judge"], env);
    expect(code).toBe(0);
    expect(stdout).toMatch(/judge/);
    // With the judge's column the table passes 100 columns, so the name goes above its figures.
    expect(stdout).toMatch(/^saturday-good-morning-then-silence\n\s+met .* 4\/5$/m);
    expect(api.requests.filter((r) => r.body.tool_choice?.name === "grade_run")).toHaveLength(1);
    const transcript = await readFile(
      join(outDir, "saturday-good-morning-then-silence-live", "transcript.md"),
      "utf8",
    );
    expect(transcript).toContain("Judge: 4/5 — Backed off well.");
    expect(api.problems).toEqual([]);
  });
});
