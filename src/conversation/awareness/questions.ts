import { type Message, messageText } from "../../core/message.ts";
import { DEFAULT_LANGUAGE, englishReading } from "./reading.ts";
import { detectTone } from "./tone.ts";

/**
 * Whether a message asks for an answer, and whether the companion's check-in only wished well.
 * The unanswered count, the open questions and the topic guard all rest on these, so they read
 * shapes a person writes in chat ("how'd it go", "u up", "tell me how it went") and leave out
 * what only looks like a question: a question put to oneself, a lead-in answered at once, a
 * figure given as a guess, and the person's friction ("why do you keep asking?").
 */

const WH_OPENERS = new Set(
  "how what when where why who which whose whom how's what's where's who's when's why's any anything".split(
    " ",
  ),
);
const AUXILIARY_OPENERS = new Set(
  `did do does are is was were have has had can could would will should shall isn't aren't don't didn't
  doesn't won't haven't hasn't`.split(/\s+/),
);
const SUBJECTS = new Set("you u ya we i it they he she that this there your everything anything".split(" "));
/**
 * Openers that ask about a thing named next ("is the clausius inequality gonna be on it"). Not
 * do or have, which order ("Do the dishes", "Have a great day"), nor did, was or were, which chat
 * opens statements with when it drops the "I" or "it" ("did the walk btw", "was the best day").
 */
const ASKS_ABOUT_A_THING = new Set("is are does will would can could should".split(" "));
const DETERMINERS = new Set("the my his her our their a an".split(" "));
/**
 * A request to be told ("tell me how it went", "explain the 4 processes like i'm 5"), not a report
 * of being told ("I'm glad you tell me").
 */
const REQUESTS =
  /(?:^|[.!?\p{Extended_Pictographic}]\s*|\b(?:please|pls|can you|could you|do)\s+)(?:tell me|let me know)\b|(?:^|[.!?\p{Extended_Pictographic}]\s*)(?:ok |okay |so |now |pls |please )?(?:explain|describe|summari[sz]e|walk me through)\b|\bcurious (?:how|what|whether|if)\b/iu;

/** Questions put to oneself ("why did I wear the silk blouse", "who even am I"): nobody is asked. */
const ASKS_ONESELF = /^(?:why (?:did|do|am|would) i|who (?:even )?am i|what was i thinking)\b/i;

function asksBySyntax(sentence: string): boolean {
  const trimmed = sentence.trim();
  if (ASKS_ONESELF.test(trimmed)) return false;
  const [first = "", second = ""] = trimmed.toLowerCase().split(/[\s,]+/);
  if (WH_OPENERS.has(first)) return second !== "a" && second !== "an";
  return (
    (AUXILIARY_OPENERS.has(first) && SUBJECTS.has(second)) ||
    (ASKS_ABOUT_A_THING.has(first) && DETERMINERS.has(second))
  );
}

/**
 * Whether a text asks for an answer: a question mark (in any language; "?!" exclaims), or, in
 * English, a sentence shaped like a question without one ("how's the water going", "did you
 * sleep") or a request to be told something. The person's friction with the companion asks
 * nothing, whatever its shape ("why do you keep asking?"): `by` says whose text it is.
 */
export function isQuestion(text: string, by: Message["role"], language: string = DEFAULT_LANGUAGE): boolean {
  const english = englishReading(text, language) !== null;
  // The person's friction asks nothing ("do you have to open with that every day?", "happy?"),
  // unless a sentence of it asks on its own without friction ("I do not appreciate being woken
  // on a Saturday. Is there a way to stop that?").
  if (by === "user" && english && detectTone(text, language) === "tense") {
    const sentences = text.match(/[^.!?\n]+[.!?]*/g) ?? [];
    return (
      sentences.length > 1 &&
      sentences.some(
        (s) => /\?\s*$/.test(s) && detectTone(s, language) !== "tense" && isQuestion(s, by, language),
      )
    );
  }
  // "?!" exclaims ("Foundation on the sleeve?!"); "?" after a hedge doubts ("went fine i think??").
  // A lead-in answered at once ("Honestly? Relieved.", "Guess what? Got it") asks nothing.
  const marks = text
    .replace(/\?+!+|!+\?+/g, "!")
    .replace(/\b(?:i think|i guess|i hope|maybe|probably)\s*\?+/gi, ".")
    // A figure given as a guess ("like 6?", "Maybe 4? I'll survive.") answers rather than asks.
    .replace(
      /(?:^|[.!?]\s*)(?:like|about|around|maybe|prob|probably) ~?\d+(?:[.,:]\d+)?\s*\w{0,5}\s*\?+/gi,
      ".",
    )
    .replace(
      /^\s*(?:honestly|seriously|truthfully|frankly|guess what|you know what)\s*\?+\s*(?=\p{L})/iu,
      "",
    );
  if (/[?\u00bf\uff1f]/.test(marks)) return true;
  if (!english) return false;
  if (REQUESTS.test(text)) return true;
  // "lol", "haha" and an emoji close a clause as a full stop would: "toast in the car lol does
  // that count", "she thinks im buying one 😂 should i tell her".
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .split(/[.!\n]+|\b(?:lol|lmao|haha)\b|\p{Extended_Pictographic}+/iu)
    .some(asksBySyntax);
}

/** Whether a message asks something: reflection's annotation when present, else {@link isQuestion}. */
export function messageIsQuestion(message: Message, language: string = DEFAULT_LANGUAGE): boolean {
  return message.annotations?.question ?? isQuestion(messageText(message), message.role, language);
}

/** The openings of a sentence that only wishes well. */
const WISH =
  /^(?:good luck|best of luck|fingers crossed|break a leg|have (?:fun|a (?:good|great|lovely|nice|fun))\b|enjoy\b|rooting for you|you(?:'ve| have)? got this|safe travels|all the best|thinking of you)/iu;
/** What turns a wish into a nudge or an ask: "Enjoy lunch, and drink some water with it." */
const NUDGE =
  /\b(?:don'?t forget|remember|make sure|drink|eat|take|try|ping|text|tell|call|let me know|report back|update me|how|what|did|have you)\b/iu;

/**
 * Whether the companion's message only wishes well ("Good luck at physio!", "Enjoy the concert
 * 🎶"): it asks nothing, so a later "how did it go?" is a follow-up, not a repeat of an ask
 * left unanswered. Every sentence opens with a wish and nothing in the message nudges or asks
 * ("Good luck! Did you sleep?", "Have a good morning, and don't forget your meds!" ask); a hope
 * ("Hope the interview went well!") invites an answer, so it is no mere wish either.
 */
export function onlyWishesWell(text: string): boolean {
  const plain = text.replace(/[\u2018\u2019]/g, "'");
  const sentences = plain
    .split(/[.!?\n]+/)
    .map((s) => s.replace(/[^\p{L}\p{N}' ]+/gu, " ").trim())
    .filter((s) => s !== "");
  return (
    sentences.length > 0 && !plain.includes("?") && !NUDGE.test(plain) && sentences.every((s) => WISH.test(s))
  );
}

/** Whether a message the companion sent waits for an answer: a question, or a check-in that does more than wish well. */
export function asksSomething(message: Message, language?: string): boolean {
  return (
    messageIsQuestion(message, language) || (message.trigger === "heartbeat" && !onlyWishesWell(message.text))
  );
}
