import { readFile } from "node:fs/promises";

/**
 * A process as /proc shows it: state (field 3: "Z" for a zombie) and start time in clock
 * ticks since boot (field 22), or null when there is no such process. Read independently of
 * src/store/lock.ts so tests check the lock against what the kernel says.
 */
export async function procStat(pid: number): Promise<{ state: string; startTicks: number } | null> {
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "", startTicks: Number(fields[19]) };
}

/** A process's command name (/proc/PID/comm), or null when there is no such process. */
export async function procName(pid: number): Promise<string | null> {
  try {
    return (await readFile(`/proc/${pid}/comm`, "utf8")).trim();
  } catch {
    return null;
  }
}
