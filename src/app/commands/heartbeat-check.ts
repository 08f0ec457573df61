import { shouldFireHeartbeat } from "../../conversation/checkin-policy.ts";
import { isCheckin, learnTiming } from "../../conversation/timing.ts";
import { emptyHeartbeatState, type HeartbeatState } from "../../core/checkin-settings.ts";
import type { Message } from "../../core/message.ts";
import { parseInstant, readLogAtMoment } from "./awareness.ts";
import { defineCommand } from "./command.ts";

/**
 * What a log alone says about the heartbeat state: the check-ins already sent are its
 * assistant messages marked `trigger: "heartbeat"`, notices and reactions left out as the
 * companion leaves them out (conversation/timing.ts's isCheckin). Pause, quiet-hours and zone overrides
 * live in the companion's data, not in a log, so only --paused-until stands in for them.
 */
function stateFromLog(log: readonly Message[], pausedUntil: Date | null): HeartbeatState {
  return {
    ...emptyHeartbeatState,
    pausedUntil: pausedUntil?.toISOString() ?? null,
    checkinsSent: log.filter(isCheckin).map((m) => m.ts),
  };
}

/** `presence heartbeat-check`: would a check-in go out at this moment, and if not, why. */
export const heartbeatCheckCommand = defineCommand({
  name: "heartbeat-check",
  summary: "say whether a check-in may be sent for a message log at a moment, and why",
  usage: "heartbeat-check --log FILE --now ISO [--tz IANA] [--paused-until ISO] [--json]",
  help: [
    "Runs the heartbeat pre-check (the rules applied before any model is called) on a message",
    "log at --now, with the check-in rules from the environment (PRESENCE_QUIET_HOURS,",
    "PRESENCE_MAX_UNANSWERED, ...). Check-ins already sent are the log's assistant messages with",
    'trigger "heartbeat". When in the week the person answers is learned from the same log (the',
    "8 weeks before --now), unless PRESENCE_LEARN_TIMING=off. Needs no bot token or API key.",
    "",
    "Options:",
    '  --log FILE           the log: { "messages": [...] } or an array; entries need role, text, ts',
    "  --now ISO            the moment, e.g. 2026-02-07T14:22:00Z; without an offset it is read in the zone",
    "  --tz IANA            the person's zone (default: PRESENCE_TIMEZONE, else this machine's)",
    "  --paused-until ISO   act as if check-ins were paused until then",
    "  --json               print { fire, reason, detail, now, timezone } as JSON (with the moment",
    "                       and the learned best hours when the reason is unlikely-moment)",
  ].join("\n"),
  options: {
    log: { type: "string" },
    now: { type: "string" },
    tz: { type: "string" },
    "paused-until": { type: "string" },
    json: { type: "boolean", default: false },
  },
  async run({ values }, io) {
    const { core, log, now, timezone, context } = await readLogAtMoment(values, "heartbeat", io);
    const pausedText = values["paused-until"];
    const pausedUntil =
      pausedText === undefined ? null : parseInstant("--paused-until", pausedText, timezone);
    const settings = { ...core, timezone };
    const state = stateFromLog(log, pausedUntil);
    const timing = core.learnTiming ? learnTiming(log, now, timezone) : undefined;
    const decision = shouldFireHeartbeat(context, now, settings, { ...state, ...(timing && { timing }) });
    if (values.json) {
      io.stdout(`${JSON.stringify({ ...decision, now: now.toISOString(), timezone }, null, 2)}\n`);
    } else {
      io.stdout(`${decision.fire ? "fire" : "hold"} (${decision.reason}): ${decision.detail}\n`);
    }
    return 0;
  },
});
