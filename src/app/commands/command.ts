import { type ParseArgsConfig, parseArgs } from "node:util";

/**
 * A mistake in how a command was called (or in what it was given): printed as one line after
 * the command as the person typed it, exit code 2. With `seeHelp`, the line ends by naming the
 * command's --help.
 */
export class UsageError extends Error {
  override readonly name = "UsageError";
  readonly seeHelp: boolean;

  constructor(message: string, options: { seeHelp?: boolean } = {}) {
    super(message);
    this.seeHelp = options.seeHelp ?? false;
  }
}

/**
 * The exit code of a command the person interrupted with Ctrl-C: 128 + SIGINT's number, as
 * shells report a process SIGINT ended. The command line then ends by SIGINT itself, so a
 * shell's `&&` and npm stop there too.
 */
export const EXIT_INTERRUPTED = 130;

type Options = NonNullable<ParseArgsConfig["options"]>;

/** What a command writes to; the real process passes stdout/stderr, tests pass buffers. */
export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** True when a person is at the terminal (questions may be asked). */
  interactive: boolean;
  /** The terminal's width when stdout is one; undefined for a pipe or a file (layout.ts's outputWidth). */
  columns?: number;
}

/**
 * One subcommand of the `presence` command line. Each lives in its own file under
 * src/app/commands (simulate and bench beside the code they run) and is listed in
 * src/cli.ts; run() returns the exit code.
 */
export interface Command<O extends Options = Options> {
  name: string;
  /** One line for the overview. */
  summary: string;
  /** The usage line, e.g. "awareness --log FILE --now ISO [--tz IANA] [--json]". */
  usage: string;
  /** Longer help text shown by `presence <command> --help`. */
  help: string;
  options: O;
  /** Whether the command accepts positional arguments. */
  positionals?: boolean;
  run(args: ParsedArgs<O>, io: CommandIO): Promise<number>;
}

export interface ParsedArgs<O extends Options> {
  values: ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>["values"];
  positionals: string[];
}

/** Strictly parses a command's arguments; unknown flags become a UsageError. */
export function parseCommandArgs<O extends Options>(command: Command<O>, argv: string[]): ParsedArgs<O> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    if (!command.positionals && positionals.length > 0) {
      throw new UsageError(`unexpected argument "${positionals[0]}"`, { seeHelp: true });
    }
    return { values, positionals } as ParsedArgs<O>;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(parseProblem(error), { seeHelp: true });
  }
}

/** node:util's complaint in a few words: its unknown-option text runs on about "--" and positionals. */
function parseProblem(error: unknown): string {
  const message = error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  return unknown ? `unknown option "${unknown[1]}"` : message;
}

/** Helper for commands: declare options with type inference intact. */
export function defineCommand<O extends Options>(command: Command<O>): Command<O> {
  return command;
}
