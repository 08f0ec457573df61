import type { Message as TelegramMessage } from "grammy/types";
import { describe, expect, it } from "vitest";
import {
  notHeardBeforeDownload,
  soundFormat,
  soundOf,
  type TelegramSound,
} from "../../../src/channels/telegram/sounds.ts";

const base = { message_id: 1, date: 0, chat: { id: 1, type: "private", first_name: "Ada" } } as const;

describe("which sounds are heard", () => {
  it("sends a voice note as OGG (Telegram's .oga), an audio file by its type or name, a video note as MP4", () => {
    const voice = soundOf({
      ...base,
      voice: { file_id: "v", file_unique_id: "uv", duration: 42, mime_type: "audio/ogg" },
    } as TelegramMessage);
    expect(voice).toEqual({
      kind: "voice",
      fileId: "v",
      fileSize: undefined,
      durationSeconds: 42,
      format: "ogg",
    });
    const audio = soundOf({
      ...base,
      audio: {
        file_id: "a",
        file_unique_id: "ua",
        duration: 190,
        performer: "Nina",
        title: "Demo",
        file_size: 10,
      },
    } as TelegramMessage);
    expect(audio).toMatchObject({ kind: "audio", format: null, title: "Nina – Demo", fileSize: 10 });
    const note = soundOf({
      ...base,
      video_note: { file_id: "n", file_unique_id: "un", length: 384, duration: 12 },
    } as TelegramMessage);
    expect(note).toMatchObject({ kind: "video", format: "mp4" });
    expect(soundOf({ ...base, text: "hi" } as TelegramMessage)).toBe(null);
  });

  it("knows an audio file's format by its mime type, else its name, and none that no service takes", () => {
    expect(soundFormat("audio/mpeg", undefined)).toBe("mp3");
    expect(soundFormat("audio/x-m4a", "memo")).toBe("m4a");
    expect(soundFormat("audio/ogg; codecs=opus", undefined)).toBe("ogg");
    expect(soundFormat("application/octet-stream", "memo.OPUS")).toBe("ogg");
    expect(soundFormat(undefined, "take.wav")).toBe("wav");
    expect(soundFormat("audio/aac", "memo.aac")).toBe(null);
    expect(soundFormat("audio/amr", undefined)).toBe(null);
  });

  it("refuses before downloading by type, then length (over 10 minutes), then announced size (over 20 MB)", () => {
    const sound: TelegramSound = {
      kind: "voice",
      fileId: "v",
      fileSize: 1000,
      durationSeconds: 600,
      format: "ogg",
    };
    expect(notHeardBeforeDownload(sound)).toBe(null);
    expect(notHeardBeforeDownload({ ...sound, format: null })).toBe("type");
    expect(notHeardBeforeDownload({ ...sound, durationSeconds: 601 })).toBe("length");
    expect(notHeardBeforeDownload({ ...sound, fileSize: 20 * 1024 * 1024 + 1 })).toBe("size");
  });
});
