import cron from "node-cron";
import { type HeartbeatCron, nextFireTime } from "../conversation/schedule.ts";
import { InFlight } from "../core/in-flight.ts";
import type { Logger } from "../core/log.ts";
import { requireKnownZone } from "../core/zones.ts";

/**
 * The heartbeat's timer: node-cron in the person's zone calls `onTick` at each fire time.
 * Ticks never overlap; a tick that throws is logged and the schedule carries on (grammY's
 * bot.catch does not see work started by a timer); ticks missed while the process was
 * down or blocked are not made up, because a burst of stale check-ins is worse than none.
 */

export interface HeartbeatScheduleOptions {
  /** A checked cron expression (5 fields, or 6 with seconds first), e.g. "7 * * * *". */
  cron: HeartbeatCron;
  /** IANA zone the expression's wall times are read in. */
  timezone: string;
  /** Called with the scheduled instant of the tick. */
  onTick: (at: Date) => Promise<void> | void;
  logger: Logger;
}

export interface HeartbeatSchedule {
  /** Stops scheduling and resolves once a tick in flight has finished. */
  stop(): Promise<void>;
  /** The next tick after `now` (for /status), or null once stopped. */
  nextRun(now: Date): Date | null;
}

/** Starts the heartbeat schedule; throws a RangeError for an unknown zone. */
export function startHeartbeatSchedule(options: HeartbeatScheduleOptions): HeartbeatSchedule {
  const { cron: expression, timezone, onTick, logger } = options;
  requireKnownZone(timezone);
  const ticks = new InFlight();
  let stopped = false;

  const tick = async (at: Date): Promise<void> => {
    try {
      await onTick(at);
    } catch (err) {
      logger.error({ err, tick: at.toISOString() }, "heartbeat tick failed");
    }
  };

  const task = cron.schedule(
    expression,
    (context) => {
      const run = tick(context.date);
      ticks.track(run);
      return run;
    },
    {
      name: "heartbeat",
      timezone,
      noOverlap: true,
      logger: {
        info: (message) => logger.debug({ source: "node-cron" }, message),
        warn: (message) => logger.warn({ source: "node-cron" }, message),
        error: (message, err) => logger.error({ source: "node-cron", err: err ?? message }, String(message)),
        debug: (message) => logger.debug({ source: "node-cron" }, String(message)),
      },
    },
  );
  logger.info({ cron: expression, timezone }, "heartbeat scheduled");

  return {
    async stop() {
      if (!stopped) {
        stopped = true;
        await task.stop();
        await task.destroy();
      }
      await ticks.settled();
    },
    nextRun(now) {
      return stopped ? null : nextFireTime(expression, timezone, now);
    },
  };
}
