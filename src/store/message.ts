/**
 * The message schemas live at the core level (src/message.ts) since awareness, the check-in
 * rules and the store all read them. This forwards the store's old path until the rooms move
 * rewrites every import (issue 9).
 */
export {
  type Annotations,
  annotationsSchema,
  type Channel,
  channelSchema,
  type Media,
  type Message,
  mediaSchema,
  messageSchema,
  type Tone,
  toneSchema,
} from "../message.ts";
