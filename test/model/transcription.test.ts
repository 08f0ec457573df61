import { afterEach, describe, expect, it, vi } from "vitest";
import { SettableClock, VirtualTimers } from "../../src/core/clock.ts";
import {
  TranscriptionClient,
  TranscriptionError,
  type TranscriptionSettings,
  transcriptionPlace,
} from "../../src/model/transcription.ts";
import { startTranscriptionFake, type TranscriptionApiFake } from "../../testkit/transcription-api.ts";

const fakes: TranscriptionApiFake[] = [];

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

async function fake(options?: Parameters<typeof startTranscriptionFake>[0]): Promise<TranscriptionApiFake> {
  const started = await startTranscriptionFake(options);
  fakes.push(started);
  return started;
}

/** Waits that fire only when a test moves them on: the time limits here are virtual. */
const clock = new SettableClock("2026-03-04T09:00:00.000Z");
const virtual = new VirtualTimers(clock);

function client(
  api: TranscriptionApiFake,
  settings: Partial<TranscriptionSettings> = {},
): TranscriptionClient {
  return new TranscriptionClient(
    {
      baseUrl: api.url,
      apiKey: api.apiKey ?? undefined,
      model: "whisper-1",
      language: undefined,
      timeoutMsPerMinute: 60_000,
      ...settings,
    },
    { timers: virtual },
  );
}

/** Moves virtual time on by `ms`, firing the time limits due on the way. */
async function pass(ms: number): Promise<void> {
  await virtual.advanceTo(new Date(clock.now().getTime() + ms));
}

/** Whether `work` has settled yet, looked at once the event loop has had a turn. */
async function settled(work: Promise<unknown>): Promise<boolean> {
  let done = false;
  void work.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

const OGG = Buffer.from("OggS\u0000\u0002 an opus voice note");
const note = { bytes: OGG, format: "ogg" as const, durationSeconds: 42 };

/** The TranscriptionError a call threw. */
async function failure(work: Promise<unknown>): Promise<TranscriptionError> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof TranscriptionError))
    throw new Error(`expected a TranscriptionError, got ${String(error)}`);
  return error;
}

describe("transcribing a voice note", () => {
  it("posts the sound as a multipart form: an .ogg file part with its type, the model, json, the key as a Bearer token", async () => {
    const api = await fake();
    api.answer("  I think the interview went well.  ");
    expect(await client(api, { language: "en" }).transcribe(note)).toBe("I think the interview went well.");
    expect(api.problems).toEqual([]);
    expect(api.requests).toEqual([
      {
        fileName: "sound.ogg",
        contentType: "audio/ogg",
        bytes: new Uint8Array(OGG),
        model: "whisper-1",
        language: "en",
        responseFormat: "json",
        authorization: "Bearer tr-key",
        outcome: "answered",
      },
    ]);
  });

  it("sends no key and no language when none is set, as a local server wants", async () => {
    const api = await fake({ apiKey: null });
    await client(api).transcribe({ bytes: OGG, format: "mp3", durationSeconds: 5 });
    expect(api.requests[0]).toMatchObject({
      fileName: "sound.mp3",
      contentType: "audio/mpeg",
      language: null,
    });
    expect(api.requests[0]?.authorization).toBeUndefined();
  });

  it("names the cause of each failure, and the setting to look at, never the sound or its words", async () => {
    const api = await fake();
    const transcriber = client(api);
    api.failNext("500");
    expect(await failure(transcriber.transcribe(note))).toMatchObject({ failure: "status", status: 500 });
    api.failNext("400");
    expect(await failure(transcriber.transcribe(note))).toMatchObject({ failure: "status", status: 400 });
    api.failNext("413");
    expect(await failure(transcriber.transcribe(note))).toMatchObject({ failure: "too-large", status: 413 });
    const wrongKey = await failure(client(api, { apiKey: "sk-wrong" }).transcribe(note));
    expect(wrongKey).toMatchObject({ failure: "status", status: 401, setting: "PRESENCE_TRANSCRIBE_KEY" });
    expect(wrongKey.message).toContain("Incorrect API key provided");
    const wrongPath = await failure(client(api, { baseUrl: `${api.url}/nope` }).transcribe(note));
    expect(wrongPath).toMatchObject({ status: 404, setting: "PRESENCE_TRANSCRIBE_URL" });
    api.failNext("reset");
    expect(await failure(transcriber.transcribe(note))).toMatchObject({ failure: "unreachable" });
    for (const error of [wrongKey, wrongPath]) expect(error.message).not.toContain("OggS");
  });

  it("refuses over 20 MB without sending anything", async () => {
    const api = await fake();
    const big = { bytes: new Uint8Array(20 * 1024 * 1024 + 1), format: "ogg" as const, durationSeconds: 60 };
    expect(await failure(client(api).transcribe(big))).toMatchObject({ failure: "too-large" });
    expect(api.requests).toEqual([]);
  });

  it("gives up after the time limit, which grows with the note's length", async () => {
    const api = await fake();
    const transcriber = client(api, { timeoutMsPerMinute: 150 });
    expect(transcriber.timeLimitMs(20)).toBe(150);
    expect(transcriber.timeLimitMs(60)).toBe(150);
    expect(transcriber.timeLimitMs(150)).toBe(450);
    expect(transcriber.timeLimitMs(undefined)).toBe(150);
    api.failNext("hang");
    const hearing = failure(transcriber.transcribe({ ...note, durationSeconds: 150 }));
    await vi.waitFor(() => expect(api.requests).toHaveLength(1));
    await pass(449);
    expect(await settled(hearing)).toBe(false);
    await pass(1);
    expect(await hearing).toMatchObject({ failure: "timeout", setting: "PRESENCE_TRANSCRIBE_TIMEOUT_MS" });
  });

  it("names an answer cut off half-way through its body a time-out, not a wrong answer", async () => {
    const api = await fake();
    api.failNext("stall");
    const hearing = failure(client(api).transcribe(note));
    await vi.waitFor(() => expect(api.requests).toHaveLength(1));
    await pass(60_000);
    expect(await hearing).toMatchObject({ failure: "timeout", setting: "PRESENCE_TRANSCRIBE_TIMEOUT_MS" });
  });

  it("names a body that is not JSON an answer that is no transcript, pointing at the address", async () => {
    const api = await fake();
    api.failNext("not-json");
    expect(await failure(client(api).transcribe(note))).toMatchObject({
      failure: "answer",
      setting: "PRESENCE_TRANSCRIBE_URL",
    });
  });

  it("cannot reach a service that is down", async () => {
    const api = await fake();
    await api.down();
    const error = await failure(client(api).transcribe(note));
    expect(error).toMatchObject({ failure: "unreachable", setting: "PRESENCE_TRANSCRIBE_URL" });
    expect(error.message).toContain("ECONNREFUSED");
  });

  it("sends a round video note as MP4, which a service without video refuses", async () => {
    const api = await fake({ video: false });
    const error = await failure(client(api).transcribe({ bytes: OGG, format: "mp4", durationSeconds: 12 }));
    expect(error).toMatchObject({ failure: "status", status: 400 });
    expect(api.requests[0]).toMatchObject({ fileName: "sound.mp4", contentType: "video/mp4" });
  });

  it("the fake refuses what the hosted service refuses: an .oga name, a type that does not match, no model", async () => {
    const api = await fake();
    const post = (form: FormData) =>
      fetch(`${api.url}/audio/transcriptions`, {
        method: "POST",
        body: form,
        headers: { authorization: "Bearer tr-key" },
      });
    const form = (name: string, type: string, model?: string) => {
      const f = new FormData();
      f.append("file", new Blob([OGG], { type }), name);
      if (model) f.append("model", model);
      return f;
    };
    expect((await post(form("voice.oga", "audio/ogg", "whisper-1"))).status).toBe(400);
    expect((await post(form("voice.ogg", "audio/mpeg", "whisper-1"))).status).toBe(400);
    expect((await post(form("voice.ogg", "audio/ogg"))).status).toBe(400);
    expect((await post(form("voice.ogg", "audio/ogg", "whisper-1"))).status).toBe(200);
    expect(api.problems).toHaveLength(3);
    expect(api.problems[0]).toContain("Invalid file format");
  });
});

describe("checking at start that the service answers", () => {
  it("takes any answer, a 404 of a server without a models route included, and sends no sound", async () => {
    const hosted = await fake();
    expect(await client(hosted).checkEndpoint()).toBe(null);
    expect(hosted.lookups).toEqual([{ path: "/v1/models", authorization: "Bearer tr-key" }]);
    const local = await fake({ apiKey: null, models: false });
    expect(await client(local).checkEndpoint()).toBe(null);
    expect([...hosted.requests, ...local.requests]).toEqual([]);
  });

  it("warns of a refused key and of a service that does not answer, naming the setting", async () => {
    const api = await fake();
    expect(await client(api, { apiKey: "sk-wrong" }).checkEndpoint()).toMatchObject({
      setting: "PRESENCE_TRANSCRIBE_KEY",
    });
    await api.down();
    const down = await client(api).checkEndpoint();
    expect(down).toMatchObject({ setting: "PRESENCE_TRANSCRIBE_URL" });
    expect(down?.message).toContain("did not answer");
  });
});

describe("where the service is, in words", () => {
  it("says the host, and that a loopback address is this machine", () => {
    expect(transcriptionPlace("http://127.0.0.1:8080/v1")).toBe("127.0.0.1:8080, on this machine");
    expect(transcriptionPlace("http://[::1]:8080/v1")).toBe("[::1]:8080, on this machine");
    expect(transcriptionPlace("https://api.openai.com/v1")).toBe("api.openai.com");
  });
});
