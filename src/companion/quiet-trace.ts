import type { Logger } from "../core/log.ts";
import type { NewTraceRecord, Trace } from "../store/trace.ts";

/**
 * Appends a record to the trace and never throws: the trace explains a turn afterwards, so
 * a trace that cannot be written (a full disk) must not fail the turn or lose its answer.
 */
export type QuietTrace = (record: NewTraceRecord) => Promise<void>;

/** Binds the trace and the process log once, so every step of a turn traces the same forgiving way. */
export function quietTrace(trace: Trace, logger: Logger): QuietTrace {
  return async (record) => {
    try {
      await trace.append(record);
    } catch (error) {
      logger.warn({ err: error }, "could not write the trace");
    }
  };
}
