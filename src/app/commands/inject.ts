import { openMind } from "../../companion/mind-document.ts";
import { systemClock } from "../../core/clock.ts";
import { fieldPath, fieldPaths, fieldText, injectSection, resolveFieldPath } from "../../mind/scratchpad.ts";
import { acquireDataLock } from "../../store/lock.ts";
import { NotesStore } from "../../store/notes.ts";
import { loadCoreConfig } from "../config.ts";
import { defineCommand, UsageError } from "./command.ts";

/**
 * `inject SECTION TEXT`: pre-populates a scratchpad field before the companion has learned
 * it ("Known: works night shifts"). It writes mind.json, so it takes the data lock and
 * refuses while the bot runs rather than race it.
 */
export const injectCommand = defineCommand({
  name: "inject",
  summary: 'pre-populate a scratchpad section (e.g. inject UNDERSTANDING.Known "works nights")',
  usage: "inject SECTION TEXT",
  help: [
    "Sets one scratchpad field. SECTION is case-insensitive, with or without its section:",
    `  ${fieldPaths().join(", ")}`,
    "TEXT replaces the field; start it with APPEND: to add a line, or give CLEAR to empty it.",
    'Put -- before a TEXT that starts with a dash: inject Known -- "- (user) works nights".',
    "Refused while the bot runs (stop it first): both would write data/mind.json.",
  ].join("\n"),
  options: {},
  positionals: true,
  async run({ positionals }, io) {
    const [section, ...words] = positionals;
    if (section === undefined || words.length === 0) {
      throw new UsageError("needs SECTION and TEXT", { seeHelp: true });
    }
    const key = resolveFieldPath(section);
    if (key === null) {
      throw new UsageError(`unknown section "${section}"; valid sections: ${fieldPaths().join(", ")}`);
    }
    const text = words.join(" ");
    const core = loadCoreConfig(io.env);
    const lock = await acquireDataLock(core.dataDir, "inject", systemClock);
    try {
      const mind = await openMind(core.dataDir, systemClock);
      const result = injectSection(mind.read().scratchpad, section, text, systemClock.now());
      if (!result.ok) {
        throw new UsageError(`refused: ${result.reason}`);
      }
      if (result.archive) {
        await new NotesStore({ dataDir: core.dataDir }).write(result.archive.key, result.archive.content);
      }
      await mind.update((draft) => {
        draft.scratchpad = result.pad;
      });
      const value = fieldText(result.pad, key);
      io.stdout(`${fieldPath(key)} is now:\n${value === "" ? "(empty)" : value}\n`);
      return 0;
    } finally {
      await lock.release();
    }
  },
});
