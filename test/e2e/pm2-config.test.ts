import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT_GRACE_MS } from "../../src/app/commands/start.ts";
import { STOP_BUDGET } from "../../src/app/main.ts";
import { CONFIRM_OFFSET_MS } from "../../src/channels/telegram/bot.ts";

const ROOT = join(import.meta.dirname, "..", "..");

interface App {
  script: string;
  args: string[];
  interpreter: string;
  cwd: string;
  kill_timeout: number;
  autorestart: boolean;
  stop_exit_codes: number[];
  max_memory_restart: string;
  out_file: string;
  error_file: string;
}

const { apps } = createRequire(import.meta.url)(join(ROOT, "ecosystem.config.cjs")) as { apps: App[] };

describe("ecosystem.config.cjs", () => {
  it("runs `node --import tsx src/cli.ts start` from the project, not a .ts file pm2 would hand to another runtime", () => {
    const [app] = apps;
    expect(apps).toHaveLength(1);
    expect(app?.script).toBe(process.execPath);
    expect(app?.interpreter).toBe("none");
    expect(app?.args).toEqual(["--import", "tsx", "src/cli.ts", "start"]);
    expect(app?.cwd).toBe(ROOT);
  });

  it("gives a graceful stop more time than its worst case, and restarts, limits memory and keeps logs", () => {
    const [app] = apps;
    const worstStopMs =
      CONFIRM_OFFSET_MS + STOP_BUDGET.channelGraceMs + STOP_BUDGET.companionCloseMs + EXIT_GRACE_MS;
    expect(app?.kill_timeout).toBeGreaterThan(worstStopMs);
    expect(app?.autorestart).toBe(true);
    expect(app?.stop_exit_codes).toEqual([2]);
    expect(app?.max_memory_restart).toMatch(/^\d+M$/);
    expect(app?.out_file).toMatch(/presence\.out\.log$/);
    expect(app?.error_file).toMatch(/presence\.err\.log$/);
  });
});
