import { spawn, spawnSync } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { initialMindState } from "../../src/companion/mind-document.ts";
import { procName, procStat } from "../support/proc.ts";
import {
  createWorld,
  dataDirText,
  OWNER_ID,
  type Presence,
  presenceEnv,
  ROOT,
  spawnInWorld,
  startPresence,
  stopPresence,
  TSX_LOADER,
  untilListening,
  type World,
} from "./harness.ts";

/**
 * The real process meeting its data directory as a crash, damage or the machine left it: a
 * lock whose holder was killed but not reaped (a zombie) or whose PID now belongs to another
 * program, a disk it cannot write to, damaged files, and the temp files a killed writer left.
 */

let world: World;

beforeEach(async () => {
  world = await createWorld();
});

afterEach(async () => {
  await world.close();
});

/** The command line a person runs, as shell words after `sh -c SCRIPT sh`: "$@" is presence's arguments. */
const PRESENCE = '"$PRESENCE_NODE" --import "$PRESENCE_TSX" "$PRESENCE_CLI" "$@"';

/**
 * Runs presence from a shell script (`prefix` may put it under `unshare`), with the same
 * settings startPresence gives it. The script sees presence's command line as PRESENCE.
 */
function presenceVia(
  script: string,
  args: string[],
  options: { prefix?: string[]; env?: Record<string, string> } = {},
): Presence {
  const [command, ...prefixArgs] = [...(options.prefix ?? []), "sh"];
  return spawnInWorld(
    world,
    command as string,
    [...prefixArgs, "-c", script, "sh", ...args],
    presenceEnv(world, {
      PRESENCE_NODE: process.execPath,
      PRESENCE_TSX: TSX_LOADER,
      PRESENCE_CLI: join(ROOT, "src", "cli.ts"),
      ...options.env,
    }),
  );
}

/** "listening", or how the process ended instead (so a refusal fails at once, with its words). */
function listeningOrExit(presence: Presence): Promise<string> {
  return Promise.race([
    untilListening(world, presence).then(() => "listening"),
    presence.exited.then((code) => `exited ${code}: ${presence.stderr()}`),
  ]);
}

async function lockHolder(): Promise<{ pid: number; purpose: string }> {
  return JSON.parse(await readFile(join(world.dataDir, "presence.lock"), "utf8"));
}

const onLinux = process.platform === "linux";

/** Whether this machine lets a test mount a small tmpfs in a private mount namespace (a full disk). */
const canMountTmpfs =
  onLinux &&
  spawnSync("unshare", ["-rm", "sh", "-c", 'd=$(mktemp -d) && mount -t tmpfs -o size=4k tmpfs "$d"'], {
    stdio: "ignore",
  }).status === 0;

describe("presence and the data lock after a crash", () => {
  it.runIf(onLinux)(
    "starts at once after kill -9 while the killed process is still an unreaped zombie",
    async () => {
      // The parent execs `sleep`, which never reaps: the killed presence stays a zombie.
      const parent = presenceVia(`${PRESENCE} & exec sleep 60`, ["start"]);
      await untilListening(world, parent);
      const { pid } = await lockHolder();
      expect(pid).not.toBe(parent.pid);
      expect(await procName(parent.pid)).toBe("sleep");
      process.kill(pid, "SIGKILL");
      await expect.poll(async () => (await procStat(pid))?.state).toBe("Z");

      const restarted = startPresence(world);
      expect(await listeningOrExit(restarted)).toBe("listening");
      expect((await procStat(pid))?.state).toBe("Z");
      expect(await lockHolder()).toMatchObject({ pid: restarted.pid, purpose: "start" });
      expect((await stopPresence(restarted)).code).toBe(0);
    },
  );

  it.runIf(onLinux)(
    "takes over a lock whose PID now belongs to another program, and refuses while the holder runs",
    async () => {
      const other = spawn("sleep", ["60"], { stdio: "ignore" });
      const otherPid = other.pid as number;
      try {
        const started = await procStat(otherPid);
        if (!started) throw new Error("no /proc entry for sleep");
        const lock = (processStart: number) =>
          writeFile(
            join(world.dataDir, "presence.lock"),
            JSON.stringify({
              pid: otherPid,
              purpose: "start",
              startedAt: "2026-01-01T00:00:00.000Z",
              processStart,
            }),
          );
        await mkdir(world.dataDir, { recursive: true });

        await lock(started.startTicks);
        const refused = presenceVia(PRESENCE, ["inject", "Known", "works nights"]);
        expect(await refused.exited).toBe(1);
        expect(refused.stderr()).toBe(
          `npm run cli -- inject: presence is already running (pid ${otherPid}, start) for data directory ${world.dataDir}; stop it first\n`,
        );

        await lock(started.startTicks + 1);
        const recycled = presenceVia(PRESENCE, ["inject", "Known", "works nights"]);
        expect(await recycled.exited).toBe(0);
        expect(recycled.stdout()).toContain("works nights");
        await expect(readFile(join(world.dataDir, "presence.lock"))).rejects.toThrow(/ENOENT/);
      } finally {
        other.kill("SIGKILL");
      }
    },
  );
});

describe("presence on a disk it cannot write", () => {
  it.runIf(canMountTmpfs)(
    "on a full disk, exits 1 with one line naming the file and saying to free space",
    async () => {
      await mkdir(world.dataDir, { recursive: true });
      const fill = `mount -t tmpfs -o size=4k tmpfs "$PRESENCE_DATA_DIR" && { head -c 8192 /dev/zero > "$PRESENCE_DATA_DIR/filler" 2>/dev/null; exec ${PRESENCE}; }`;
      const presence = presenceVia(fill, ["start"], { prefix: ["unshare", "-rm"] });
      expect(await presence.exited).toBe(1);
      const lock = join(world.dataDir, "presence.lock");
      expect(presence.stderr()).toBe(
        `presence: cannot write ${lock}: the disk is full (ENOSPC). Free some space on the disk that holds ${world.dataDir}.\n`,
      );
      expect(world.bot.calls).toEqual([]);
    },
  );

  it.runIf(canMountTmpfs)(
    "when the disk fills while it runs, stops with exit 1 naming messages.json, leaving the message with Telegram",
    async () => {
      await mkdir(world.dataDir, { recursive: true });
      // The shell fills the disk on SIGUSR1 and passes on presence's exit code.
      const script = [
        'mount -t tmpfs -o size=1m tmpfs "$PRESENCE_DATA_DIR" || exit 99',
        `trap 'head -c 2000000 /dev/zero > "$PRESENCE_DATA_DIR/filler" 2>/dev/null; echo disk-filled >&2' USR1`,
        `${PRESENCE} &`,
        "child=$!",
        'while :; do wait "$child"; code=$?; kill -0 "$child" 2>/dev/null || break; done',
        'exit "$code"',
      ].join("\n");
      const presence = presenceVia(script, ["start"], { prefix: ["unshare", "-rm"] });
      expect(await listeningOrExit(presence)).toBe("listening");
      presence.child.kill("SIGUSR1");
      await expect.poll(() => presence.stderr()).toContain("disk-filled");

      world.bot.message(world.bot.user(OWNER_ID, "Ada"), { text: "Sister's wedding is next week" });
      expect(await presence.exited).toBe(1);
      const said = presence.stdout();
      expect(said).toContain(
        `cannot write ${join(world.dataDir, "messages.json")}: the disk is full (ENOSPC). Free some space on the disk that holds ${world.dataDir}.`,
      );
      expect(said).not.toContain("wedding");
      expect(world.bot.sent).toEqual([]);
      expect(world.bot.pendingUpdates()).toBe(1);
    },
  );

  it.runIf(onLinux)(
    "past the file size limit (ulimit -f), exits 1 with one line naming the file and the limit",
    async () => {
      const presence = presenceVia(`ulimit -f 0 && exec ${PRESENCE}`, ["start"]);
      expect(await presence.exited).toBe(1);
      expect(presence.stderr()).toBe(
        `presence: cannot write ${join(world.dataDir, "presence.lock")}: the file is larger than this process may write (EFBIG: the file size limit, \`ulimit -f\`). Raise the limit.\n`,
      );
      expect(world.bot.calls).toEqual([]);
    },
  );
});

/** `npm run chat` with these lines typed, to the end of input; resolves once it has exited 0. */
async function chat(lines: string): Promise<Presence> {
  const session = startPresence(world, {}, "chat");
  session.child.stdin?.end(lines);
  const code = await session.exited;
  if (code !== 0) throw new Error(`chat exited ${code}: ${session.stderr()}`);
  return session;
}

const WORDS = "Sister's wedding";

describe("presence and damaged data files", () => {
  it("refuses to start on a mind.json with an outbox entry it cannot send, leaving the file as it was", async () => {
    await mkdir(world.dataDir, { recursive: true });
    const file = join(world.dataDir, "mind.json");
    const contents = `${JSON.stringify(
      {
        ...initialMindState(new Date()),
        outbox: [{ id: "o-broken", kind: "letter", text: `${WORDS} speech, draft` }],
      },
      null,
      2,
    )}\n`;
    await writeFile(file, contents);

    const presence = startPresence(world);
    expect(await listeningOrExit(presence)).toMatch(/^exited 1: /);
    expect(presence.stderr()).toMatch(
      new RegExp(
        `^presence: ${file}: outbox entry 1 \\(index 0, id "o-broken"\\): kind: [^\\n]*left as it is[^\\n]*\\n$`,
      ),
    );
    expect(await readFile(file, "utf8")).toBe(contents);
    expect(await readdir(world.dataDir)).toEqual(["mind.json"]);
  });

  it("keeps a damaged trace beside it (owner-only, logged without its text) before repairing it; /export carries the copy and /wipe deletes it", async () => {
    await mkdir(world.dataDir, { recursive: true });
    const trace = join(world.dataDir, "trace.jsonl");
    const record = JSON.stringify({ ts: new Date(Date.now() - 3_600_000).toISOString(), kind: "earlier" });
    const original = `${record}\nGARBAGE ${WORDS} toast, half a line\n`;
    await writeFile(trace, original);

    const talking = await chat("hello\n");
    const copies = (await readdir(world.dataDir)).filter((name) => name.startsWith("trace.jsonl.damaged-"));
    expect(copies).toEqual([expect.stringMatching(/^trace\.jsonl\.damaged-\d{8}T\d{6}Z$/)]);
    const copy = join(world.dataDir, copies[0] as string);
    expect(await readFile(copy, "utf8")).toBe(original);
    expect((await stat(copy)).mode & 0o777).toBe(0o600);
    const repaired = await readFile(trace, "utf8");
    expect(repaired).not.toContain("GARBAGE");
    expect(repaired.startsWith(`${record}\n`)).toBe(true);
    const said = talking
      .stderr()
      .split("\n")
      .filter((line) => line.includes("damaged"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(copy);
    expect(talking.stderr()).not.toContain("toast");

    await chat("/export\n");
    const [exported] = await readdir(join(world.dataDir, "exports"));
    const data = JSON.parse(await readFile(join(world.dataDir, "exports", exported as string), "utf8"));
    expect(data.otherFiles).toEqual([{ file: copies[0], kind: "damaged", text: original }]);

    const wiping = await chat("/wipe\n/wipe yes\n");
    expect(wiping.stdout()).toContain("Everything is deleted");
    expect((await readdir(world.dataDir)).filter((name) => name.includes("damaged"))).toEqual([]);
    expect((await dataDirText(world.dataDir)).toLowerCase()).not.toContain("wedding");
  });

  it("removes the temp files a killed writer left at start, and /forget reaches every copy of the words", async () => {
    const inject = presenceVia(PRESENCE, ["inject", "Known", `${WORDS} is on 14 June`]);
    expect(await inject.exited).toBe(0);
    const mind = join(world.dataDir, "mind.json");
    const leftovers = [
      join(world.dataDir, ".mind.json.0123456789ab.tmp"),
      join(world.dataDir, "archive", ".2026-01.json.0123456789ab.tmp"),
      join(world.dataDir, "notes", ".plans.md.0123456789ab.tmp"),
    ];
    for (const leftover of leftovers) {
      await mkdir(join(leftover, ".."), { recursive: true });
      await copyFile(mind, leftover);
    }

    await chat("");
    for (const leftover of leftovers) await expect(stat(leftover)).rejects.toThrow(/ENOENT/);
    expect(await readFile(mind, "utf8")).toContain(WORDS);

    // A damaged trace line and an /export file hold the words too.
    await writeFile(join(world.dataDir, "trace.jsonl"), `GARBAGE ${WORDS} toast\n`);
    const forgetting = await chat(`/export\n/forget ${WORDS.toLowerCase()}\n`);
    expect(forgetting.stdout()).toContain("Forgotten:");
    expect(forgetting.stdout()).toContain("2 other files");
    expect((await dataDirText(world.dataDir)).toLowerCase()).not.toContain("wedding");
  });
});
