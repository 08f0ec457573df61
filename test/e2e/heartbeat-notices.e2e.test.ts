import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunningBot } from "../../src/app/main.ts";
import { CHECKIN_NOTICE_TEXT } from "../../src/conversation/checkin-notices.ts";
import { SettableClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { BotApiFake } from "../../testkit/bot-api.ts";
import { type MessagesRequestBody, textReply, toolReply } from "../../testkit/messages-api.ts";
import { OWNER_ID, waitFor } from "./harness.ts";
import { type InProcessBot, inProcessBotPerTest } from "./in-process.ts";

/**
 * What the person is told when check-ins stop for a reason they cannot see (the model is away,
 * today's budget is spent) and when they come back: the whole wiring in this process (real
 * grammY against the Bot API fake, the real SDK against the Messages API fake), with the
 * heartbeat's ticks driven on the injected clock instead of node-cron's wall clock.
 */

const presence = inProcessBotPerTest();

/** Tuesday 10 March 2026, 09:00 UTC. */
const MORNING = "2026-03-10T09:00:00Z";

const SETTINGS = {
  PRESENCE_TIMEZONE: "UTC",
  PRESENCE_QUIET_HOURS: "22:00-08:00",
  // A schedule that never fires while a test runs: the test ticks on its own clock.
  PRESENCE_HEARTBEAT_CRON: "0 0 1 1 *",
  PRESENCE_MAX_RETRIES: "0",
  PRESENCE_REFLECT_MODE: "off",
};

/** The model: replies "Noted.", and decides check-ins as `checkin` says (declines by default). */
function model(checkin: { send: boolean; message?: string } = { send: false }) {
  return (body: MessagesRequestBody) => {
    if (body.tool_choice?.name === "decide_checkin")
      return toolReply("decide_checkin", {
        send: checkin.send,
        why: "a quiet day",
        topic: checkin.send ? "day" : "",
      });
    if (body.tool_choice?.name === "write_message")
      return toolReply("write_message", { message: checkin.message ?? "How is the day going?" });
    return textReply("Noted.");
  };
}

interface Live {
  running: RunningBot;
  clock: SettableClock;
  bot: BotApiFake;
  /** Moves the clock to `iso` and runs one heartbeat tick, as the schedule would. */
  tick(iso: string): Promise<string>;
  /** The person writes `text` and waits for what comes back. */
  say(text: string): Promise<string>;
  texts(): string[];
}

async function live(bot: InProcessBot, env: Record<string, string> = {}, start = MORNING): Promise<Live> {
  const clock = new SettableClock(start);
  const running = await bot.start(
    { ...SETTINGS, ...env },
    { clock, timers: systemTimers, logger: silentLogger },
  );
  const { bot: telegram } = bot.world;
  const owner = telegram.user(OWNER_ID, "Ada");
  return {
    running,
    clock,
    bot: telegram,
    async tick(iso) {
      clock.set(iso);
      const outcome = await running.companion.heartbeat();
      return "decision" in outcome ? outcome.decision.reason : outcome.status;
    },
    async say(text) {
      const before = telegram.sent.length;
      telegram.message(owner, { text });
      const sent = await telegram.waitForSent(before + 1);
      await running.companion.idle();
      return sent[before]?.text ?? "";
    },
    texts: () => telegram.sent.map((s) => s.text),
  };
}

const unansweredLine = (status: string) => status.split("\n").find((line) => line.startsWith("Unanswered:"));

describe("check-ins that stop while the model is away", () => {
  it("tells the person once after more than an hour, not again, and when it is back; the notice waits for no answer", async () => {
    const { model: api } = presence.world;
    api.setHandler(model());
    const p = await live(presence);
    expect(await p.say("Off to work, big meeting at 11")).toBe("Noted.");

    api.failNext("529", 5);
    expect(await p.tick("2026-03-10T10:07:00Z")).toBe("model-unavailable");
    expect(await p.tick("2026-03-10T11:07:00Z")).toBe("model-unavailable");
    // Failing for exactly an hour is not yet over an hour.
    expect(p.texts()).toEqual(["Noted."]);
    const before = unansweredLine(await p.say("/status"));
    expect(before).toBe("Unanswered: 1 message since you last wrote");

    expect(await p.tick("2026-03-10T11:37:00Z")).toBe("model-unavailable");
    expect(p.texts().at(-1)).toBe(CHECKIN_NOTICE_TEXT.model);
    expect(await p.tick("2026-03-10T12:07:00Z")).toBe("model-unavailable");
    expect(await p.tick("2026-03-10T13:07:00Z")).toBe("model-unavailable");
    expect(p.texts().filter((t) => t === CHECKIN_NOTICE_TEXT.model)).toHaveLength(1);
    expect(unansweredLine(await p.say("/status"))).toBe(before);

    expect(await p.tick("2026-03-10T14:07:00Z")).toBe("model-declined");
    expect(await p.tick("2026-03-10T15:07:00Z")).toBe("model-declined");
    const said = p.texts().filter((t) => unansweredLine(t) === undefined);
    expect(said).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.model, CHECKIN_NOTICE_TEXT.back]);
    const logged = p.running.runtime.messages.recent().filter((m) => m.role === "assistant");
    expect(logged.map((m) => [m.text, m.notice ?? false])).toEqual([
      ["Noted.", false],
      [CHECKIN_NOTICE_TEXT.model, true],
      [CHECKIN_NOTICE_TEXT.back, true],
    ]);
  });

  it("lets the check-in that comes back stand for 'back', without waiting out a gap after the notice", async () => {
    const { model: api } = presence.world;
    api.setHandler(model());
    const p = await live(presence);
    await p.say("Off to work");
    api.failNext("529", 3);
    for (const at of ["10:07", "10:37", "11:08"]) await p.tick(`2026-03-10T${at}:00Z`);
    expect(p.texts()).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.model]);

    // Twenty minutes after the notice, well inside the 45-minute gap a check-in would start.
    api.setHandler(model({ send: true, message: "How did the meeting go?" }));
    expect(await p.tick("2026-03-10T11:28:00Z")).toBe("sent");
    expect(p.texts()).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.model, "How did the meeting go?"]);
    api.setHandler(model());
    await p.tick("2026-03-10T13:07:00Z");
    expect(p.texts()).toHaveLength(3);
  });

  it("says nothing while the person paused check-ins, however long the model is away", async () => {
    const { model: api } = presence.world;
    api.setHandler(model());
    const p = await live(presence);
    await p.say("Off to work");
    await p.say("/pause");
    const sent = p.texts().length;
    api.failNext("529", 10);
    for (const at of ["10:07", "11:07", "12:07", "13:07"]) {
      expect(await p.tick(`2026-03-10T${at}:00Z`)).toBe("paused");
    }
    expect(p.texts()).toHaveLength(sent);
  });
});

describe("check-ins that stop on the day's budget", () => {
  /** A reply that spends well over the test's budget of 5,000 tokens. */
  const costlyReply = () => textReply("Noted.", { input_tokens: 6_000, output_tokens: 10 });

  it("tells the person once a day, says when check-ins are back, and tells again another day", async () => {
    const { model: api } = presence.world;
    api.setHandler(model());
    const p = await live(presence, { PRESENCE_DAILY_TOKEN_BUDGET: "5000" });
    api.enqueue(costlyReply());
    await p.say("Long day ahead");
    for (const at of ["10:07", "11:07", "15:07", "21:07"])
      expect(await p.tick(`2026-03-10T${at}:00Z`)).toBe("budget");
    expect(p.texts()).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.budget]);

    expect(await p.tick("2026-03-11T09:07:00Z")).toBe("model-declined");
    expect(await p.tick("2026-03-11T10:07:00Z")).toBe("model-declined");
    expect(p.texts()).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.budget, CHECKIN_NOTICE_TEXT.back]);

    p.clock.set("2026-03-11T12:00:00Z");
    api.enqueue(costlyReply());
    await p.say("Another long one");
    expect(await p.tick("2026-03-11T14:07:00Z")).toBe("budget");
    expect(await p.tick("2026-03-11T15:07:00Z")).toBe("budget");
    expect(p.texts().filter((t) => t === CHECKIN_NOTICE_TEXT.budget)).toHaveLength(2);
  });

  it("says nothing in quiet hours, nor the next morning once the new day's budget frees check-ins", async () => {
    const { model: api } = presence.world;
    api.setHandler(model());
    const p = await live(presence, { PRESENCE_DAILY_TOKEN_BUDGET: "5000" }, "2026-03-10T21:50:00Z");
    api.enqueue(costlyReply());
    await p.say("Late one");
    for (const at of ["2026-03-10T22:07:00Z", "2026-03-10T23:07:00Z", "2026-03-11T07:07:00Z"]) {
      expect(await p.tick(at)).toBe("quiet-hours");
    }
    expect(await p.tick("2026-03-11T08:07:00Z")).toBe("model-declined");
    expect(p.texts()).toEqual(["Noted."]);
  });
});

describe("a notice across a crash", () => {
  /** The outbox entry a notice is sent from, as the companion writes it. */
  function noticeEntry(id: string, createdAt: string) {
    return {
      id,
      kind: "notice",
      text: CHECKIN_NOTICE_TEXT.model,
      trigger: "heartbeat",
      channel: "telegram",
      createdAt,
      said: { kind: "stopped", causes: ["model"] },
    };
  }

  /** Edits mind.json while presence is stopped, as a crash at some instant would have left it. */
  async function editMind(
    dataDir: string,
    edit: (mind: { checkinNotices: { model: unknown }; outbox: unknown[] }) => void,
  ): Promise<void> {
    const file = join(dataDir, "mind.json");
    const mind = JSON.parse(await readFile(file, "utf8"));
    edit(mind);
    await writeFile(file, JSON.stringify(mind));
  }

  async function untilRecovered(p: Live): Promise<void> {
    await waitFor(
      () => p.running.runtime.mind.read().outbox.length === 0,
      5_000,
      () => "recovery never finished the outbox",
    );
  }

  it("is not said again when the crash came after it was sent, before it was recorded as told", async () => {
    const { model: api, dataDir } = presence.world;
    api.setHandler(model());
    const first = await live(presence);
    await first.say("Off to work");
    api.failNext("529", 20);
    for (const at of ["10:07", "11:07", "11:37"]) await first.tick(`2026-03-10T${at}:00Z`);
    expect(first.texts()).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.model]);
    const notice = first.running.runtime.messages.recent().at(-1);
    await first.running.stop();

    await editMind(dataDir, (mind) => {
      mind.checkinNotices.model = { announcedAt: null, resumedAt: null };
      mind.outbox.push(noticeEntry(notice?.outboxId ?? "", notice?.ts ?? ""));
    });
    const second = await live(presence, {}, "2026-03-10T12:00:00Z");
    await untilRecovered(second);
    await second.tick("2026-03-10T12:07:00Z");
    await second.tick("2026-03-10T13:07:00Z");
    expect(second.texts()).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.model]);
  });

  it("is said once, at the next tick, when the crash came before it was sent", async () => {
    const { model: api, dataDir } = presence.world;
    api.setHandler(model());
    const first = await live(presence);
    await first.say("Off to work");
    api.failNext("529", 20);
    for (const at of ["10:07", "11:07"]) await first.tick(`2026-03-10T${at}:00Z`);
    await first.running.stop();

    // The 11:37 tick wrote its notice to the outbox and the process died before sending it.
    await editMind(dataDir, (mind) => {
      mind.outbox.push(noticeEntry("o-never-sent", "2026-03-10T11:37:00.000Z"));
    });
    const second = await live(presence, {}, "2026-03-10T11:40:00Z");
    await untilRecovered(second);
    expect(second.texts()).toEqual(["Noted."]);
    await second.tick("2026-03-10T12:07:00Z");
    await second.tick("2026-03-10T13:07:00Z");
    expect(second.texts()).toEqual(["Noted.", CHECKIN_NOTICE_TEXT.model]);
  });
});
