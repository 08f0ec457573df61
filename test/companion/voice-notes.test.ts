import { mkdir, readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type Companion, createCompanion, pendingMessages } from "../../src/companion/companion.ts";
import { openMind } from "../../src/companion/mind-document.ts";
import { HOW_TO_HEAR, settingLine, UNHEARD_REPLY } from "../../src/companion/voice-notes.ts";
import { SettableClock, VirtualTimers } from "../../src/core/clock.ts";
import { createLogger } from "../../src/core/log.ts";
import type { Media } from "../../src/core/message.ts";
import type { DownloadedSound, IncomingInput, OutgoingMessage } from "../../src/core/port.ts";
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
  /** Every wait of the companion and the transcription client: nothing fires until advanced. */
  virtual: VirtualTimers;
  log: MessageLog;
  dataDir: string;
  sent: OutgoingMessage[];
  /** The process log as written (JSON lines). */
  processLog(): string;
}

const open: { companion: Companion; virtual: VirtualTimers; clock: SettableClock; close(): Promise<void> }[] =
  [];

afterEach(async () => {
  for (const h of open.splice(0)) {
    // A companion left listening (a process that "died") is let go at close's bound, in virtual time.
    const closing = h.companion.close();
    await h.virtual.advanceTo(new Date(h.clock.now().getTime() + CLOSE_TIMEOUT_MS));
    await closing;
    await h.close();
  }
});

const CLOSE_TIMEOUT_MS = 2_000;

async function harness(
  options: {
    /** A transcription service is set up (default), or not. */
    hearing?: boolean;
    /** Another transcriber than the client over the fake (a process that dies while it listens). */
    transcriber?: Transcriber;
    dataDir?: string;
    clock?: SettableClock;
    transcription?: TranscriptionApiFake;
    soundKeepDays?: number;
  } = {},
): Promise<Harness> {
  const clock = options.clock ?? new SettableClock(START);
  const virtual = new VirtualTimers(clock);
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
            timeoutMsPerMinute: 60_000,
          },
          { timers: virtual },
        ));
  const companion = createCompanion({
    clock,
    timers: virtual,
    core,
    model,
    log,
    mind: await openMind(dataDir, clock),
    notes: new NotesStore({ dataDir }),
    files: new SentFiles({ dataDir }),
    trace: new Trace({ dataDir, clock }),
    llm: new ModelClient(model, { clock }),
    ...(transcriber ? { transcriber } : {}),
    soundKeepDays: options.soundKeepDays ?? 30,
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
    options: { retryDelaysMs: [60_000], closeTimeoutMs: CLOSE_TIMEOUT_MS },
  });
  open.push({
    companion,
    virtual,
    clock,
    close: async () => {
      await api.close();
      await transcription.close();
    },
  });
  return {
    companion,
    api,
    transcription,
    clock,
    virtual,
    log,
    dataDir,
    sent,
    processLog: () => lines.join(""),
  };
}

/** A sound as the Telegram channel hands it over when voice notes are heard: logged with its label, then downloaded. */
function voiceNote(
  messageId: number,
  options: {
    seconds?: number;
    caption?: string;
    kind?: Media["kind"];
    format?: SoundFormat;
    /** The channel's download; by default it brings OGG at once. */
    download?: () => Promise<DownloadedSound>;
  } = {},
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
    sound: {
      name: `telegram-1001-${messageId}`,
      format: options.format ?? "ogg",
      download: options.download ?? (async () => ({ bytes: OGG })),
    },
  };
}

/** A download that waits until `release()` is called (a large note on a slow line), or forever. */
function heldDownload(): { download: () => Promise<DownloadedSound>; release(): void } {
  let release = () => {};
  const arrived = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    download: async () => {
      await arrived;
      return { bytes: OGG };
    },
    release: () => release(),
  };
}

const NO_BODY = { model: "", max_tokens: 0, messages: [] };

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
    expect(logged?.media?.downloading).toBeUndefined();
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
    expect(lastUserText(h.api.requests[0]?.body ?? NO_BODY)).toBe(
      `Quick update on today:\n[voice note, 0:42; caption: the interview] ${WORDS}\nwhat do you think?`,
    );
    expect(h.sent).toHaveLength(1);
    expect(pendingMessages(h.log.recent(), h.clock.now())).toEqual([]);
  });

  it("a round video note goes as MP4; one a service without video refuses is answered saying so", async () => {
    const h = await harness({ transcription: await startTranscriptionFake({ video: false }) });
    const note = await h.companion.receive(voiceNote(3, { kind: "video", format: "mp4", seconds: 12 }));
    await h.companion.reply();
    expect(h.transcription.requests[0]).toMatchObject({ fileName: "sound.mp4", contentType: "video/mp4" });
    expect(h.sent.map((m) => m.text)).toEqual([
      "The transcription service I listen with doesn't take video notes, so I didn't hear that one. Could you send it as a voice note, or type it?",
    ]);
    expect((await h.log.get(note.id))?.text).toBe(
      "[video note, 0:12 — not heard: the transcription service does not take video notes]",
    );
    expect(h.api.requests).toHaveLength(0);
  });

  it("keeps a caption edited while it is transcribed: the words are written onto the entry as it is then", async () => {
    let listening = false;
    let answer = (_words: string) => {};
    const slow: Transcriber = {
      transcribe: () =>
        new Promise<string>((resolve) => {
          listening = true;
          answer = resolve;
        }),
    };
    const h = await harness({ transcriber: slow });
    const note = await h.companion.receive(voiceNote(4, { caption: "for you" }));
    const replying = h.companion.reply();
    await vi.waitFor(() => expect(listening).toBe(true));
    // What the Telegram channel writes for the edit of a note not heard yet: its caption changed.
    const before = await h.log.get(note.id);
    if (!before?.media) throw new Error("no note logged");
    const media: Media = { ...before.media, caption: "for you, Ada" };
    await h.companion.receiveEdit(
      "telegram",
      { chatId: 1001, messageId: 4 },
      { text: unheardSoundText(media), editedAt: h.clock.now().toISOString(), media },
    );
    answer(WORDS);
    expect(await replying).toMatchObject({ status: "sent" });
    expect(await h.log.get(note.id)).toMatchObject({
      text: WORDS,
      media: { kind: "voice", caption: "for you, Ada", transcribed: true },
    });
    expect(lastUserText(h.api.requests[0]?.body ?? NO_BODY)).toBe(
      `[voice note, 0:42; caption: for you, Ada] ${WORDS}`,
    );
  });
});

describe("a voice note's sound, downloaded after it is logged", () => {
  it("is logged at once, naming where its sound goes, and the reply waits for the download", async () => {
    const h = await harness();
    const slow = heldDownload();
    const note = await h.companion.receive(voiceNote(5, { download: slow.download }));
    expect(await h.log.get(note.id)).toMatchObject({
      text: "[voice note, 0:42]",
      media: { kind: "voice", stored: "files/telegram-1001-5.ogg", downloading: true },
    });
    // The next message is logged without waiting for the sound.
    await h.companion.receive(said("and one more thing"));
    const replying = h.companion.reply();
    await new Promise((r) => setImmediate(r));
    expect(h.transcription.requests).toHaveLength(0);
    slow.release();
    expect(await replying).toMatchObject({ status: "sent" });
    expect(lastUserText(h.api.requests[0]?.body ?? NO_BODY)).toBe(
      `[voice note, 0:42] ${WORDS}\nand one more thing`,
    );
    expect((await h.log.get(note.id))?.media?.downloading).toBeUndefined();
    expect(await readdir(join(h.dataDir, "files"))).toEqual(["telegram-1001-5.ogg"]);
  });

  it("says why when the download fails or what arrives is too large, with nothing kept", async () => {
    const h = await harness();
    const failed = await h.companion.receive(
      voiceNote(6, { download: async () => ({ notHeard: "download" }) }),
    );
    const large = await h.companion.receive(voiceNote(7, { download: async () => ({ notHeard: "size" }) }));
    const broken = await h.companion.receive(
      voiceNote(8, {
        download: async () => {
          throw new Error("https://api.telegram.org/file/bot123:secret/voice.oga refused");
        },
      }),
    );
    expect(await h.companion.reply()).toMatchObject({ status: "unheard" });
    expect((await h.log.get(failed.id))?.media?.notHeard).toBe("download");
    expect((await h.log.get(large.id))?.media?.notHeard).toBe("size");
    expect((await h.log.get(broken.id))?.text).toBe(
      "[voice note, 0:42 — not heard: it could not be downloaded]",
    );
    expect(h.transcription.requests).toHaveLength(0);
    expect(await readdir(join(h.dataDir, "files")).catch(() => [])).toEqual([]);
    expect(h.processLog()).not.toContain("secret");
  });

  it("cut off by a crash, it is answered after the restart as not downloaded, once, with no model call", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    const first = await harness({ dataDir, clock });
    const note = await first.companion.receive(voiceNote(9, { download: heldDownload().download }));

    const second = await harness({ dataDir, clock });
    await second.companion.recover();
    expect(second.sent.map((m) => m.text)).toEqual([
      "I couldn't listen to that one just now. Could you type it for me?",
    ]);
    expect(await second.log.get(note.id)).toMatchObject({
      text: "[voice note, 0:42 — not heard: it could not be downloaded]",
      media: { notHeard: "download" },
    });
    expect((await second.log.get(note.id))?.media?.downloading).toBeUndefined();
    expect(second.transcription.requests).toHaveLength(0);
    expect(second.api.requests).toHaveLength(0);
    expect(second.processLog()).toContain("presence stopped while downloading it");
  });

  it("kept just before a crash cut off its entry's update, it is heard after the restart", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    const first = await harness({ dataDir, clock });
    const note = await first.companion.receive(voiceNote(10, { download: heldDownload().download }));
    await new SentFiles({ dataDir }).keep("telegram-1001-10", "ogg", OGG, clock.now());

    const second = await harness({ dataDir, clock });
    await second.companion.recover();
    expect(second.sent.map((m) => m.text)).toEqual([`You said: [voice note, 0:42] ${WORDS}`]);
    expect((await second.log.get(note.id))?.media).not.toHaveProperty("downloading");
  });
});

describe("a voice note that cannot be heard", () => {
  const justNow = "I couldn't listen to that one just now. Could you type it for me?";
  const cases = [
    { what: "the service fails (500)", fault: "500", reason: "failed", says: justNow },
    {
      what: "the service refuses it (400)",
      fault: "400",
      reason: "refused",
      says: "The transcription service turned that one away, so I couldn't listen to it. Could you type it for me?",
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
      says: `${justNow}\n\n${settingLine("PRESENCE_TRANSCRIBE_TIMEOUT_MS", "timeout")}`,
    },
    {
      what: "the service stops half-way through its answer",
      fault: "stall",
      reason: "timeout",
      says: `${justNow}\n\n${settingLine("PRESENCE_TRANSCRIBE_TIMEOUT_MS", "timeout")}`,
    },
    {
      what: "the service is down",
      fault: "down",
      reason: "unreachable",
      says: `${justNow}\n\n${settingLine("PRESENCE_TRANSCRIBE_URL", "unreachable")}`,
    },
  ] as const;

  for (const { what, fault, reason, says } of cases) {
    it(`on its own, when ${what}: one short line asking to type it, no model call, the note answered`, async () => {
      const h = await harness();
      if (fault === "down") await h.transcription.down();
      else h.transcription.failNext(fault);
      const note = await h.companion.receive(voiceNote(11));
      const replying = h.companion.reply();
      if (fault === "hang" || fault === "stall") {
        // A 0:42 note has a minute (PRESENCE_TRANSCRIBE_TIMEOUT_MS), in virtual time.
        await vi.waitFor(() => expect(h.transcription.requests).toHaveLength(1));
        await h.virtual.advanceTo(new Date(h.clock.now().getTime() + 59_999));
        await new Promise((r) => setImmediate(r));
        expect(h.sent).toEqual([]);
        await h.virtual.advanceTo(new Date(h.clock.now().getTime() + 1));
      }
      expect(await replying).toMatchObject({ status: "unheard", answered: [note.id] });
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
    await h.companion.receive(voiceNote(12));
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

  it("a failure that points at a setting names it, once a day, read from the log across a restart", async () => {
    const dataDir = await tempDataDir();
    const clock = new SettableClock(START);
    const refused =
      "The transcription service turned that one away, so I couldn't listen to it. Could you type it for me?";
    const keyLine = settingLine("PRESENCE_TRANSCRIBE_KEY", "refused");
    expect(keyLine).toContain("PRESENCE_TRANSCRIBE_KEY");
    const first = await harness({ dataDir, clock });
    first.transcription.failNext("401", 2);
    const note = await first.companion.receive(voiceNote(13));
    await first.companion.reply();
    clock.advanceMinutes(60);
    await first.companion.receive(voiceNote(14));
    await first.companion.reply();
    expect(first.sent.map((m) => m.text)).toEqual([`${refused}\n\n${keyLine}`, refused]);
    expect((await first.log.get(note.id))?.media).toMatchObject({
      notHeard: "refused",
      notHeardSetting: "PRESENCE_TRANSCRIBE_KEY",
    });

    const second = await harness({ dataDir, clock });
    second.transcription.failNext("401", 2);
    await second.companion.receive(voiceNote(15));
    await second.companion.reply();
    clock.advanceMinutes(24 * 60);
    await second.companion.receive(voiceNote(16));
    await second.companion.reply();
    expect(second.sent.map((m) => m.text)).toEqual([refused, `${refused}\n\n${keyLine}`]);
    expect(second.api.requests).toHaveLength(0);
  });

  it("beside typed words, the model answers those and is told the note could not be heard", async () => {
    const h = await harness();
    h.transcription.failNext("500");
    await h.companion.receive(said("are you there?"));
    await h.companion.receive(voiceNote(17));
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
    expect(h.api.requests).toHaveLength(1);
    expect(lastUserText(h.api.requests[0]?.body ?? NO_BODY)).toBe(
      "are you there?\n[voice note, 0:42 — not heard: the transcription service failed]",
    );
    expect(h.sent.map((m) => m.kind)).toEqual(["reply"]);
  });

  it("with a caption, lets the model answer the caption", async () => {
    const h = await harness();
    h.transcription.failNext("500");
    await h.companion.receive(voiceNote(18, { caption: "sorry, on the bus" }));
    await h.companion.reply();
    expect(lastUserText(h.api.requests[0]?.body ?? NO_BODY)).toBe(
      "[voice note, 0:42 — not heard: the transcription service failed] sorry, on the bus",
    );
  });

  it("a sound that cannot be read back is marked not heard, and the reply goes on", async () => {
    const h = await harness();
    const note = await h.companion.receive(voiceNote(19));
    await h.companion.idle();
    // Where its file was, something no read can take (a disk gone bad, a folder in the way).
    const file = join(h.dataDir, "files", "telegram-1001-19.ogg");
    await rm(file);
    await mkdir(file);
    await h.companion.receive(said("did you get that?"));
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
    expect(lastUserText(h.api.requests[0]?.body ?? NO_BODY)).toBe(
      "[voice note, 0:42 — not heard: its kept sound was deleted or could not be read before it was transcribed]\ndid you get that?",
    );
    expect((await h.log.get(note.id))?.media?.notHeard).toBe("gone");
    const line = h
      .processLog()
      .split("\n")
      .find((l) => l.includes("could not be read"));
    expect(JSON.parse(line ?? "{}")).toMatchObject({ cause: "unreadable", level: 40 });
    expect(h.transcription.requests).toHaveLength(0);
    // The next turn is not held up by it either.
    await h.companion.receive(said("hello?"));
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
  });

  it("a client that fails unexpectedly marks the note not heard instead of failing every turn", async () => {
    const buggy: Transcriber = {
      transcribe: async () => {
        throw new TypeError("cannot read properties of undefined");
      },
    };
    const h = await harness({ transcriber: buggy });
    const note = await h.companion.receive(voiceNote(20));
    expect(await h.companion.reply()).toMatchObject({ status: "unheard" });
    expect((await h.log.get(note.id))?.media?.notHeard).toBe("failed");
    await h.companion.receive(said("ok, typing it then"));
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
  });
});

describe("a voice note with no transcription service set up", () => {
  it("on its own gets today's honest answer, with how to turn hearing on at most once a day", async () => {
    const h = await harness({ hearing: false });
    await h.companion.receive(voiceNoteNotHeard(21));
    expect(await h.companion.reply()).toMatchObject({ status: "unheard" });
    h.clock.advanceMinutes(60);
    await h.companion.receive(voiceNoteNotHeard(22));
    await h.companion.reply();
    h.clock.advanceMinutes(24 * 60);
    await h.companion.receive(voiceNoteNotHeard(23));
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
    await h.companion.receive(voiceNoteNotHeard(24));
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
    const note = await first.companion.receive(voiceNote(25));
    void first.companion.reply();
    await vi.waitFor(() => expect(listening).toBe(1));
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
    const note = await h.companion.receive(voiceNote(26));
    await h.companion.reply();
    const file = join(h.dataDir, "files", "telegram-1001-26.ogg");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await h.companion.checkins.pause(null);
    h.clock.advanceMinutes(29 * 24 * 60);
    await h.companion.heartbeat();
    expect(await readdir(join(h.dataDir, "files"))).toEqual(["telegram-1001-26.ogg"]);
    h.clock.advanceMinutes(2 * 24 * 60);
    await h.companion.heartbeat();
    expect(await readdir(join(h.dataDir, "files"))).toEqual([]);
    expect((await h.log.get(note.id))?.text).toBe(WORDS);
    expect(h.api.requests).toHaveLength(1);
  });

  it("is not deleted past its keeping time while its message still waits to be heard", async () => {
    const h = await harness({ soundKeepDays: 1 });
    await h.companion.checkins.pause(null);
    await h.companion.receive(voiceNote(27));
    await h.companion.idle();
    h.clock.advanceMinutes(2 * 24 * 60);
    await h.companion.heartbeat();
    expect(await readdir(join(h.dataDir, "files"))).toEqual(["telegram-1001-27.ogg"]);
    expect(await h.companion.reply()).toMatchObject({ status: "sent" });
    expect(h.sent.map((m) => m.text)).toEqual([`You said: [voice note, 0:42] ${WORDS}`]);
    // Heard, it is kept like any other from then on: past its time, the next sweep (heartbeats
    // look at most hourly) deletes it.
    await h.companion.heartbeat();
    expect(await readdir(join(h.dataDir, "files"))).toEqual(["telegram-1001-27.ogg"]);
    h.clock.advanceMinutes(60);
    await h.companion.heartbeat();
    expect(await readdir(join(h.dataDir, "files"))).toEqual([]);
  });

  it("is in /export, deleted by /forget of words it holds (the log keeps them), and by /wipe", async () => {
    const h = await harness();
    await h.companion.receive(voiceNote(28));
    await h.companion.reply();
    const exported = (await h.companion.rights.exportAll()) as { otherFiles: unknown[] };
    expect(exported.otherFiles).toContainEqual({
      file: "files/telegram-1001-28.ogg",
      kind: "sound",
      base64: OGG.toString("base64"),
    });
    const forgotten = await h.companion.rights.forgetText("a second round");
    expect(forgotten.copies.otherFiles).toBe(1);
    expect(await readdir(join(h.dataDir, "files"))).toEqual([]);
    expect(h.log.recent().some((m) => m.text === WORDS)).toBe(true);

    await h.companion.receive(voiceNote(29));
    await h.companion.reply();
    expect(await readdir(join(h.dataDir, "files"))).toEqual(["telegram-1001-29.ogg"]);
    await h.companion.rights.wipeAll();
    expect(await readdir(join(h.dataDir, "files")).catch(() => [])).toEqual([]);
  });

  it("/wipe waits for a sound still downloading, so nothing of it is kept after", async () => {
    const h = await harness();
    const slow = heldDownload();
    await h.companion.receive(voiceNote(30, { download: slow.download }));
    let wiped = false;
    const wiping = h.companion.rights.wipeAll().then(() => {
      wiped = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(wiped).toBe(false);
    slow.release();
    await wiping;
    expect(await readdir(join(h.dataDir, "files")).catch(() => [])).toEqual([]);
    expect(h.log.recent()).toEqual([]);
  });
});
