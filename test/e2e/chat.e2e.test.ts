import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BOT_COMMANDS } from "../../src/channels/commands.ts";
import { systemClock } from "../../src/core/clock.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { SentFiles } from "../../src/store/sent-files.ts";
import { lastUserText } from "../../testkit/messages-api.ts";
import { startTranscriptionFake } from "../../testkit/transcription-api.ts";
import { createWorld, startPresence, stopPresence, untilListening, type World } from "./harness.ts";

let world: World;

beforeEach(async () => {
  world = await createWorld();
});

afterEach(async () => {
  await world.close();
});

describe("presence chat, end to end", () => {
  it("answers lines typed in the terminal with the same companion, logged on channel cli", async () => {
    const chat = startPresence(world, {}, "chat");
    chat.child.stdin?.write("hello from the terminal\n");
    chat.child.stdin?.end();
    expect(await chat.exited).toBe(0);
    expect(chat.stdout()).toContain("presence: Answer 1.");
    const log = await (
      await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" })
    ).all();
    expect(log.map((m) => [m.role, m.text, m.channel])).toEqual([
      ["user", "hello from the terminal", "cli"],
      ["assistant", "Answer 1.", "cli"],
    ]);
  });

  it("writes /export inside the data directory, owner-only, where /wipe deletes it", async () => {
    const exporting = startPresence(world, {}, "chat");
    exporting.child.stdin?.end("/export\n");
    expect(await exporting.exited).toBe(0);
    const exports = join(world.dataDir, "exports");
    const [file] = await readdir(exports);
    expect(file).toMatch(/^presence-export-\d{4}-\d\d-\d\d\.json$/);
    expect((await stat(join(exports, file as string))).mode & 0o777).toBe(0o600);
    expect(exporting.stdout()).toContain(`Written to ${join(exports, file as string)}`);
    expect(await readdir(world.workDir)).not.toContain(file);

    const wiping = startPresence(world, {}, "chat");
    wiping.child.stdin?.end("/wipe\n/wipe yes\n");
    expect(await wiping.exited).toBe(0);
    expect(wiping.stdout()).toContain("Everything is deleted");
    await expect(stat(exports)).rejects.toThrow(/ENOENT/);
  });

  it("answers /help and an unknown command in the terminal without the model, as on Telegram", async () => {
    const chat = startPresence(world, {}, "chat");
    chat.child.stdin?.end("/help\n/dance\n/wipe\n/wipe no\n");
    expect(await chat.exited).toBe(0);
    const out = chat.stdout();
    for (const { command, description } of BOT_COMMANDS)
      expect(out).toContain(`/${command} — ${description}\n`);
    expect(out).toContain("I don't know the command /dance. /help lists the ones I do.");
    expect(out).toContain("Cancelled: nothing was deleted.");
    expect(world.model.requests).toHaveLength(0);
    const log = await (
      await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" })
    ).all();
    expect(log).toEqual([]);
  });

  it("refuses while the bot runs on the same data, naming its PID", async () => {
    const bot = startPresence(world);
    await untilListening(world, bot);
    const chat = startPresence(world, {}, "chat");
    chat.child.stdin?.end();
    expect(await chat.exited).toBe(1);
    expect(chat.stderr()).toBe(
      `npm run cli -- chat: presence is already running (pid ${bot.pid}, start) for data directory ${world.dataDir}; stop it first\n`,
    );
    expect((await stopPresence(bot)).code).toBe(0);
  });

  it("reads the voice settings: /status and /help say notes are heard, and a note the bot left waiting is heard", async () => {
    const transcription = await startTranscriptionFake();
    transcription.answer("the words of the note");
    try {
      // What a bot that crashed before hearing it left: the note logged, its sound kept.
      const log = await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" });
      const stored = await new SentFiles({ dataDir: world.dataDir }).keep(
        "telegram-1001-7",
        "ogg",
        Buffer.from("OggS a voice note"),
        systemClock.now(),
      );
      await log.append({
        role: "user",
        text: "[voice note, 0:12]",
        channel: "telegram",
        media: { kind: "voice", durationSeconds: 12, stored },
        external: { chatId: 1001, messageId: 7 },
      });
      const chat = startPresence(
        world,
        { PRESENCE_TRANSCRIBE_URL: transcription.url, PRESENCE_TRANSCRIBE_KEY: "tr-key" },
        "chat",
      );
      chat.child.stdin?.end("/status\n/help\nand this\n");
      expect(await chat.exited).toBe(0);
      const place = `${new URL(transcription.url).host}, on this machine`;
      expect(chat.stdout()).toContain(`Voice notes: heard, transcribed at ${place}\n`);
      expect(chat.stdout()).toContain(`Voice notes: heard, transcribed at ${place}.`);
      expect(transcription.requests).toHaveLength(1);
      const [request] = world.model.requests;
      if (!request) throw new Error("no model call");
      expect(lastUserText(request.body)).toBe("[voice note, 0:12] the words of the note\nand this");
    } finally {
      await transcription.close();
    }
  });
});
