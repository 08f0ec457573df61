import { type FakeResponse, lastUserText, type MessagesRequestBody } from "../testkit/messages-api.ts";
import { naiveLoopOps } from "./naive-loops.ts";

/**
 * The offline model of the simulations: deterministic and deliberately not clever. It
 * never reads the awareness block, always wants to check in, rotates through everyday
 * topics whatever was said, answers generically and reflects as little as a valid update
 * allows, apart from one word-matching habit with open loops (naive-loops.ts). So whatever good behaviour a run shows (backing off, not re-asking, no leaked
 * reasoning) is what the code guarantees on its own, not the model's tact.
 *
 * It answers the Messages API fake's requests (`api.setHandler(model.handler)`), so the
 * companion's real SDK path is exercised; usage is estimated by the fake from the request.
 */

/** The topics it rotates through, as the awareness lexicon names them. */
export const ROTATION = ["hydration", "sleep", "movement", "food", "work", "mood"] as const;

const CHECKIN_QUESTIONS: Record<(typeof ROTATION)[number], readonly string[]> = {
  hydration: ["How's the water intake going today?", "Have you had a glass of water lately?"],
  sleep: ["How did you sleep last night?", "Are you getting enough sleep this week?"],
  movement: ["Have you had a walk or a stretch today?", "Did you get some exercise in today?"],
  food: ["Have you eaten something decent today?", "What did you have for lunch?"],
  work: ["How's work going today?", "How are things at work?"],
  mood: ["How are you feeling right now?", "How's your mood today?"],
};

const REPLIES = [
  "Thanks for telling me. I'm here if you want to say more.",
  "Got it, thanks for letting me know.",
  "Good to hear from you. I'm around whenever you want to talk.",
];

/** Every `LEAK_EVERY`th check-in text carries internal reasoning the leak guard must strip. */
export const LEAK_EVERY = 5;

/** What the model has done so far, so a test can see it kept to its script. */
export interface NaiveModelStats {
  decisions: number;
  checkinTexts: number;
  replies: number;
  reflections: number;
  /** Check-in texts that carried internal reasoning. */
  leaks: number;
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  const?: unknown;
  items?: JsonSchema;
  minItems?: number;
  minLength?: number;
  minimum?: number;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
};

/** One run's naive model: its topic rotation and leak count start at zero, so runs do not depend on each other. */
export class NaiveModel {
  readonly stats: NaiveModelStats = { decisions: 0, checkinTexts: 0, replies: 0, reflections: 0, leaks: 0 };
  #rotation = 0;
  /** The topic just decided on: the next call (a forced write tool or plain text) writes that check-in. */
  #pendingTopic: (typeof ROTATION)[number] | undefined;

  /** The handler to plug into the Messages API fake. */
  readonly handler = (body: MessagesRequestBody): FakeResponse => this.respond(body);

  /**
   * Forgets a decided topic that was never written (the topic guard held the check-in
   * back). The harness calls it after every turn, so a decision never bleeds into a reply.
   */
  endTurn(): void {
    this.#pendingTopic = undefined;
  }

  respond(body: MessagesRequestBody): FakeResponse {
    const forced = body.tool_choice?.type === "tool" ? body.tool_choice.name : undefined;
    const tool = forced ? body.tools?.find((t) => t.name === forced) : undefined;
    const topic = this.#pendingTopic;
    this.#pendingTopic = undefined;
    if (tool) {
      const schema = (tool.input_schema ?? {}) as JsonSchema;
      const decision = this.#decide(schema);
      if (decision) return toolUse(tool.name, decision);
      const messageKey = Object.keys(schema.properties ?? {}).find(
        (k) => MESSAGE_KEY.test(k) && isType(schema.properties?.[k], "string"),
      );
      if (topic && messageKey)
        return toolUse(tool.name, { ...minimalObject(schema), [messageKey]: this.#checkin(topic) });
      this.stats.reflections += 1;
      const loops = schema.properties?.memory ? naiveLoopOps(lastUserText(body)) : [];
      return toolUse(tool.name, { ...minimalObject(schema), ...(loops.length > 0 ? { memory: loops } : {}) });
    }
    if (topic) return text(this.#checkin(topic));
    this.stats.replies += 1;
    return text(REPLIES[(this.stats.replies - 1) % REPLIES.length] as string);
  }

  /** Fills a heartbeat decision tool: always send, next topic in the rotation; undefined if not one. */
  #decide(schema: JsonSchema): Record<string, unknown> | undefined {
    const props = schema.properties ?? {};
    const sendKey = Object.keys(props).find((k) => SEND_KEY.test(k) && isType(props[k], "boolean"));
    const choiceKey = Object.keys(props).find((k) => props[k]?.enum?.includes("send"));
    if (!sendKey && !choiceKey) return undefined;
    const topic = ROTATION[this.#rotation % ROTATION.length] as (typeof ROTATION)[number];
    this.#rotation += 1;
    this.#pendingTopic = topic;
    this.stats.decisions += 1;
    const input = minimalObject(schema);
    for (const [key, prop] of Object.entries(props)) {
      if (key === sendKey) input[key] = true;
      else if (key === choiceKey) input[key] = "send";
      else if (/topic/i.test(key) && isType(prop, "string")) input[key] = topic;
      else if (/why|reason|rationale/i.test(key) && isType(prop, "string")) {
        input[key] = `It is time for a check-in; next in the rotation is ${topic}.`;
      }
    }
    return input;
  }

  #checkin(topic: (typeof ROTATION)[number]): string {
    this.stats.checkinTexts += 1;
    const variants = CHECKIN_QUESTIONS[topic];
    const question = variants[
      Math.floor(this.stats.checkinTexts / ROTATION.length) % variants.length
    ] as string;
    if (this.stats.checkinTexts % LEAK_EVERY !== 0) return question;
    this.stats.leaks += 1;
    return this.stats.leaks % 2 === 1
      ? `<thinking>No reply for a while; the rotation says ${topic}, so ask about that.</thinking>\n${question}`
      : `Reasoning: the rotation says ${topic}; keep it short and friendly.\n---\n${question}`;
  }
}

const SEND_KEY = /^(send|should_?send|fire|checkin|check_in)$/i;
const MESSAGE_KEY = /^(message|text)$/i;

function isType(schema: JsonSchema | undefined, type: string): boolean {
  if (!schema) return false;
  return Array.isArray(schema.type) ? schema.type.includes(type) : schema.type === type;
}

function text(value: string): FakeResponse {
  return { content: [{ type: "text", text: value }] };
}

function toolUse(name: string, input: Record<string, unknown>): FakeResponse {
  return { content: [{ type: "tool_use", name, input }] };
}

/** The smallest object a JSON schema accepts: required properties only, each at its simplest. */
export function minimalObject(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of schema.required ?? []) out[key] = minimalValue(schema.properties?.[key] ?? {});
  return out;
}

function minimalValue(schema: JsonSchema): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  const alternative = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (alternative) return minimalValue(alternative);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object":
      return minimalObject(schema);
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => minimalValue(schema.items ?? {}));
    case "string":
      return "n".repeat(Math.max(1, schema.minLength ?? 1));
    case "number":
    case "integer":
      return schema.minimum ?? 0;
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      return null;
  }
}
