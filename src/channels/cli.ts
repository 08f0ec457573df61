import { writeFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { Logger } from "../log.ts";
import type { Delivery, OutboundPort, OutgoingMessage } from "../port.ts";
import type { ChannelCompanion } from "./channel.ts";
import type { CommandHandlers } from "./command-handlers.ts";
import { commandOf } from "./commands.ts";

/**
 * The terminal as a channel (`npm run chat`): the same companion, the same log and memory,
 * channel "cli". Lines typed while it thinks are picked up together in its next turn, as on
 * Telegram; the slash commands work too.
 */

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
}

export interface CliChatOptions {
  companion: ChannelCompanion;
  commands: CommandHandlers;
  input: Readable;
  write: (text: string) => void;
  logger: Logger;
  /** Where /export writes its file. */
  exportDir: string;
}

const GOODBYE = /^\/(quit|exit|bye)$/i;

/** Runs the conversation until the input ends or the person types /quit; waits for replies in flight. */
export async function runCliChat(options: CliChatOptions): Promise<void> {
  const { companion, commands, write, logger } = options;
  const inFlight = new Set<Promise<unknown>>();
  const track = (turn: Promise<unknown>) => {
    const tracked = turn.catch((err: unknown) => {
      logger.error({ err }, "reply failed");
      write("\n(I couldn't answer just now; I'll answer when you start me again.)\n\n");
    });
    inFlight.add(tracked);
    void tracked.finally(() => inFlight.delete(tracked));
  };
  write(
    "Talking to presence in the terminal. /status, /memory, /why and the other commands work here; /quit ends.\n\n",
  );
  const lines = createInterface({ input: options.input, terminal: false });
  for await (const raw of lines) {
    const text = raw.trim();
    if (text === "") continue;
    if (GOODBYE.test(text)) break;
    const command = commandOf(text);
    if (command) {
      const reply = await commands.run(command.name, command.args);
      if ("text" in reply) write(`\n${reply.text}\n\n`);
      else {
        const path = `${options.exportDir}/${reply.document.fileName}`;
        await writeFile(path, reply.document.contents, { mode: 0o600 });
        write(`\n${reply.document.caption}\nWritten to ${path}\n\n`);
      }
      continue;
    }
    await companion.receive({ text, channel: "cli" });
    track(companion.reply());
  }
  lines.close();
  await Promise.allSettled([...inFlight]);
}
