import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The arrows docs/architecture.md draws, checked on the import lines themselves, over every
 * folder of the repository that holds code: src/cli.ts is the one top, above app, the
 * simulations and the benchmarks; those two enter app only through its public entry
 * (src/app/runtime.ts), and app imports neither; below app each room imports only the rooms
 * under it; the loopback fakes in testkit/ serve the tests and the simulations; nothing but
 * the tests imports test/; and the conversation rules import no I/O, so they stay functions of
 * their inputs.
 */
const root = join(import.meta.dirname, "..");
/** `import … from`, `export … from`, a bare `import "…"` for its side effects, and `import("…")`. */
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\b[^"'`]*?from\s*["']([^"']+)["']|(?:^|\n)\s*import\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
const CODE = /\.(ts|mts|js|mjs|cjs)$/;
/** Top-level folders that are not code: hidden ones, and what git ignores (packages, runtime data, coverage, logs). */
const NOT_CODE = new Set(["node_modules", "data", "coverage", "logs"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name).split(sep).join("/");
    if (entry.isDirectory()) return sourceFiles(path);
    return CODE.test(entry.name) ? [path] : [];
  });
}

/** The repository's top-level folders that hold code (files at the root, such as vitest.config.ts, configure tools). */
function codeFolders(): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith(".") && !NOT_CODE.has(entry.name))
    .map((entry) => entry.name)
    .filter((dir) => sourceFiles(dir).length > 0);
}

/** Every module a file imports: package names as written, relative paths from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = m[1] ?? m[2] ?? m[3] ?? "";
    if (!spec.startsWith(".")) return spec;
    return relative(root, resolve(root, dirname(file), spec))
      .split(sep)
      .join("/");
  });
}

/** A file's room: "cli" for src/cli.ts, a folder's name in src/, else its top-level folder's; packages have none. */
function roomOf(path: string): string | undefined {
  if (!existsSync(join(root, path))) return undefined;
  if (path === "src/cli.ts") return "cli";
  return /^src\/([^/]+)\//.exec(path)?.[1] ?? /^([^/]+)\//.exec(path)?.[1];
}

/** app's public entry: the one file of app that the simulations and the benchmarks may import. */
const APP_ENTRY = "src/app/runtime.ts";
const BELOW_APP = ["channels", "companion", "mind", "conversation", "model", "store", "core"] as const;

/**
 * What each room may import besides itself: a room by name, or one file of a room by its path.
 * test/ may import anything and is left out.
 */
const ARROWS: Record<string, readonly string[]> = {
  cli: ["app", "simulations", "bench"],
  bench: ["simulations", APP_ENTRY, ...BELOW_APP],
  simulations: [APP_ENTRY, ...BELOW_APP, "testkit"],
  testkit: ["model", "core"],
  bin: [],
  app: BELOW_APP,
  channels: ["companion", "mind", "conversation", "model", "store", "core"],
  companion: ["mind", "conversation", "model", "store", "core"],
  mind: ["conversation", "model", "store", "core"],
  conversation: ["core"],
  model: ["core"],
  store: ["core"],
  core: [],
};

/** Every import of the given folders that crosses from one room to another. */
function crossings(folders: readonly string[]): { file: string; target: string; from: string; to: string }[] {
  return folders
    .flatMap(sourceFiles)
    .flatMap((file) =>
      importsOf(file).map((target) => ({ file, target, from: roomOf(file), to: roomOf(target) })),
    )
    .flatMap(({ file, target, from, to }) =>
      from === undefined || to === undefined || from === to ? [] : [{ file, target, from, to }],
    );
}

describe("the house's arrows", () => {
  it("nothing outside test/ imports from test/", () => {
    const offenders = crossings(codeFolders().filter((dir) => dir !== "test")).filter(
      ({ to }) => to === "test",
    );
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

  it("each room imports only what its arrows allow: cli on top, simulations and bench through app's public entry, app → channels → companion → mind → conversation, model → store → core", () => {
    const rooms = new Set(
      codeFolders()
        .flatMap(sourceFiles)
        .map((file) => roomOf(file)),
    );
    const offenders = crossings(codeFolders())
      .filter(({ from }) => from !== "test")
      .filter(
        ({ from, to, target }) => !(ARROWS[from] ?? []).some((arrow) => arrow === to || arrow === target),
      )
      .map(({ file, target }) => ({ file, target }));
    expect([...Object.keys(ARROWS), "test"].sort()).toEqual([...rooms].sort());
    expect(offenders).toEqual([]);
  });

  it("the import scan sees relative, package, dynamic and re-exported imports, and knows the rooms (so the checks above can fail)", () => {
    const seen = importsOf("src/conversation/checkin-policy.ts");
    expect(seen).toContain("luxon");
    expect(seen.some((target) => target.startsWith("src/"))).toBe(true);
    expect(importsOf("bench/command.ts")).toContain("bench/index.ts");
    expect(importsOf(APP_ENTRY)).toContain("src/store/lock.ts");
    expect(["src/cli.ts", "src/app/main.ts", "simulations/harness.ts", "luxon"].map(roomOf)).toEqual([
      "cli",
      "app",
      "simulations",
      undefined,
    ]);
  });
});
