/**
 * How the person started the command line, so usage and error lines repeat what they typed.
 * npm tells its scripts which one runs (`npm_lifecycle_event`) and what it says
 * (`npm_lifecycle_script`); bin/presence.mjs, the command `npm link` installs, says so in
 * PRESENCE_INVOKED_AS. Started any other way (node by hand, pm2), the lines name the way that
 * works in a fresh clone: `npm run cli -- <command>`.
 */

/** What the person types to reach the command line, and each command with its arguments. */
export interface Invocation {
  /** The command line before a command: "npm run cli --", or "presence" once linked. */
  readonly base: string;
  /** Started as the command `npm link` installs. */
  readonly linked: boolean;
  /** The command `name` as typed, with `args` after it when given: "npm run cli -- awareness --help", "npm start". */
  typed(name: string, args?: string): string;
}

/** The npm script that runs any command: `npm run cli -- <command>`. */
const CLI_SCRIPT = "npm run cli --";

/** Reads how this process was started from its environment. */
export function invocationFrom(env: Record<string, string | undefined>): Invocation {
  const script = env.npm_lifecycle_script;
  const event = env.npm_lifecycle_event;
  if (event && script && /\bsrc\/cli\.ts\b/.test(script)) {
    const runner = event === "start" ? "npm start" : `npm run ${event}`;
    // A script that names its command (`npm run setup`) runs that one only.
    const fixed = /\bsrc\/cli\.ts\s+([a-z][a-z-]*)/.exec(script)?.[1];
    const base = fixed === undefined ? `${runner} --` : CLI_SCRIPT;
    return {
      base,
      linked: false,
      typed: (name, args) =>
        name === fixed ? (args ? `${runner} -- ${args}` : runner) : join(`${base} ${name}`, args),
    };
  }
  const linked = env.PRESENCE_INVOKED_AS;
  const base = linked || CLI_SCRIPT;
  return { base, linked: Boolean(linked), typed: (name, args) => join(`${base} ${name}`, args) };
}

function join(command: string, args: string | undefined): string {
  return args ? `${command} ${args}` : command;
}
