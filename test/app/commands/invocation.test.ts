import { describe, expect, it } from "vitest";
import { invocationFrom } from "../../../src/app/commands/invocation.ts";

/** What npm puts in the environment of `npm run <event>` for one of package.json's scripts. */
const npm = (event: string, script: string) => ({ npm_lifecycle_event: event, npm_lifecycle_script: script });

describe("the command as the person typed it", () => {
  it("through npm's cli script: `npm run cli -- <command>`, options after it", () => {
    const typed = invocationFrom(npm("cli", "node --import tsx src/cli.ts"));
    expect(typed.base).toBe("npm run cli --");
    expect(typed.typed("awareness")).toBe("npm run cli -- awareness");
    expect(typed.typed("awareness", "--help")).toBe("npm run cli -- awareness --help");
  });

  it("through a script that names its command: `npm start`, `npm run setup -- --help`", () => {
    expect(invocationFrom(npm("start", "node --import tsx src/cli.ts start")).typed("start")).toBe(
      "npm start",
    );
    const setup = invocationFrom(npm("setup", "node --import tsx src/cli.ts setup"));
    expect(setup.typed("setup")).toBe("npm run setup");
    expect(setup.typed("setup", "--help")).toBe("npm run setup -- --help");
  });

  it("once linked: `presence <command>`", () => {
    const typed = invocationFrom({ PRESENCE_INVOKED_AS: "presence" });
    expect(typed.linked).toBe(true);
    expect(typed.typed("status", "--json")).toBe("presence status --json");
  });

  it("from an npm script that is not presence's own, or by hand: the way that works in a fresh clone", () => {
    for (const env of [npm("test", "vitest run"), {}]) {
      const typed = invocationFrom(env);
      expect(typed.linked).toBe(false);
      expect(typed.typed("trace")).toBe("npm run cli -- trace");
    }
  });
});
