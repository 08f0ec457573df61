import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TelegramUpdatesState } from "../../../src/channels/telegram/updates-state.ts";
import { DataFileError } from "../../../src/store/files.ts";

const NOW = new Date(Date.UTC(2026, 2, 10, 10, 0));
let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "presence-updates-"));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("TelegramUpdatesState", () => {
  it("remembers handled updates across a reopen, in a private file", async () => {
    await (await TelegramUpdatesState.open(dataDir, NOW)).markHandled(500_007);
    const reopened = await TelegramUpdatesState.open(dataDir, NOW);
    expect(reopened.isHandled(500_007)).toBe(true);
    expect(reopened.isHandled(500_008)).toBe(false);
    expect((await stat(join(dataDir, "telegram.json"))).mode & 0o777).toBe(0o600);
  });

  it("matches exact ids, so a numbering Telegram restarts lower is not mistaken for handled", async () => {
    const state = await TelegramUpdatesState.open(dataDir, NOW);
    await state.markHandled(900_000);
    expect(state.isHandled(12_345)).toBe(false);
  });

  it("keeps only the latest hundred ids", async () => {
    const state = await TelegramUpdatesState.open(dataDir, NOW);
    for (let id = 1; id <= 101; id += 1) await state.markHandled(id);
    expect(state.isHandled(1)).toBe(false);
    expect(state.isHandled(2)).toBe(true);
    expect(state.isHandled(101)).toBe(true);
  });

  it("lets a stranger have one reply an hour, remembered across a reopen", async () => {
    const at = (minutes: number) => new Date(Date.UTC(2026, 2, 10, 10, minutes));
    const state = await TelegramUpdatesState.open(dataDir, NOW);
    expect(await state.claimStrangerReply(555, at(0))).toBe(true);
    expect(await state.claimStrangerReply(555, at(59))).toBe(false);
    expect(await state.claimStrangerReply(777, at(30))).toBe(true);
    const reopened = await TelegramUpdatesState.open(dataDir, at(40));
    expect(await reopened.claimStrangerReply(777, at(45))).toBe(false);
    expect(await reopened.claimStrangerReply(555, at(60))).toBe(true);
  });

  it("forgets strangers answered over an hour ago, on disk too, with the next write", async () => {
    const at = (minutes: number) => new Date(Date.UTC(2026, 2, 10, 10, minutes));
    await (await TelegramUpdatesState.open(dataDir, at(0))).claimStrangerReply(555, at(0));
    await (await TelegramUpdatesState.open(dataDir, at(61))).markHandled(1);
    expect(await readFile(join(dataDir, "telegram.json"), "utf8")).not.toContain("555");
  });

  it("refuses a damaged file, naming it and what to do", async () => {
    await writeFile(join(dataDir, "telegram.json"), JSON.stringify({ version: 1, handled: "lots" }));
    const error = await TelegramUpdatesState.open(dataDir, NOW).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataFileError);
    expect(String(error)).toContain("telegram.json");
    expect(String(error)).toContain("delete it");
  });
});
