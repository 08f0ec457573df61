import { describe, expect, it } from "vitest";
import type { Media } from "../../src/core/message.ts";
import {
  awaitsHearing,
  notHeardNote,
  playerDuration,
  soundFormatOfFile,
  soundLabel,
  unheardSoundText,
  wasNotHeard,
} from "../../src/core/sound.ts";
import { messageAsRead } from "../../src/core/text.ts";

describe("a sound's label", () => {
  it("says its length the way a player shows it", () => {
    expect(playerDuration(0)).toBe("0:00");
    expect(playerDuration(42)).toBe("0:42");
    expect(playerDuration(185)).toBe("3:05");
    expect(playerDuration(600)).toBe("10:00");
    expect(playerDuration(3723)).toBe("1:02:03");
  });

  it("names a voice note, an audio file with its title, and a round video note", () => {
    expect(soundLabel({ kind: "voice", durationSeconds: 42 })).toBe("voice note, 0:42");
    expect(soundLabel({ kind: "audio", durationSeconds: 173, fileName: "Nina – Demo" })).toBe(
      "audio: Nina – Demo, 2:53",
    );
    expect(soundLabel({ kind: "audio" })).toBe("audio");
    expect(soundLabel({ kind: "video", durationSeconds: 12 })).toBe("video note, 0:12");
  });

  it("says in the text why a sound was not heard, before the caption", () => {
    expect(unheardSoundText({ kind: "voice", durationSeconds: 9 })).toBe("[voice note, 0:09]");
    expect(
      unheardSoundText({ kind: "voice", durationSeconds: 9, caption: "on the bus", notHeard: "timeout" }),
    ).toBe(`[voice note, 0:09 — ${notHeardNote("timeout")}] on the bus`);
  });
});

describe("a sound as the model reads it", () => {
  it("once heard, is its transcript after its label, a caption said as one", () => {
    const media: Media = { kind: "voice", durationSeconds: 42, transcribed: true, stored: "files/t-1-2.ogg" };
    expect(messageAsRead({ text: "I think it went well", media })).toBe(
      "[voice note, 0:42] I think it went well",
    );
    expect(
      messageAsRead({ text: "I think it went well", media: { ...media, caption: "the interview" } }),
    ).toBe("[voice note, 0:42; caption: the interview] I think it went well");
  });

  it("not heard, is its text as logged: the label says why, the caption once", () => {
    const media: Media = { kind: "voice", durationSeconds: 9, notHeard: "failed", caption: "listen" };
    expect(messageAsRead({ text: unheardSoundText(media), media })).toBe(
      "[voice note, 0:09 — not heard: the transcription service failed] listen",
    );
  });
});

describe("which sounds wait to be heard", () => {
  it("is a kept sound neither transcribed nor marked not heard; a video that is no video note never is", () => {
    const kept: Media = { kind: "voice", durationSeconds: 3, stored: "files/t-1-2.ogg" };
    expect(awaitsHearing(kept)).toBe(true);
    expect(awaitsHearing({ ...kept, transcribed: true })).toBe(false);
    expect(awaitsHearing({ ...kept, notHeard: "timeout" })).toBe(false);
    expect(awaitsHearing({ kind: "voice", durationSeconds: 3 })).toBe(false);
    expect(awaitsHearing({ kind: "video" })).toBe(false);
    expect(awaitsHearing({ kind: "document", stored: "files/t-1-3.pdf" })).toBe(false);
    expect(wasNotHeard({ ...kept, notHeard: "off" })).toBe(true);
    expect(wasNotHeard(kept)).toBe(false);
    expect(wasNotHeard({ kind: "document", notRead: "size" })).toBe(false);
  });

  it("knows a kept file's format by its ending, and a document as none", () => {
    expect(soundFormatOfFile("telegram-1-2.ogg")).toBe("ogg");
    expect(soundFormatOfFile("files/telegram-1-2.mp4")).toBe("mp4");
    expect(soundFormatOfFile("telegram-1-2.pdf")).toBe(null);
    expect(soundFormatOfFile("telegram-1-2.oga")).toBe(null);
  });
});
