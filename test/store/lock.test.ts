import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SettableClock } from "../../src/core/clock.ts";
import { acquireDataLock, DataLockedError, readDataLock } from "../../src/store/lock.ts";
import { LOCK_FILE } from "../../src/store/person-files.ts";
import { procName, procStat } from "../support/proc.ts";
import { modeOf, tempDataDir } from "./helpers.ts";

/** The PID of a process that has already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  if (child.pid === undefined) throw new Error("could not start a child process");
  return child.pid;
}

const parents: ChildProcess[] = [];
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const parent of parents.splice(0)) parent.kill("SIGKILL");
});

/**
 * A `sleep` whose parent never reaps it (the parent execs another sleep), so after SIGKILL it
 * stays a zombie: what a `kill -9` under a container init that does not reap leaves behind.
 */
async function unreapedChild(): Promise<number> {
  const parent = spawn("sh", ["-c", "sleep 60 & echo $!; exec sleep 61"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  parents.push(parent);
  const [chunk] = (await once(parent.stdout, "data")) as [Buffer];
  const pid = Number(chunk.toString().trim());
  children.push(pid);
  // Until the shell has exec'd, it could still reap the child itself.
  await expect.poll(() => procName(parent.pid as number)).toBe("sleep");
  await expect.poll(() => procName(pid)).toBe("sleep");
  return pid;
}

const onLinux = process.platform === "linux";
const bootId = () => readFile("/proc/sys/kernel/random/boot_id", "utf8").then((text) => text.trim());

describe("acquireDataLock", () => {
  it("writes a private lock naming this process, and release removes it (twice is harmless)", async () => {
    const dataDir = await tempDataDir();
    const lock = await acquireDataLock(dataDir, "start", new SettableClock("2026-02-07T08:00:00.000Z"));
    const path = join(dataDir, LOCK_FILE);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({
      pid: process.pid,
      purpose: "start",
      startedAt: "2026-02-07T08:00:00.000Z",
      ...(onLinux ? { processStart: (await procStat(process.pid))?.startTicks, bootId: await bootId() } : {}),
    });
    expect(await modeOf(path)).toBe(0o600);
    expect(await readDataLock(dataDir)).toMatchObject({ pid: process.pid, purpose: "start" });

    await lock.release();
    await lock.release();
    expect(await readdir(dataDir)).toEqual([]);
    expect(await readDataLock(dataDir)).toBeNull();
  });

  it("refuses while a live process holds it, naming the PID and what it is doing", async () => {
    const dataDir = await tempDataDir();
    const held = await acquireDataLock(dataDir, "start");
    const error = await acquireDataLock(dataDir, "chat").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataLockedError);
    expect((error as Error).message).toBe(
      `presence is already running (pid ${process.pid}, start) for data directory ${dataDir}; stop it first`,
    );
    await held.release();
    const next = await acquireDataLock(dataDir, "chat");
    await next.release();
  });

  it("takes over a lock left by a process that no longer exists", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    const path = join(dataDir, LOCK_FILE);
    const pid = deadPid();
    await writeFile(path, JSON.stringify({ pid, purpose: "start", startedAt: "2026-01-01T00:00:00.000Z" }));
    expect(await readDataLock(dataDir)).toBeNull();

    const lock = await acquireDataLock(dataDir, "inject");
    expect(JSON.parse(await readFile(path, "utf8"))).toMatchObject({ pid: process.pid, purpose: "inject" });
    await lock.release();
  });

  it("takes over an unreadable lock file", async () => {
    const dataDir = await tempDataDir();
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, LOCK_FILE), "");
    const lock = await acquireDataLock(dataDir, "start");
    expect(lock.info.pid).toBe(process.pid);
    await lock.release();
  });

  it("releaseAtExit keeps the lock while the process runs and removes it when it exits", async () => {
    const dataDir = await tempDataDir();
    const lockModule = join(import.meta.dirname, "../../src/store/lock.ts");
    // A real process: takes the lock, hands it to exit, says so, and exits when told.
    const script = `
      const { acquireDataLock } = await import(${JSON.stringify(lockModule)});
      const lock = await acquireDataLock(${JSON.stringify(dataDir)}, "start");
      lock.releaseAtExit();
      process.stdout.write("held\\n");
      process.stdin.once("data", () => process.exit(0));`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const [firstOutput] = (await once(child.stdout, "data")) as [Buffer];
    expect(firstOutput.toString()).toBe("held\n");
    expect(await readDataLock(dataDir)).toMatchObject({ pid: child.pid, purpose: "start" });

    child.stdin.write("go\n");
    const [code] = (await once(child, "exit")) as [number];
    expect(code).toBe(0);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it("does not remove a lock that another process took over in the meantime", async () => {
    const dataDir = await tempDataDir();
    const lock = await acquireDataLock(dataDir, "start");
    const path = join(dataDir, LOCK_FILE);
    const other = JSON.stringify({ pid: 1, purpose: "start", startedAt: "2026-03-01T00:00:00.000Z" });
    await writeFile(path, other);
    await lock.release();
    expect(await readFile(path, "utf8")).toBe(other);
  });

  it.runIf(onLinux)("takes over a lock whose holder was killed and is still a zombie", async () => {
    const dataDir = await tempDataDir();
    const pid = await unreapedChild();
    const started = await procStat(pid);
    await writeLock(dataDir, { pid, processStart: started?.startTicks, bootId: await bootId() });
    expect(await readDataLock(dataDir)).toMatchObject({ pid });

    process.kill(pid, "SIGKILL");
    await expect.poll(async () => (await procStat(pid))?.state).toBe("Z");
    expect(await readDataLock(dataDir)).toBeNull();
    const lock = await acquireDataLock(dataDir, "start");
    expect(lock.info.pid).toBe(process.pid);
    await lock.release();
  });

  it.runIf(onLinux)("takes over a zombie's lock written before start times were recorded", async () => {
    const dataDir = await tempDataDir();
    const pid = await unreapedChild();
    process.kill(pid, "SIGKILL");
    await expect.poll(async () => (await procStat(pid))?.state).toBe("Z");
    await writeLock(dataDir, { pid });
    const lock = await acquireDataLock(dataDir, "start");
    await lock.release();
  });

  it.runIf(onLinux)("takes over a lock whose PID now belongs to another program, and only then", async () => {
    const dataDir = await tempDataDir();
    const pid = await unreapedChild();
    const other = await procStat(pid);
    if (!other) throw new Error("no /proc entry for the child");

    await writeLock(dataDir, { pid, processStart: other.startTicks, bootId: await bootId() });
    await expect(acquireDataLock(dataDir, "chat")).rejects.toBeInstanceOf(DataLockedError);

    await writeLock(dataDir, { pid, processStart: other.startTicks - 1, bootId: await bootId() });
    const recycled = await acquireDataLock(dataDir, "chat");
    await recycled.release();

    await writeLock(dataDir, {
      pid,
      processStart: other.startTicks,
      bootId: "a-boot-before-the-last-reboot",
    });
    const rebooted = await acquireDataLock(dataDir, "chat");
    await rebooted.release();
  });
});

async function writeLock(dataDir: string, fields: Record<string, unknown>): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await writeFile(
    join(dataDir, LOCK_FILE),
    JSON.stringify({ purpose: "start", startedAt: "2026-01-01T00:00:00.000Z", ...fields }),
  );
}
