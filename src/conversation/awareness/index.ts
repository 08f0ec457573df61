export {
  AwarenessSettingsError,
  buildAwarenessContext,
  unansweredAskedTopics,
} from "./build.ts";
export {
  type AwarenessContext,
  type AwarenessSettings,
  awarenessContextSchema,
  type Domain,
  defaultAwarenessSettings,
  domainSchema,
  type PriorMemory,
  type Trigger,
} from "./context.ts";
export { formatAwarenessForPrompt } from "./format.ts";
export { conversationLanguage, readText } from "./reading.ts";
export { elapsedMinutes } from "./time.ts";
export {
  detectMood,
  detectTone,
  type ExchangeTone,
  exchangeTone,
  messageMood,
  messageTone,
  toneScore,
} from "./tone.ts";
export {
  canonicalTopic,
  detectTopics,
  isQuestion,
  knownTopics,
  messageIsQuestion,
  messageTopics,
  topicDomain,
  topicName,
  topicSubject,
} from "./topics.ts";
