import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  buildCommandHandlers,
  buildCompanion,
  loadVoiceConfig,
  openRuntime,
  type Runtime,
} from "../../src/app/runtime.ts";
import type { CommandHandlers, CommandReply } from "../../src/channels/command-handlers.ts";
import type { Companion } from "../../src/companion/companion.ts";
import { EXPORT_TRACE_LIMIT } from "../../src/companion/data-rights.ts";
import { SettableClock, systemTimers } from "../../src/core/clock.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { OutgoingMessage } from "../../src/core/port.ts";
import {
  fakeModelConfig,
  type MessagesApiFake,
  type MessagesRequestBody,
  startMessagesApiFake,
  textReply,
  toolReply,
} from "../../testkit/messages-api.ts";
import { waitFor } from "../e2e/harness.ts";
import { tempDataDir } from "../store/helpers.ts";
import { testCoreConfig } from "../support/core-config.ts";

/**
 * The slash commands over the real wiring (openRuntime, buildCompanion, buildCommandHandlers).
 * /wipe and /forget: whatever a reply or a reflection was doing when the command landed, the
 * words are gone from every file afterwards (for /forget, from every file but the conversation
 * log). /export: bounded, and says what it left out.
 */

const SECRET = "pineapple";
/** A WORKSPACE long enough that reflection archives it into a note. */
const BIG_WORKSPACE = `- the ${SECRET} plan, step by step, with every detail written out\n`.repeat(60);

interface World {
  runtime: Runtime;
  companion: Companion;
  commands: CommandHandlers;
  api: MessagesApiFake;
  sent: OutgoingMessage[];
  dataDir: string;
  /** The zones the companion told the heartbeat schedule to follow, in order. */
  zones: string[];
}

const open: World[] = [];

afterEach(async () => {
  for (const w of open.splice(0)) {
    await w.companion.close();
    await w.runtime.lock.release();
    await w.api.close();
  }
});

async function world(): Promise<World> {
  const api = await startMessagesApiFake();
  const dataDir = await tempDataDir();
  const clock = new SettableClock("2026-03-04T09:00:00.000Z");
  const core = testCoreConfig(dataDir);
  const model = fakeModelConfig(api, { reflectMode: "two-phase" });
  const runtime = await openRuntime({
    core,
    model,
    voice: loadVoiceConfig({}),
    purpose: "test",
    clock,
    timers: systemTimers,
    logger: silentLogger,
  });
  const sent: OutgoingMessage[] = [];
  const zones: string[] = [];
  const companion = buildCompanion(
    runtime,
    {
      async send(message) {
        sent.push(message);
        return {};
      },
      async react() {
        return {};
      },
    },
    { closeTimeoutMs: 2_000 },
    (zone) => zones.push(zone),
  );
  const commands = buildCommandHandlers(runtime, companion);
  const w = { runtime, companion, commands, api, sent, dataDir, zones };
  open.push(w);
  return w;
}

const isReflection = (body: MessagesRequestBody) => body.tool_choice?.name === "update_mind";

function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Every file under the data dir whose contents mention `text`, case-insensitively. */
async function filesMentioning(dir: string, text: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const contents = await readFile(path, "utf8");
    if (contents.toLowerCase().includes(text.toLowerCase())) found.push(path.slice(dir.length + 1));
  }
  return found.sort();
}

function text(reply: CommandReply): string {
  if (!("text" in reply)) throw new Error("expected a text reply");
  return reply.text;
}

describe("the zone the heartbeat schedule follows", () => {
  it("moves with /tz, stays through /forget, and goes back to the configured zone when a wipe drops the /tz", async () => {
    const w = await world();
    await w.commands.run("tz", "Asia/Tokyo");
    await w.commands.run("forget", "nothing I know");
    await w.commands.run("wipe", "");
    await w.commands.run("wipe", "yes");
    expect(w.zones).toEqual(["Asia/Tokyo", "Europe/Berlin"]);
    expect(w.runtime.mind.read().heartbeat.timezone).toBeNull();
    expect(w.runtime.mind.read().wipedAt).toBe(w.runtime.clock.now().toISOString());
  });
});

describe("/wipe with work in flight", () => {
  it("is not undone by a reply the slow model finishes after it", async () => {
    const w = await world();
    const model = gate();
    w.api.setHandler(async (body) => {
      if (isReflection(body)) {
        return toolReply("update_mind", {
          understanding: [{ op: "add", list: "known", text: `- (user) loves ${SECRET}` }],
          workspace: BIG_WORKSPACE,
        });
      }
      await model.opened;
      return textReply(`Your ${SECRET} secret is safe with me.`);
    });
    const replying = w.companion.reply({ text: `My secret: I love ${SECRET}.`, channel: "telegram" });
    await waitFor(() => w.api.requests.length === 1, 5_000);

    await w.commands.run("wipe", "");
    const wiping = w.commands.run("wipe", "yes");
    await new Promise((resolve) => setTimeout(resolve, 50));
    model.open();
    expect(text(await wiping)).toContain("Everything is deleted");
    await replying;
    await w.companion.idle();

    expect(await filesMentioning(w.dataDir, SECRET)).toEqual([]);
    expect(await w.runtime.messages.all()).toEqual([]);
  });

  it("is not undone by a reflection that lands after it", async () => {
    const w = await world();
    const model = gate();
    const reflecting = gate();
    w.api.setHandler(async (body) => {
      if (!isReflection(body)) return textReply(`Noted, the ${SECRET}.`);
      reflecting.open();
      await model.opened;
      return toolReply("update_mind", {
        understanding: [{ op: "add", list: "known", text: `- (user) loves ${SECRET}` }],
        workspace: BIG_WORKSPACE,
      });
    });
    expect(await w.companion.reply({ text: `I love ${SECRET}.`, channel: "telegram" })).toMatchObject({
      status: "sent",
    });
    await reflecting.opened;

    await w.commands.run("wipe", "");
    const wiping = w.commands.run("wipe", "yes");
    await new Promise((resolve) => setTimeout(resolve, 50));
    model.open();
    await wiping;
    await w.companion.idle();

    expect(await filesMentioning(w.dataDir, SECRET)).toEqual([]);
    expect(w.runtime.mind.read().reflectionQueue).toEqual([]);
  });
});

describe("/forget", () => {
  it("deletes the copies in the trace and the notes, keeps the conversation, and says so", async () => {
    const w = await world();
    w.api.setHandler(async (body) =>
      isReflection(body)
        ? toolReply("update_mind", {
            understanding: [{ op: "add", list: "known", text: `- (user) loves ${SECRET}` }],
            workspace: BIG_WORKSPACE,
          })
        : textReply(`Noted, the ${SECRET}.`),
    );
    await w.companion.reply({ text: `I love ${SECRET}. Also, I run on Sundays.`, channel: "telegram" });
    await w.companion.idle();
    expect(await filesMentioning(w.dataDir, SECRET)).toEqual(
      expect.arrayContaining(["messages.json", "trace.jsonl", "mind.json"]),
    );
    expect(await w.runtime.notes.list()).toHaveLength(1);
    await w.runtime.trace.append({
      kind: "heartbeat",
      stage: "pre-check",
      preCheck: { fire: false, reason: "quiet-hours", detail: "inside quiet hours" },
    });

    const reply = text(await w.commands.run("forget", SECRET.toUpperCase()));

    expect(await filesMentioning(w.dataDir, SECRET)).toEqual(["messages.json"]);
    expect(reply).toContain("Our past messages still contain it; /wipe removes everything.");
    expect(reply).not.toContain("for good");
    expect(reply).toMatch(/1 memory|1 note/);
    expect((await w.runtime.messages.all()).map((m) => m.text)).toContain(
      `I love ${SECRET}. Also, I run on Sundays.`,
    );
    expect((await w.runtime.trace.last(100)).map((r) => r.kind)).toEqual(["heartbeat"]);
  });
});

describe("/memory, /forget N and /fix N over the real wiring", () => {
  it("lists what reflection learned with its source, deletes one item's words from every file but the log, and /export carries provenance", async () => {
    const w = await world();
    w.api.setHandler(async (body) =>
      isReflection(body)
        ? toolReply("update_mind", {
            understanding: [
              { op: "add", list: "known", text: `- (user) loves ${SECRET}` },
              { op: "add", list: "known", text: "- (user) runs on Sundays" },
            ],
          })
        : textReply("Noted."),
    );
    await w.companion.reply({ text: `I love ${SECRET}. Also, I run on Sundays.`, channel: "telegram" });
    await w.companion.idle();
    const [said] = await w.runtime.messages.all();

    const listing = text(await w.commands.run("memory", ""));
    expect(listing).toContain(
      `1. - (user) loves ${SECRET}\n    learned Wed 4 Mar · from your message "I love ${SECRET}. Also, I run on Sundays."`,
    );
    expect(listing).toContain("2. - (user) runs on Sundays");

    const exported = await w.commands.run("export", "");
    if (!("document" in exported)) throw new Error("expected a document");
    const data = JSON.parse(new TextDecoder().decode(exported.document.contents));
    expect(data.memoryItems[0]).toEqual({
      id: expect.any(String),
      group: "understanding_known",
      text: `- (user) loves ${SECRET}`,
      learnedAt: "2026-03-04T09:00:00.000Z",
      sourceMessageIds: [said?.id, expect.any(String)],
      correctedAt: null,
      corrected: false,
    });
    expect(await filesMentioning(w.dataDir, SECRET)).toEqual(
      expect.arrayContaining(["messages.json", "trace.jsonl", "mind.json"]),
    );

    const forgot = text(await w.commands.run("forget", "1"));
    expect(forgot).toContain(`Forgotten: "- (user) loves ${SECRET}".`);
    expect(forgot).toMatch(/Also deleted where it was mentioned: \d+ turn records?/);
    expect(await filesMentioning(w.dataDir, `loves ${SECRET}`)).toEqual([]);
    expect(w.runtime.mind.read().scratchpad.understanding_known.map((i) => i.text)).toEqual([
      "- (user) runs on Sundays",
    ]);

    expect(text(await w.commands.run("fix", "2 I run on Saturdays now"))).toContain(
      'Corrected 2: "I run on Saturdays now"',
    );
    const fixed = await w.commands.run("export", "");
    if (!("document" in fixed)) throw new Error("expected a document");
    expect(JSON.parse(new TextDecoder().decode(fixed.document.contents)).memoryItems[0]).toMatchObject({
      text: "I run on Saturdays now",
      corrected: true,
      correctedAt: "2026-03-04T09:00:00.000Z",
    });
    expect(w.runtime.mind.read().forgottenHashes).toHaveLength(2);

    await w.commands.run("wipe", "yes");
    expect(w.runtime.mind.read().forgottenHashes).toEqual([]);
    expect(w.runtime.mind.read().memoryListing).toBeUndefined();
  });
});

describe("/forget N and /fix N leave no copy of the old words", () => {
  it("/forget N deletes a memory item with the earlier versions reflection superseded, from every file but the log and from /export", async () => {
    const w = await world();
    let reflections = 0;
    w.api.setHandler(async (body) => {
      if (!isReflection(body)) return textReply("Noted.");
      reflections += 1;
      if (reflections === 1) {
        return toolReply("update_mind", {
          memory: [{ op: "add", kind: "open_loop", text: "Visit her sister Ana in Porto in May" }],
        });
      }
      const id = w.runtime.mind.read().memory[0]?.id;
      return toolReply("update_mind", {
        memory: [{ op: "supersede", id, text: "Visit her sister Ana in Porto in June" }],
      });
    });
    await w.companion.reply({ text: "I'm off to see my sister in May.", channel: "telegram" });
    await w.companion.idle();
    await w.companion.reply({ text: "Actually, it moved to June.", channel: "telegram" });
    await w.companion.idle();
    expect(w.runtime.mind.read().memory.map((i) => [i.text, i.retiredWhy])).toEqual([
      ["Visit her sister Ana in Porto in May", "superseded"],
      ["Visit her sister Ana in Porto in June", undefined],
    ]);

    const listing = text(await w.commands.run("memory", ""));
    expect(listing).not.toContain("in May");
    const number = /(\d+)\. Visit her sister Ana in Porto in June/.exec(listing)?.[1] ?? "";
    const reply = text(await w.commands.run("forget", number));

    expect(reply).toContain(
      'Forgotten: "Visit her sister Ana in Porto in June" (with 1 earlier version of it).',
    );
    expect(w.runtime.mind.read().memory).toEqual([]);
    expect(w.runtime.mind.read().forgottenHashes).toHaveLength(2);
    expect(await filesMentioning(w.dataDir, "sister Ana")).toEqual([]);
    const exported = await w.commands.run("export", "");
    if (!("document" in exported)) throw new Error("expected a document");
    expect(new TextDecoder().decode(exported.document.contents)).not.toContain("sister Ana");
  });

  it("/fix N deletes the copies of the old words beside the mind, as /forget N does, and says so", async () => {
    const w = await world();
    w.api.setHandler(async (body) =>
      isReflection(body)
        ? toolReply("update_mind", {
            understanding: [{ op: "add", list: "known", text: "- (user) runs on Sundays" }],
          })
        : textReply("Noted."),
    );
    await w.companion.reply({ text: "Sunday is my running day.", channel: "telegram" });
    await w.companion.idle();
    expect(await filesMentioning(w.dataDir, "runs on Sundays")).toEqual(["mind.json", "trace.jsonl"]);

    const listing = text(await w.commands.run("memory", ""));
    const number = /(\d+)\. - \(user\) runs on Sundays/.exec(listing)?.[1] ?? "";
    const reply = text(await w.commands.run("fix", `${number} I run on Saturdays now`));

    expect(reply).toContain(
      `Corrected ${number}: "I run on Saturdays now" (it said "- (user) runs on Sundays").`,
    );
    expect(reply).toMatch(/Also deleted where the old words were mentioned: \d+ turn records?\./);
    expect(await filesMentioning(w.dataDir, "runs on Sundays")).toEqual([]);
    expect(await filesMentioning(w.dataDir, "I run on Saturdays now")).toEqual(["mind.json"]);
  });
});

describe("/export", () => {
  it("carries only the newest turn records within its byte budget, and says so", async () => {
    const w = await world();
    const pad = "x".repeat(1024 * 1024);
    const count = Math.ceil(EXPORT_TRACE_LIMIT.bytes / pad.length) + 2;
    for (let i = 0; i < count; i += 1) {
      await w.runtime.trace.append({ kind: "reply", outcome: "sent", sent: { id: `a${i}`, text: pad } });
    }
    const reply = await w.commands.run("export", "");
    if (!("document" in reply)) throw new Error("expected a document");
    expect(reply.document.contents.byteLength).toBeLessThan(EXPORT_TRACE_LIMIT.bytes + 1024 * 1024);
    const exported = JSON.parse(new TextDecoder().decode(reply.document.contents));
    const numbers = exported.trace.map((r: { sent: { id: string } }) => Number(r.sent.id.slice(1)));
    expect(numbers.length).toBeGreaterThan(0);
    expect(numbers.length).toBeLessThan(count);
    expect(numbers.at(-1)).toBe(count - 1);
    expect(exported.traceNote).toContain(`Only the newest ${numbers.length} turn records`);
  });
});
