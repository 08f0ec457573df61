import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { EVENT_KINDS } from "../../simulations/events.ts";
import { runScenario } from "../../simulations/harness.ts";
import type { RunResult } from "../../simulations/result.ts";
import { loadScenarios, naiveRunModel, writeRunOutputs } from "../../simulations/run.ts";
import {
  browserRequired,
  ENABLE_BROWSER_CHECK,
  launchTestChromium,
  type TestChromium,
} from "../support/chromium.ts";

/**
 * The report is looked at in a real browser: Debian's chromium, driven by playwright-core
 * (nothing is downloaded). A multi-day run with a /tz change must draw one timeline mark
 * per event of the run, per kind, say why check-ins were held and what memory kept open,
 * and fetch nothing from anywhere. Without a runnable Chromium the browser checks are
 * skipped with a note (test/support/chromium.ts), except under CI, where they fail.
 */

let chromium: TestChromium;
let result: RunResult;
let outDir: string;

beforeAll(async () => {
  const [scenario] = await loadScenarios(["trip-week"]);
  if (!scenario) throw new Error("the trip-week scenario did not load");
  const model = await naiveRunModel();
  try {
    result = await runScenario(scenario, { model: model.access });
  } finally {
    await model.close();
  }
  outDir = await mkdtemp(join(tmpdir(), "presence-report-"));
  chromium = await launchTestChromium();
}, 90_000);

afterAll(async () => {
  if (chromium && "browser" in chromium) await chromium.browser.close();
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

/** The browser, or: skip with a note saying how to enable the check (a failure under CI). */
function browserFor(ctx: TestContext): Browser {
  if ("browser" in chromium) return chromium.browser;
  const why = `${chromium.unavailable}; to run it, ${ENABLE_BROWSER_CHECK}`;
  if (browserRequired()) throw new Error(`CI needs the report's browser check, but ${why}`);
  return ctx.skip(`the report's browser check, because ${why}`);
}

async function reportPage(ctx: TestContext): Promise<Page> {
  const page = await browserFor(ctx).newPage();
  await page.goto(`file://${join(outDir, "trip-week", "report.html")}`);
  return page;
}

describe("report.html in headless Chromium", () => {
  it("draws every event of the run on the timeline, kind by kind, from the page alone", async (ctx) => {
    const browser = browserFor(ctx);
    const dir = await writeRunOutputs(result, outDir);
    const page = await browser.newPage();
    const fetched: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith("file://")) fetched.push(request.url());
    });
    await page.goto(`file://${join(dir, "report.html")}`);

    expect(await page.locator("[data-event]").count()).toBe(result.events.length);
    for (const kind of EVENT_KINDS) {
      const drawn = await page.locator(`[data-event="${kind}"]`).count();
      expect(drawn, kind).toBe(result.events.filter((e) => e.kind === kind).length);
    }
    expect(result.events.some((e) => e.kind === "tz-change")).toBe(true);
    expect(fetched).toEqual([]);
    await page.close();
  });

  it("draws a lane per local day with quiet hours shaded, and shows the verdict and figures", async (ctx) => {
    const page = await reportPage(ctx);
    const days = await page
      .locator("figure.day")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-date")));
    expect(days).toEqual(["2026-03-02", "2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06"]);
    expect(await page.locator("figure.day rect.quiet").count()).toBeGreaterThanOrEqual(days.length);
    const box = await page.locator("figure.day svg").first().boundingBox();
    expect(box?.width ?? 0).toBeGreaterThan(400);
    await expect(page.locator(".badge").textContent()).resolves.toBe(
      result.passed ? "expectations met" : "expectations not met",
    );
    await expect(page.locator("table.expectations tr.ok, table.expectations tr.bad").count()).resolves.toBe(
      result.expectations.length,
    );
    const { cost } = result.metrics;
    const dollarsIn = async (row: string) =>
      Number((await page.locator(`table.cost tr.${row} td`).nth(1).textContent())?.replace("$", ""));
    expect(await dollarsIn("presence")).toBeCloseTo(cost.dollars, 3);
    expect(await dollarsIn("transcript")).toBeCloseTo(cost.baselines.transcript.dollars, 3);
    expect(await dollarsIn("every-tick")).toBeCloseTo(cost.baselines.everyTick.dollars, 3);
    expect(cost.dollars).toBeGreaterThan(0);
    await page.close();
  });

  it("shows the held-back reasons, the re-asks, and the trip's open loop from Monday to Friday", async (ctx) => {
    const page = await reportPage(ctx);
    const reasons = Object.keys(result.metrics.heldByReason);
    await expect(page.locator("p.legend .cross").count()).resolves.toBe(reasons.length);
    await expect(page.locator(".reask").count()).resolves.toBe(result.metrics.reasks.length);
    await expect(page.locator(".reask-ring").count()).resolves.toBe(result.metrics.reasks.length);
    const loops = await page.locator("ul.loops li").allTextContents();
    const trip = loops.find((l) => l.includes("flying to Tokyo"));
    expect(trip).toMatch(/opened Mon 09:10 → closed Fri 18:30/);
    expect(loops.find((l) => l.includes("slides for Tokyo"))).toMatch(
      /known at the start → closed Mon 21:30/,
    );
    await page.close();
  });

  it("sends each /tz through the bot's command handlers and shows what they answered", () => {
    const changes = result.events.filter((e) => e.kind === "tz-change");
    expect(changes.map((e) => [e.to, e.reply.split(" (")[0]])).toEqual([
      ["Asia/Tokyo", "Got it: you're on Asia/Tokyo time now"],
      ["Europe/Berlin", "Got it: you're on Europe/Berlin time now"],
    ]);
    expect(result.expectations.find((e) => e.name === "the schedule follows each /tz command")).toMatchObject(
      {
        ok: true,
        got: "Asia/Tokyo, Europe/Berlin",
      },
    );
  });
});
