import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The persona is three markdown files the person owns and edits: who the companion is
 * (SOUL.md), who the person is (USER.md), how check-ins should feel (HEARTBEAT.md). They
 * are read before every turn, so an edit takes effect on the next message without a
 * restart; between edits the text is byte-identical, so the prompt cache keeps working.
 */

/**
 * The three persona texts, as written. Read-only: the turn's stable prefix is kept per persona
 * object, so a persona edited in place would go on being shown as it was.
 */
export interface Persona {
  readonly soul: string;
  readonly user: string;
  readonly heartbeat: string;
}

/** Where the persona comes from; the companion asks for the current one every turn. */
export interface PersonaSource {
  current(): Promise<Persona>;
}

/** The persona shipped with presence (persona/ at the project root). */
const DEFAULT_PERSONA_DIR = fileURLToPath(new URL("../../persona/", import.meta.url));

const FILES = { soul: "SOUL.md", user: "USER.md", heartbeat: "HEARTBEAT.md" } as const;

/** Reads the three files once; a missing or unreadable one is an error naming the file and how to restore it. */
export async function loadPersona(dir: string = DEFAULT_PERSONA_DIR): Promise<Persona> {
  const read = async (name: string): Promise<string> => {
    const path = join(dir, name);
    try {
      return normalize(await readFile(path, "utf8"));
    } catch (error) {
      throw new Error(
        `cannot read the persona file ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)}); ` +
          `restore it from the project's persona/ folder or write your own`,
        { cause: error },
      );
    }
  };
  const [soul, user, heartbeat] = await Promise.all([
    read(FILES.soul),
    read(FILES.user),
    read(FILES.heartbeat),
  ]);
  return { soul, user, heartbeat };
}

/** A source that re-reads the files only when one of them changed on disk. */
export function personaFromDir(dir: string = DEFAULT_PERSONA_DIR): PersonaSource {
  let cached: { stamp: string; persona: Persona } | undefined;
  return {
    async current() {
      const stamps = await Promise.all(
        Object.values(FILES).map(async (name) => {
          const s = await stat(join(dir, name)).catch(() => undefined);
          return s ? `${s.mtimeMs}:${s.size}` : "missing";
        }),
      );
      const stamp = stamps.join("|");
      if (cached?.stamp !== stamp) cached = { stamp, persona: await loadPersona(dir) };
      return cached.persona;
    },
  };
}

/** A persona that never changes: for tests, simulations and benchmarks. */
export function fixedPersona(persona: Persona): PersonaSource {
  return { current: async () => persona };
}

/** Line endings and trailing space normalized, so an editor's habits do not break the cache. */
function normalize(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+$/gm, "")
    .trim();
}
