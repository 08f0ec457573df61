import { stat } from "node:fs/promises";
import { join } from "node:path";
import { soundFormatOfFile } from "../core/sound.ts";
import { damagedCopyTime, isErrnoCode, isTempFileName, namesInDir, removeDurable } from "./files.ts";

/**
 * The names of the files where the person's words can be in the data directory. The stores
 * name their files from here, and the person's data rights (companion/data-rights.ts,
 * HOLDERS_OF_WORDS) give each to one holder that /export, /wipe, /forget and /fix all read:
 * the stores' own files, and the copies beside them that no store reads — damaged originals
 * kept before a repair, temp files a killed writer left, files /export wrote in the terminal.
 * telegram.json (update and stranger ids) and presence.lock hold no words and are not here.
 */
export const PERSON_FILES = {
  /** The conversation log's recent window. */
  messages: "messages.json",
  /** Older months of the log, archive/YYYY-MM.json. */
  archive: "archive",
  /** Scratchpad, threads, memory, decisions, outbox, reflection queue. */
  mind: "mind.json",
  /** Keyed notes, notes/<key>.md. */
  notes: "notes",
  trace: "trace.jsonl",
  rotatedTrace: "trace.1.jsonl",
  /** What /export wrote in `npm run chat`. */
  exports: "exports",
  /** Documents the person sent for the model to read, and sounds to be heard, files/<name> (sent-files.ts). */
  files: "files",
} as const;

/**
 * The data lock (store/lock.ts). It holds no words; a temp file beside it belongs to a live
 * process taking the lock right now, so it is neither a copy of the person's words nor a
 * dead writer's leftover.
 */
export const LOCK_FILE = "presence.lock";

/** Where the stores write files, and so where a temp file or a damaged copy can be. */
const WRITTEN_DIRS = ["", PERSON_FILES.archive, PERSON_FILES.notes, PERSON_FILES.files] as const;

/** A file holding the person's words that no store reads as data. */
export interface KeptCopy {
  path: string;
  /**
   * damaged: an original kept before a repair; temp: a write a crash cut short; export: /export's
   * file; document: a document the person sent (files/), which only the prompt reads; sound: a
   * voice note, audio file or video note they sent (files/), kept for its keeping time.
   */
  kind: "damaged" | "temp" | "export" | "document" | "sound";
  bytes: number;
}

/** Every damaged copy, leftover temp file, export file and sent document or sound in the data directory, by path. */
export async function keptCopies(dataDir: string): Promise<KeptCopy[]> {
  const copies: KeptCopy[] = [];
  const add = async (path: string, kind: KeptCopy["kind"]) => {
    try {
      const info = await stat(path);
      if (info.isFile()) copies.push({ path, kind, bytes: info.size });
    } catch (error) {
      if (!isErrnoCode(error, "ENOENT")) throw error;
    }
  };
  for (const dir of WRITTEN_DIRS) {
    for (const name of await namesInDir(join(dataDir, dir))) {
      if (name.startsWith(`.${LOCK_FILE}.`)) continue;
      if (isTempFileName(name)) await add(join(dataDir, dir, name), "temp");
      else if (damagedCopyTime(name) !== null) await add(join(dataDir, dir, name), "damaged");
      else if (dir === PERSON_FILES.files)
        await add(join(dataDir, dir, name), soundFormatOfFile(name) === null ? "document" : "sound");
    }
  }
  for (const name of await namesInDir(join(dataDir, PERSON_FILES.exports))) {
    await add(join(dataDir, PERSON_FILES.exports, name), "export");
  }
  return copies.sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * Removes temp files a dead writer left behind (a kill in the middle of a durable write): they
 * hold the same private words as the file they were meant to replace, and nothing ever reads
 * them. Only for a process holding the data lock, which guarantees no writer is alive.
 */
export async function removeDeadWritersTemps(dataDir: string): Promise<void> {
  for (const copy of await keptCopies(dataDir)) {
    if (copy.kind === "temp") await removeDurable(copy.path);
  }
}

/** Deletes every kept copy, the exports folder and the folder of sent documents and sounds (/wipe), for real. */
export async function removeKeptCopies(dataDir: string): Promise<void> {
  for (const copy of await keptCopies(dataDir)) await removeDurable(copy.path);
  await removeDurable(join(dataDir, PERSON_FILES.exports));
  await removeDurable(join(dataDir, PERSON_FILES.files));
}
