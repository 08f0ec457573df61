import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HOW_TO_HEAR, UNHEARD_REPLY } from "../../src/companion/voice-notes.ts";
import { systemClock } from "../../src/core/clock.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { lastUserText } from "../../testkit/messages-api.ts";
import { startTranscriptionFake, type TranscriptionApiFake } from "../../testkit/transcription-api.ts";
import { createWorld, OWNER_ID, stopPresence, type World, waitFor } from "./harness.ts";
import { loggedMessages, replyRequests, start } from "./presence-start.ts";

/**
 * Voice notes through the real `presence start` process: real grammY against the Bot API fake
 * (the voice update, getFile, the download), the transcription client against the loopback
 * transcription fake, the real SDK against the Messages API fake.
 */

const WORDS = "Quick one: the flat viewing went great, I think we will take it.";
const OGG = Buffer.from("OggS\u0000\u0002 a voice note from the app");

let world: World;
let transcription: TranscriptionApiFake;

beforeEach(async () => {
  world = await createWorld();
  transcription = await startTranscriptionFake();
  transcription.answer(WORDS);
});

afterEach(async () => {
  await world.close();
  await transcription.close();
});

const hearing = () => ({ PRESENCE_TRANSCRIBE_URL: transcription.url, PRESENCE_TRANSCRIBE_KEY: "tr-key" });

describe("voice notes, end to end", () => {
  it("answers a voice note from its transcript, keeps its sound owner-only, and says in /help that notes are heard", async () => {
    const presence = await start(world, hearing());
    // Checked at start with a lookup that sends no sound.
    expect(transcription.lookups.map((l) => l.path)).toEqual(["/v1/models"]);
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.message(owner, { voice: { duration: 42, bytes: OGG } });
    await world.bot.waitForSent(1, 15_000);
    world.bot.message(owner, { text: "/help" });
    await world.bot.waitForSent(2, 15_000);
    expect(await stopPresence(presence)).toMatchObject({ code: 0 });

    expect(transcription.requests).toHaveLength(1);
    expect(transcription.requests[0]).toMatchObject({
      fileName: "sound.ogg",
      contentType: "audio/ogg",
      bytes: new Uint8Array(OGG),
      model: "whisper-1",
      authorization: "Bearer tr-key",
    });
    expect(transcription.problems).toEqual([]);
    const [request] = world.model.requests;
    if (!request) throw new Error("no model call");
    expect(lastUserText(request.body)).toBe(`[voice note, 0:42] ${WORDS}`);
    expect(world.model.problems).toEqual([]);
    expect(world.bot.sent[0]?.text).toBe("Answer 1.");
    expect(world.bot.sent[1]?.text).toContain(
      `Voice notes: heard, transcribed at ${new URL(transcription.url).host}, on this machine.`,
    );

    const [note] = await loggedMessages(world);
    expect(note).toMatchObject({ role: "user", text: WORDS, media: { kind: "voice", transcribed: true } });
    const kept = await readdir(join(world.dataDir, "files"));
    expect(kept).toEqual([expect.stringMatching(/^telegram-1001-\d+\.ogg$/)]);
    expect((await stat(join(world.dataDir, "files", kept[0] as string))).mode & 0o777).toBe(0o600);
    // The process log says it was heard, never what was said.
    expect(presence.stdout()).toContain("voice note transcribed");
    expect(presence.stdout()).not.toContain("flat viewing");
  });

  it("asks to type a voice note the service could not hear, with no model call, and names the cause in the log", async () => {
    const presence = await start(world, hearing());
    transcription.failNext("500");
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { voice: { duration: 8, bytes: OGG } });
    await world.bot.waitForSent(1, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    await stopPresence(presence);
    expect(world.bot.sent.map((s) => s.text)).toEqual([
      "I couldn't listen to that one just now. Could you type it for me?",
    ]);
    expect(replyRequests(world)).toBe(0);
    const line = presence
      .stdout()
      .split("\n")
      .find((l) => l.includes("voice note not heard"));
    expect(JSON.parse(line ?? "{}")).toMatchObject({ cause: "status", status: 500 });
  });

  it("without a transcription service, answers a voice note honestly and says how to turn hearing on", async () => {
    const presence = await start(world);
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { voice: { duration: 8, bytes: OGG } });
    await world.bot.waitForSent(1, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    await stopPresence(presence);
    expect(world.bot.sent.map((s) => s.text)).toEqual([`${UNHEARD_REPLY}\n\n${HOW_TO_HEAR}`]);
    expect(replyRequests(world)).toBe(0);
    expect(transcription.lookups).toEqual([]);
    expect(world.bot.calls.some((c) => c.method === "getFile")).toBe(false);
    expect(presence.stdout()).toContain("voice notes are not heard");
  });

  it("logs a voice note as it arrives and the next message too, while its sound downloads, and answers both in one reply", async () => {
    const presence = await start(world, hearing());
    const release = world.bot.holdDownloads();
    const owner = world.bot.user(OWNER_ID, "Ada");
    world.bot.message(owner, { voice: { duration: 42, bytes: OGG } });
    world.bot.message(owner, { text: "and the kitchen is huge" });
    await waitFor(
      async () => (await loggedMessages(world)).length === 2,
      15_000,
      () => presence.stdout(),
    );
    expect(world.bot.downloads).toHaveLength(1);
    expect((await loggedMessages(world)).map((m) => [m.text, m.media?.downloading])).toEqual([
      ["[voice note, 0:42]", true],
      ["and the kitchen is huge", undefined],
    ]);
    release();
    await world.bot.waitForSent(1, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(await stopPresence(presence)).toMatchObject({ code: 0 });
    expect(world.bot.sent.map((m) => m.text)).toEqual(["Answer 1."]);
    expect(replyRequests(world)).toBe(1);
    expect(lastUserText(world.model.requests[0]?.body ?? { model: "", max_tokens: 0, messages: [] })).toBe(
      `[voice note, 0:42] ${WORDS}\nand the kitchen is huge`,
    );
  });

  it("after a crash cut off a download, the note delivered again is not downloaded again, and is answered as not heard", async () => {
    const owner = world.bot.user(OWNER_ID, "Ada");
    const replayed = world.bot.message(owner, { voice: { duration: 9, bytes: OGG } });
    // What the crashed process had logged: the note, its sound on its way.
    const log = await MessageLog.open({ dataDir: world.dataDir, clock: systemClock, timeZone: "UTC" });
    const note = await log.append({
      role: "user",
      text: "[voice note, 0:09]",
      channel: "telegram",
      media: {
        kind: "voice",
        durationSeconds: 9,
        stored: `files/telegram-${OWNER_ID}-${replayed.messageId}.ogg`,
        downloading: true,
      },
      external: { chatId: OWNER_ID, messageId: replayed.messageId, updateId: replayed.updateId },
    });
    const presence = await start(world, hearing());
    await world.bot.waitForSent(1, 15_000);
    await waitFor(() => world.bot.pendingUpdates() === 0, 15_000);
    await new Promise((r) => setTimeout(r, 300));
    await stopPresence(presence);
    expect(world.bot.sent.map((s) => s.text)).toEqual([
      "I couldn't listen to that one just now. Could you type it for me?",
    ]);
    expect(world.bot.calls.some((c) => c.method === "getFile")).toBe(false);
    expect(world.bot.downloads).toEqual([]);
    expect(await readdir(join(world.dataDir, "files")).catch(() => [])).toEqual([]);
    expect(transcription.requests).toEqual([]);
    expect(replyRequests(world)).toBe(0);
    const logged = (await loggedMessages(world)).find((m) => m.id === note.id);
    expect(logged?.media).toMatchObject({ notHeard: "download" });
  });

  it("says in /status what the start check found wrong with the service", async () => {
    await transcription.down();
    const presence = await start(world, hearing());
    world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "/status" });
    await world.bot.waitForSent(1, 15_000);
    await stopPresence(presence);
    expect(world.bot.sent[0]?.text).toContain(
      `Voice notes: heard, transcribed at ${new URL(transcription.url).host}, on this machine, but the service did not answer when presence started (check PRESENCE_TRANSCRIBE_URL)`,
    );
    expect(presence.stdout()).toContain("starting anyway");
  });
});
