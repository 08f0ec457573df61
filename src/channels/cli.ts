import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { SettleTimes } from "../companion/companion.ts";
import { InFlight } from "../core/in-flight.ts";
import type { Logger } from "../core/log.ts";
import type { Delivery, OutboundPort, OutgoingMessage, OutgoingReaction } from "../core/port.ts";
import type { ChannelCompanion } from "./channel.ts";
import type { CommandHandlers } from "./command-handlers.ts";
import { commandOf } from "./commands.ts";

/**
 * The terminal as a channel (`npm run chat`): the same companion, the same log and memory,
 * channel "cli". Lines typed while it thinks are picked up together in its next turn, as on
 * Telegram; the slash commands work too.
 */

/**
 * The terminal answers each line at once: a line comes whole, with Enter, and lines typed while
 * the companion thinks join its next turn anyway.
 */
const TERMINAL_SETTLE: SettleTimes = { pauseMs: 0, maxMs: 0 };

/**
 * A terminal shows text of any length; an answer is cut into pages (/memory) of about a screen,
 * some fifty lines of eighty columns, so its start has not scrolled away before it is read.
 */
export const TERMINAL_TEXT_LIMIT = 4_096;

/** Prints what the companion says; check-ins that fire while chatting appear here too. */
export class CliOutbound implements OutboundPort {
  readonly #write: (text: string) => void;
  readonly #speaker: string;

  constructor(write: (text: string) => void, speaker = "presence") {
    this.#write = write;
    this.#speaker = speaker;
  }

  async send(message: OutgoingMessage): Promise<Delivery> {
    const label = message.kind === "heartbeat" ? `${this.#speaker} (checking in)` : this.#speaker;
    this.#write(`\n${label}: ${message.text}\n\n`);
    return {};
  }

  /** The terminal cannot mark a line: the reaction is printed as what it is. */
  async react(reaction: OutgoingReaction): Promise<Delivery> {
    this.#write(`\n${this.#speaker}: (reacted ${reaction.emoji})\n\n`);
    return {};
  }
}

export interface CliChatOptions {
  /** The terminal only hands over lines and asks for answers. */
  companion: Pick<ChannelCompanion, "receive" | "settleReplies">;
  commands: CommandHandlers;
  input: Readable;
  write: (text: string) => void;
  logger: Logger;
  /** Where /export writes its file: inside the data dir (exportsDir in companion/data-rights.ts), so /wipe deletes it. */
  exportDir: string;
}

const GOODBYE = /^\/(quit|exit|bye)$/i;

/** Runs the conversation until the input ends or the person types /quit; waits for replies in flight. */
export async function runCliChat(options: CliChatOptions): Promise<void> {
  const { companion, commands, write, logger } = options;
  const replies = new InFlight((err: unknown) => {
    logger.error({ err }, "reply failed");
    write("\n(I couldn't answer just now; I'll answer when you start me again.)\n\n");
  });
  const settle = companion.settleReplies(TERMINAL_SETTLE, (reply) => replies.track(reply));
  write(
    "Talking to presence in the terminal. The same commands work here (/help lists them); /quit ends.\n\n",
  );
  const lines = createInterface({ input: options.input, terminal: false });
  for await (const raw of lines) {
    const text = raw.trim();
    if (text === "") continue;
    if (GOODBYE.test(text)) break;
    const command = commandOf(text);
    if (command) {
      try {
        const reply = await commands.answer(command);
        if ("text" in reply) write(`\n${reply.text}\n\n`);
        else {
          const path = await writeExport(options.exportDir, reply.document);
          write(
            `\n${reply.document.caption}\nWritten to ${path} (only you can read it; /wipe deletes it).\n\n`,
          );
        }
      } catch (err) {
        logger.error({ err, command: command.name ?? "unknown" }, "command failed");
        write(
          `\n(/${command.name ?? command.typed} failed on my side: ${err instanceof Error ? err.message : String(err)})\n\n`,
        );
      }
      continue;
    }
    await companion.receive({ text, channel: "cli" });
    settle.arrived();
  }
  lines.close();
  await replies.settled();
}

/** Writes an /export file readable by the owner only (in a directory only they can enter); returns its path. */
async function writeExport(
  dir: string,
  document: { fileName: string; contents: Uint8Array },
): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const path = join(dir, document.fileName);
  await writeFile(path, document.contents, { mode: 0o600 });
  await chmod(path, 0o600);
  return path;
}
