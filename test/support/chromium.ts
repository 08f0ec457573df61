import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/**
 * The browser behind the report check: Debian's chromium, driven by playwright-core (which
 * downloads nothing). A fresh clone may have none, so a machine without a runnable one skips
 * the browser check with a note saying how to enable it; under CI (`CI=true`, which .ci/run
 * sets) a missing or broken Chromium is a failure, so CI never passes without looking.
 */

/** The setting naming the Chromium binary; point it at a missing file to try the no-browser path. */
export const CHROMIUM_SETTING = "PRESENCE_TEST_CHROMIUM";

/** Debian's chromium package puts it here. */
const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** A Chromium that has not started within this long does not count as runnable. */
const LAUNCH_TIMEOUT_MS = 20_000;

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A running browser, or why there is none. */
export type TestChromium = { browser: Browser } | { unavailable: string };

/** How to get the browser check, for the skip note and the CI failure. */
export const ENABLE_BROWSER_CHECK = `install Debian's chromium (apt-get install chromium) or set ${CHROMIUM_SETTING} to a Chromium binary`;

/** Whether this run must have the browser: under CI it may not skip. */
export function browserRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return /^(1|true|yes)$/i.test(env.CI?.trim() ?? "");
}

/** Launches the configured Chromium; "runnable" means it really started, not that the file exists. */
export async function launchTestChromium(env: NodeJS.ProcessEnv = process.env): Promise<TestChromium> {
  const path = env[CHROMIUM_SETTING]?.trim() || DEFAULT_CHROMIUM;
  if (!existsSync(path)) return { unavailable: `there is no Chromium at ${path}` };
  try {
    return {
      browser: await chromium.launch({ executablePath: path, args: ARGS, timeout: LAUNCH_TIMEOUT_MS }),
    };
  } catch (error) {
    const first = (error instanceof Error ? error.message : String(error)).split("\n")[0]?.trim();
    return { unavailable: `the Chromium at ${path} did not start (${first})` };
  }
}
