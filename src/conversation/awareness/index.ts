export {
  AwarenessSettingsError,
  answeredTopicsSince,
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
export { elapsedMinutes } from "./time.ts";
export { detectTone, type ExchangeTone, exchangeTone, messageTone, toneScore } from "./tone.ts";
export {
  canonicalTopic,
  detectTopics,
  FALLBACK_PREFIX,
  isQuestion,
  knownTopics,
  messageIsQuestion,
  messageTopics,
  topicDomain,
  topicName,
} from "./topics.ts";
