import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Companion, createCompanion, pendingMessages } from "../../src/companion/companion.ts";
import { openMind } from "../../src/companion/mind-document.ts";
import { HOW_TO_HEAR, UNHEARD_REPLY } from "../../src/companion/voice-notes.ts";
import { SettableClock, systemTimers } from "../../src/core/clock.ts";
import { createLogger } from "../../src/core/log.ts";
import type { Media } from "../../src/core/message.ts";
import type { IncomingInput, OutgoingMessage } from "../../src/core/port.ts";
import { type SoundFormat, unheardSoundText } from "../../src/core/sound.ts";
import { ModelClient } from "../../src/model/llm.ts";
import { personaFromDir } from "../../src/model/persona.ts";
import { type Transcriber, TranscriptionClient } from "../../src/model/transcription.ts";
import { MessageLog } from "../../src/store/messages.ts";
import { NotesStore } from "../../src/store/notes.ts";
import { SentFiles } from "../../src/store/sent-files.ts";
import { Trace } from "../../src/store/trace.ts";
import {
  fakeModelConfig,
  lastUserText,
  type MessagesApiFake,
  startMessagesApiFake,
  systemText,
  textReply,
} from "../../testkit/messages-api.ts";
import { startTranscriptionFake, type TranscriptionApiFake } from "../../testkit/transcription-api.ts";
import { tempDataDir } from "../store/helpers.ts";
import { testCoreConfig } from "../support/core-config.ts";

/** Wednesday 4 March 2026, 10:00 in Berlin. */
const START = "2026-03-04T09:00:00.000Z";
const WORDS = "I think the interview went well, they want a second round.";
const OGG = Buffer.from("OggS\u0000\u0002 an opus voice note");

interface Harness {
  companion: Companion;
  api: MessagesApiFake;
  transcription: TranscriptionApiFake;
  clock: SettableClock;
  log: MessageLog;
  dataDir: string;
  sent: OutgoingMessage[];
  /** The process log as written (JSON lines). */
  processLog(): string;
}

const open: { companion: Companion; close(): Promise<void> }[] = [];

afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.companion.close();
    await h.close();
  }
});

async function harness(
  options: {
    /** A transcription service is set up (default), or not. */
    hearing?: boolean;
    /** Another transcriber than the client over the fake (a process that dies while it listens). */
    transcriber?: Transcriber;
    timeoutMsPerMinute?: number;
    dataDir?: string;
    clock?: SettableClock;
    transcription?: TranscriptionApiFake;
    soundKeepDays?: number;
  } = {},
): Promise<Harness> {
  const clock = options.clock ?? new SettableClock(START);
  const api = await startMessagesApiFake({ clock });
  api.setHandler((body) => textReply(`You said: ${lastUserText(body)}`));
  const transcription = options.transcription ?? (await startTranscriptionFake());
  transcription.answer(WORDS);
  const dataDir = options.dataDir ?? (await tempDataDir());
  const core = testCoreConfig(dataDir);
  const model = fakeModelConfig(api, { reflectMode: "off" });
  const log = await MessageLog.open({ dataDir, clock, timeZone: core.timezone });
  const lines: string[] = [];
  const logger = createLogger("info", false, { write: (line: string) => void lines.push(line) });
  const sent: OutgoingMessage[] = [];
  const transcriber =
    options.transcriber ??
    (options.hearing === false
      ? undefined
      : new TranscriptionClient(
          {
            baseUrl: transcription.url,
            apiKey: "tr-key",
            model: "whisper-1",
            language: undefined,
            timeoutMsPerMinute: options.timeoutMsPerMinute ?? 60_000,
          },
          { timers: systemTimers },
        ));
  const companion = createCompanion({
    clock,
    timers: systemTimers,
    core,
    model,
    log,
    mind: await openMind(dataDir, clock),
    notes: new NotesStore({ dataDir }),
    files: new SentFiles({ dataDir }),
    trace: new Trace({ dataDir, clock }),
    llm: new ModelClient(model, { clock }),
    ...(transcriber ? { transcriber } : {}),
    ...(options.soundKeepDays ? { soundKeepDays: options.soundKeepDays } : {}),
    port: {
      async send(message) {
        sent.push(message);
        return { external: { chatId: 1001, messageId: 900 + sent.length } };
      },
      async react() {
        return {};
      },
    },
    persona: personaFromDir(),
    logger,
    options: { retryDelaysMs: [60_000], closeTimeoutMs: 2_000 },
  });
  open.push({
    companion,
    close: async () => {
      await api.close();
      await transcription.close();
    },
  });
  return { companion, api, transcription, clock, log, dataDir, sent, processLog: () => lines.join("") };
}

/** A sound as the Telegram channel hands it over when voice notes are heard: logged with its label, its bytes to keep. */
function voiceNote(
  messageId: number,
  options: { seconds?: number; caption?: string; kind?: Media["kind"]; format?: SoundFormat } = {},
): IncomingInput {
  const media: Media = {
    kind: options.kind ?? "voice",
    durationSeconds: options.seconds ?? 42,
    ...(options.caption ? { caption: options.caption } : {}),
  };
  return {
    text: unheardSoundText(media),
    channel: "telegram",
    media,
    external: { chatId: 1001, messageId },
    sound: { name: `telegram-1001-${messageId}`, format: options.format ?? "ogg", bytes: OGG },
  };
}

/** A voice note as the channel logs it when no transcription service is set up. */
function voiceNoteNotHeard(messageId: number): IncomingInput {
  const media: Media = { kind: "voice", durationSeconds: 9, notHeard: "off" };
  return { text: unheardSoundText(media), channel: "telegram", media, external: { chatId: 1001, messageId } };
}

const said = (text: string): IncomingInput => ({ text, channel: "telegram" });

describe("a voice note, heard", () => {
  it("is answered from its transcript: the model reads [voice note, 0:42] and the words, which are the note's text in the log", async () => {
    const h = await harness();
    const note = await h.companion.receive(voiceNote(1));
    expect(note.text).toBe("[voice note, 0:42]");
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
    const [request] = h.api.requests;
    if (!request) throw new Error("no model call");
    expect(lastUserText(request.body)).toBe(`[voice note, 0:42] ${WORDS}`);
    // The protocol says voice notes are heard here, and awareness reads the words as their message.
    expect(systemText(request.body)).toContain("Voice notes are transcribed for you");
    expect(systemText(request.body)).toContain("they want a second round");
    expect(h.sent.map((m) => m.text)).toEqual([`You said: [voice note, 0:42] ${WORDS}`]);
    const logged = await h.log.get(note.id);
    expect(logged).toMatchObject({
      text: WORDS,
      media: { kind: "voice", durationSeconds: 42, transcribed: true, stored: "files/telegram-1001-1.ogg" },
    });
    // The words are what they said, not an edit of theirs.
    expect(logged?.editedAt).toBeUndefined();
    expect(h.transcription.requests).toHaveLength(1);
    expect(h.transcription.requests[0]).toMatchObject({ fileName: "sound.ogg", contentType: "audio/ogg" });
    expect(h.transcription.problems).toEqual([]);
    expect(h.processLog()).toContain("voice note transcribed");
    expect(h.processLog()).not.toContain("interview");
  });

  it("is answered together with what the person typed in the same burst, in one reply", async () => {
    const h = await harness();
    await h.companion.receive(said("Quick update on today:"));
    await h.companion.receive(voiceNote(2, { caption: "the interview" }));
    await h.companion.receive(said("what do you think?"));
    await h.companion.reply();
    expect(h.api.requests).toHaveLength(1);
    expect(lastUserText(h.api.requests[0]?.body ?? { model: "", max_tokens: 0, messages: [] })).toBe(
      `Quick update on today:\n[voice note, 0:42; caption: the interview] ${WORDS}\nwhat do you think?`,
    );
    expect(h.sent).toHaveLength(1);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("a round video note goes as MP4; one the service does not take is answered honestly", async () => {
    const h = await harness({ transcription: await startTranscriptionFake({ video: false }) });
    await h.companion.receive(voiceNote(3, { kind: "video", format: "mp4", seconds: 12 }));
    await h.companion.reply();
    expect(h.transcription.requests[0]).toMatchObject({ fileName: "sound.mp4", contentType: "video/mp4" });
    expect(h.sent.map((m) => m.text)).toEqual([
      "I couldn't listen to that one just now. Could you type it for me?",
    ]);
    expect(h.api.requests).toHaveLength(0);
  });
});

describe("a voice note that cannot be heard", () => {
  const cases = [
    {
      what: "the service fails (500)",
      fault: "500",
      reason: "failed",
      says: "I couldn't listen to that one just now. Could you type it for me?",
    },
    {
      what: "the service refuses it (400)",
      fault: "400",
      reason: "refused",
      says: "I couldn't listen to that one just now. Could you type it for me?",
    },
    {
      what: "it is too large for the service (413)",
      fault: "413",
      reason: "size",
      says: "That one is too long for me to listen to (I can take up to 10 minutes and 20 MB). Could you type it, or send it in shorter parts?",
    },
    {
      what: "the service makes out no words",
      fault: "empty",
      reason: "empty",
      says: "I couldn't make out any words in that one. Could you type it for me?",
    },
    {
      what: "the service does not answer in time",
      fault: "hang",
      reason: "timeout",
      says: "I couldn't listen to that one just now. Could you type it for me?",
    },
    {
      what: "the service is down",
      fault: "down",
      reason: "unreachable",
      says: "I couldn't listen to that one just now. Could you type it for me?",
    },
  ] as const;

  for (const { what, fault, reason, says } of cases) {
    it(`on its own, when ${what}: one short line asking to type it, no model call, the note answered`, async () => {
      const h = await harness({ timeoutMsPerMinute: 300 });
      if (fault === "down") await h.transcription.down();
      else h.transcription.failNext(fault);
      const note = await h.companion.receive(voiceNote(4));
      expect(await h.companion.reply()).toMatchObject({ status: "unheard", answered: [note.id] });
      expect(h.sent).toEqual([{ text: says, kind: "notice", replyTo: note.id }]);
      expect(h.api.requests).toHaveLength(0);
      const logged = await h.log.get(note.id);
      expect(logged?.media?.notHeard).toBe(reason);
      expect(logged?.text).toMatch(/^\[voice note, 0:42 — not heard: /);
      expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
      // Answered once: no second try, no second line.
      expect(await h.companion.reply()).toEqual({ status: "nothing-pending" });
      expect(h.sent).toHaveLength(1);
      expect(h.transcription.requests.length).toBeLessThanOrEqual(1);
      expect(h.processLog()).toContain("voice note not heard");
      expect(h.processLog()).not.toContain("OggS");
    });
  }

  it("the process log names the cause, and the setting to look at", async () => {
    const h = await harness();
    h.transcription.failNext("401");
    await h.companion.receive(voiceNote(5));
    await h.companion.reply();
    const line = JSON.parse(
      h
        .processLog()
        .split("\n")
        .find((l) => l.includes("voice note not heard")) ?? "{}",
    );
    expect(line).toMatchObject({
      cause: "status",
      status: 401,
      setting: "PRESENCE_TRANSCRIBE_KEY",
      level: 40,
    });
  });

  it("beside typed words, the model answers those and is told the note could not be heard", async () => {
    const h = await harness();
    h.transcription.failNext("500");
    await h.companion.receive(said("are you there?"));
    await h.companion.receive(voiceNote(6));
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
    expect(h.api.requests).toHaveLength(1);
    expect(lastUserText(h.api.requests[0]?.body ?? { model: "", max_tokens: 0, messages: [] })).toBe(
      "are you there?\n[voice note, 0:42 — not heard: the transcription service failed]",
    );
    expect(h.sent.map((m) => m.kind)).toEqual(["reply"]);
  });

  it("with a caption, lets the model answer the caption", async () => {
    const h = await harness();
    h.transcription.failNext("500");
    await h.companion.receive(voiceNote(7, { caption: "sorry, on the bus" }));
    await h.companion.reply();
    expect(lastUserText(h.api.requests[0]?.body ?? { model: "", max_tokens: 0, messages: [] })).toBe(
      "[voice note, 0:42 — not heard: the transcription service failed] sorry, on the bus",
    );
  });
});

describe("a voice note with no transcription service set up", () => {
  it("on its own gets today's honest answer, with how to turn hearing on at most once a day", async () => {
    const h = await harness({ hearing: false });
    await h.companion.receive(voiceNoteNotHeard(8));
    expect(await h.companion.reply()).toMatchObject({ status: "unheard" });
    h.clock.advanceMinutes(60);
    await h.companion.receive(voiceNoteNotHeard(9));
    await h.companion.reply();
    h.clock.advanceMinutes(24 * 60);
    await h.companion.receive(voiceNoteNotHeard(10));
    await h.companion.reply();
    expect(h.sent.map((m) => m.text)).toEqual([
      `${UNHEARD_REPLY}\n\n${HOW_TO_HEAR}`,
      UNHEARD_REPLY,
      `${UNHEARD_REPLY}\n\n${HOW_TO_HEAR}`,
    ]);
    expect(h.api.requests).toHaveLength(0);
    expect(h.transcription.requests).toHaveLength(0);
  });

  it("beside typed words goes to the model, whose protocol says voice notes cannot be heard", async () => {
    const h = await harness({ hearing: false });
    await h.companion.receive(said("hello!"));
    await h.companion.receive(voiceNoteNotHeard(11));
    await h.companion.reply();
    const body = h.api.requests[0]?.body;
    if (!body) throw new Error("no model call");
    expect(systemText(body)).toContain("voice notes you cannot hear");
    expect(systemText(body)).not.toContain("Voice notes are transcribed");
    expect(lastUserText(body)).toBe(
      "hello!\n[voice note, 0:09 — not heard: voice notes and audio can't be listened to yet]",
    );
  });
});

describe("one turn, nothing lost", () => {
  it("a crash before the transcript is written transcribes again after the restart, and the reply goes out once", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    let listening = 0;
    // The process dies while the service listens: its transcription never comes back.
    const dies: Transcriber = {
      transcribe: () => {
        listening += 1;
        return new Promise<string>(() => {});
      },
    };
    const first = await harness({ dataDir, clock, transcriber: dies });
    const note = await first.companion.receive(voiceNote(12));
    void first.companion.reply();
    await until(() => listening === 1);
    expect((await first.log.get(note.id))?.text).toBe("[voice note, 0:42]");

    const second = await harness({ dataDir, clock });
    await second.companion.recover();
    expect(second.transcription.requests).toHaveLength(1);
    expect(second.sent.map((m) => m.text)).toEqual([`You said: [voice note, 0:42] ${WORDS}`]);
    expect((await second.log.get(note.id))?.text).toBe(WORDS);

    const third = await harness({ dataDir, clock });
    await third.companion.recover();
    expect(third.transcription.requests).toHaveLength(0);
    expect(third.sent).toEqual([]);
    expect(third.api.requests).toHaveLength(0);
  });
});

describe("the sound of a voice note", () => {
  it("is kept owner-only for its keeping time, then deleted at a heartbeat; its words stay in the log", async () => {
    const h = await harness({ soundKeepDays: 30 });
    const note = await h.companion.receive(voiceNote(13));
    await h.companion.reply();
    const file = join(h.dataDir, "files", "telegram-1001-13.ogg");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await h.companion.checkins.pause(null);
    h.clock.advanceMinutes(29 * 24 * 60);
    await h.companion.heartbeat();
    expect(await readdir(join(h.dataDir, "files"))).toEqual(["telegram-1001-13.ogg"]);
    h.clock.advanceMinutes(2 * 24 * 60);
    await h.companion.heartbeat();
    expect(await readdir(join(h.dataDir, "files"))).toEqual([]);
    expect((await h.log.get(note.id))?.text).toBe(WORDS);
    expect(h.api.requests).toHaveLength(1);
  });

  it("is in /export, deleted by /forget of words it holds (the log keeps them), and by /wipe", async () => {
    const h = await harness();
    await h.companion.receive(voiceNote(14));
    await h.companion.reply();
    const exported = (await h.companion.rights.exportAll()) as { otherFiles: unknown[] };
    expect(exported.otherFiles).toContainEqual({
      file: "files/telegram-1001-14.ogg",
      kind: "sound",
      base64: OGG.toString("base64"),
    });
    const forgotten = await h.companion.rights.forgetText("a second round");
    expect(forgotten.copies.otherFiles).toBe(1);
    expect(await readdir(join(h.dataDir, "files"))).toEqual([]);
    expect(h.log.recent().some((m) => m.text === WORDS)).toBe(true);

    await h.companion.receive(voiceNote(15));
    await h.companion.reply();
    expect(await readdir(join(h.dataDir, "files"))).toEqual(["telegram-1001-15.ogg"]);
    await h.companion.rights.wipeAll();
    expect(await readdir(join(h.dataDir, "files")).catch(() => [])).toEqual([]);
  });
});

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}
