import { z } from "zod";
import { isoUtc } from "./message.ts";

/**
 * What the companion told the person about check-ins that stopped for a reason they cannot
 * see from their side (the day's token budget is spent; the model has been unreachable), kept
 * in mind.json between ticks. At the core level, below the pure rule that reads and changes it
 * (conversation/checkin-notices.ts), the outbox that records a notice as said, and the store.
 */

/** The causes worth telling: neither is the person's choice, and neither shows from their side. */
export const noticeCauseSchema = z.enum(["budget", "model"]);
export type NoticeCause = z.infer<typeof noticeCauseSchema>;

/** One cause's last notice: when the person was told check-ins stopped, and when that they resumed. */
export const noticeCauseStateSchema = z.object({
  announcedAt: isoUtc.nullable().default(null),
  resumedAt: isoUtc.nullable().default(null),
});
export type NoticeCauseState = z.infer<typeof noticeCauseStateSchema>;

/** Every field has a default, so a mind.json written before notices existed still loads. */
export const checkinNoticeStateSchema = z.object({
  budget: noticeCauseStateSchema.default({ announcedAt: null, resumedAt: null }),
  model: noticeCauseStateSchema.default({ announcedAt: null, resumedAt: null }),
  /** The first check-in turn of the current unbroken run of model failures; null once the model answers. */
  modelFailingSince: isoUtc.nullable().default(null),
});
export type CheckinNoticeState = z.infer<typeof checkinNoticeStateSchema>;

/** Nothing told yet, no failure seen: a fresh install. */
export const emptyCheckinNoticeState: CheckinNoticeState = checkinNoticeStateSchema.parse({});

/**
 * What a notice said, carried on its outbox entry so the write that records it as sent also
 * records it as told (also when a crash cut the bookkeeping off and recovery finishes it).
 */
export const noticeSaidSchema = z.object({
  kind: z.enum(["stopped", "back"]),
  causes: z.array(noticeCauseSchema).min(1),
});
export type NoticeSaid = z.infer<typeof noticeSaidSchema>;
