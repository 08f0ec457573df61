import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The arrows docs/architecture.md draws, checked on the import lines themselves: production
 * code and the simulations never reach into the tests (the loopback fakes they share live in
 * testkit/), and the conversation rules (awareness, the check-in pre-check) import no I/O, so
 * they stay functions of their inputs.
 */
const root = join(import.meta.dirname, "..");
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^"'`]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Every module a file imports: package names as written, relative paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = m[1] ?? m[2] ?? "";
    if (!spec.startsWith(".")) return spec;
    return relative(root, resolve(root, dirname(file), spec))
      .split(sep)
      .join("/");
  });
}

describe("the house's arrows", () => {
  it("nothing outside test/ imports from test/", () => {
    const offenders = ["src", "simulations", "bench", "testkit"]
      .flatMap(sourceFiles)
      .flatMap((file) => importsOf(file).map((target) => ({ file, target })))
      .filter(({ target }) => target.startsWith("test/"));
    expect(offenders).toEqual([]);
  });

  it("the conversation rules import no I/O: no files, network, processes, stores, logs or settings readers", () => {
    const rules = sourceFiles("src/conversation");
    const io =
      /^(node:(fs|net|http|https|child_process|dgram|worker_threads)|lowdb|grammy|@anthropic-ai\/|pino)|^src\/(app|channels|companion|mind|model|store)\/|^src\/core\/log\.ts$/;
    const offenders = rules
      .flatMap((file) => importsOf(file).map((target) => ({ file, target })))
      .filter(({ target }) => io.test(target));
    expect(rules.length).toBeGreaterThan(5);
    expect(offenders).toEqual([]);
  });

  it("rooms import only rooms below them (app → channels → companion → mind → conversation, model → store → core)", () => {
    const below: Record<string, readonly string[]> = {
      app: ["channels", "companion", "mind", "conversation", "model", "store", "core"],
      channels: ["companion", "mind", "conversation", "model", "store", "core"],
      companion: ["mind", "conversation", "model", "store", "core"],
      mind: ["conversation", "model", "store", "core"],
      conversation: ["core"],
      model: ["core"],
      store: ["core"],
      core: [],
    };
    const roomOf = (path: string) => /^src\/([^/]+)\//.exec(path)?.[1];
    const offenders = sourceFiles("src")
      .flatMap((file) => importsOf(file).map((target) => ({ file, target })))
      .filter(({ file, target }) => {
        const from = roomOf(file.split(sep).join("/"));
        const to = roomOf(target);
        if (from === undefined || to === undefined || from === to) return false;
        return !(below[from] ?? []).includes(to);
      });
    expect(Object.keys(below).sort()).toEqual(
      readdirSync(join(root, "src"), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort(),
    );
    expect(offenders).toEqual([]);
  });

  it("the import scan sees relative and package imports (so the checks above can fail)", () => {
    const seen = importsOf("src/conversation/checkin-policy.ts");
    expect(seen).toContain("luxon");
    expect(seen.some((target) => target.startsWith("src/"))).toBe(true);
  });
});
