import { describe, expect, it } from "vitest";
import {
  BOT_COMMANDS,
  commandOf,
  parseForgetArgs,
  parsePauseArgs,
  parseQuietArgs,
  parseTimezoneArgs,
  parseWipeArgs,
} from "../../src/channels/commands.ts";

const NOW = new Date("2026-03-10T14:20:00Z");
const BERLIN = "Europe/Berlin"; // 15:20 local on NOW

function until(args: string, zone = BERLIN): string {
  const parsed = parsePauseArgs(args, NOW, zone);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value.kind === "until" ? parsed.value.until.toISOString() : parsed.value.kind;
}

describe("commandOf", () => {
  it("recognises commands, with a bot mention and arguments", () => {
    expect(commandOf("/pause@presence_bot 2h")).toEqual({ name: "pause", args: "2h" });
    expect(commandOf("/forget  my  sister ")).toEqual({ name: "forget", args: "my  sister" });
    expect(commandOf("/STATUS")).toEqual({ name: "status", args: "" });
  });

  it("tells an unknown command apart from ordinary text", () => {
    expect(commandOf("/dance")).toEqual({ name: null, typed: "dance" });
    expect(commandOf("/Shrug@presence_bot oh well")).toEqual({ name: null, typed: "shrug" });
    expect(commandOf("pause 2h")).toBeNull();
    expect(commandOf("I said /pause")).toBeNull();
    expect(commandOf("/etc/hosts is broken again")).toBeNull();
    expect(commandOf("/ hello")).toBeNull();
    expect(commandOf("/2")).toBeNull();
  });

  it("offers Telegram a valid menu", () => {
    for (const { command, description } of BOT_COMMANDS) {
      expect(command).toMatch(/^[a-z0-9_]{1,32}$/);
      expect(description.length).toBeGreaterThanOrEqual(3);
      expect(description.length).toBeLessThanOrEqual(256);
    }
  });
});

describe("parsePauseArgs", () => {
  it("pauses until /resume without an argument", () => {
    expect(until("")).toBe("indefinitely");
  });

  it("reads durations in several spellings", () => {
    expect(until("2h")).toBe("2026-03-10T16:20:00.000Z");
    expect(until("90m")).toBe("2026-03-10T15:50:00.000Z");
    expect(until("1h30m")).toBe("2026-03-10T15:50:00.000Z");
    expect(until("2 days")).toBe("2026-03-12T14:20:00.000Z");
    expect(until("45 minutes")).toBe("2026-03-10T15:05:00.000Z");
  });

  it("reads 'until HH:MM' in the person's zone: today when still ahead, else tomorrow", () => {
    expect(until("until 18:00")).toBe("2026-03-10T17:00:00.000Z");
    expect(until("until 9:30")).toBe("2026-03-11T08:30:00.000Z");
    expect(until("until 18:00", "America/New_York")).toBe("2026-03-10T22:00:00.000Z");
  });

  it("says what it expected for anything else", () => {
    for (const args of ["soon", "2 fortnights", "until 25:00", "0h", "45 days", "2h please"]) {
      const parsed = parsePauseArgs(args, NOW, BERLIN);
      expect(parsed.ok, args).toBe(false);
      if (!parsed.ok) expect(parsed.problem).toMatch(/pause/);
    }
  });
});

describe("parseQuietArgs", () => {
  it("reads a range, wrapping midnight, and 'off'", () => {
    expect(parseQuietArgs("22:00-08:00")).toEqual({ ok: true, value: { start: 1320, end: 480 } });
    expect(parseQuietArgs("23:30 – 07:15")).toEqual({ ok: true, value: { start: 1410, end: 435 } });
    expect(parseQuietArgs("off")).toEqual({ ok: true, value: null });
  });

  it("refuses anything else with an example", () => {
    const parsed = parseQuietArgs("late");
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toContain("/quiet 22:00-08:00");
  });
});

describe("parseTimezoneArgs", () => {
  it("accepts IANA zones, in lower case too, and 'off'", () => {
    expect(parseTimezoneArgs("Europe/Lisbon")).toEqual({ ok: true, value: "Europe/Lisbon" });
    expect(parseTimezoneArgs("america/new_york")).toEqual({ ok: true, value: "America/New_York" });
    expect(parseTimezoneArgs("off")).toEqual({ ok: true, value: null });
  });

  it("refuses abbreviations and unknown places", () => {
    expect(parseTimezoneArgs("PST").ok).toBe(false);
    expect(parseTimezoneArgs("Mars/Olympus").ok).toBe(false);
    expect(parseTimezoneArgs("").ok).toBe(false);
  });
});

describe("parseForgetArgs and parseWipeArgs", () => {
  it("needs something to forget", () => {
    expect(parseForgetArgs(" my sister ")).toEqual({ ok: true, value: { kind: "text", text: "my sister" } });
    expect(parseForgetArgs(" 3 ")).toEqual({ ok: true, value: { kind: "number", number: 3 } });
    expect(parseForgetArgs("3 things")).toEqual({ ok: true, value: { kind: "text", text: "3 things" } });
    expect(parseForgetArgs("a").ok).toBe(false);
  });

  it("reads text in quotes as text, without the quotes, so digits can be forgotten as words", () => {
    expect(parseForgetArgs('"1234"')).toEqual({ ok: true, value: { kind: "text", text: "1234" } });
    expect(parseForgetArgs("“1234”")).toEqual({ ok: true, value: { kind: "text", text: "1234" } });
    expect(parseForgetArgs(' " my sister " ')).toEqual({
      ok: true,
      value: { kind: "text", text: "my sister" },
    });
    expect(parseForgetArgs('"7"')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('/forget "1234"'),
    });
  });

  it("confirms a wipe only with the word; any other answer cancels", () => {
    expect(parseWipeArgs("")).toBe("ask");
    expect(parseWipeArgs("YES")).toBe("confirm");
    expect(parseWipeArgs(" yes ")).toBe("confirm");
    expect(parseWipeArgs("no")).toBe("cancel");
    expect(parseWipeArgs("maybe")).toBe("cancel");
    expect(parseWipeArgs("yes please")).toBe("cancel");
  });
});
