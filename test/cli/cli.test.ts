import { describe, expect, it } from "vitest";
import { lines, runInProcess } from "./run.ts";

const COMMANDS = ["awareness", "heartbeat-check", "bench"];

describe("presence --help", () => {
  it("lists every command with its summary", async () => {
    const result = await runInProcess(["--help"]);
    expect(result.code).toBe(0);
    for (const name of COMMANDS) expect(result.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
  });

  it("shows the overview and exits 2 when no command is given", async () => {
    const result = await runInProcess([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Commands:");
  });

  it.each(COMMANDS)("%s --help shows its usage and every option", async (name) => {
    const result = await runInProcess([name, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^Usage: presence ${name} `));
    const usage = lines(result.stdout)[0] ?? "";
    for (const flag of usage.match(/--[a-z-]+/g) ?? []) {
      expect(result.stdout.split("Options:")[1]).toContain(flag);
    }
  });
});

describe("mistakes on the command line", () => {
  it("names an unknown command in one line and exits 2", async () => {
    const result = await runInProcess(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      'presence: unknown command "frobnicate" (run with --help to see the commands)',
    ]);
    expect(result.stdout).toBe("");
  });

  it.each(COMMANDS)("%s: names an unknown flag in one line and exits 2", async (name) => {
    const result = await runInProcess([name, "--frobnicate"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      `presence ${name}: unknown option "--frobnicate" (see ${name} --help)`,
    ]);
  });

  it("names an option given without its value in one line and exits 2", async () => {
    const result = await runInProcess(["awareness", "--now", "2026-02-07T14:22:00Z", "--log"]);
    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      "presence awareness: Option '--log <value>' argument missing (see awareness --help)",
    ]);
  });
});
