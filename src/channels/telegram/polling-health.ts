import type { Transformer } from "grammy";
import type { Logger } from "../../core/log.ts";
import { describeTransportFailure } from "./transport.ts";

/**
 * Says in the process log when receiving from Telegram stops working and when it works again.
 * grammY retries a failed long poll every few seconds on its own and says nothing; without
 * this an outage would leave no trace in the log, and a line per retry would flood it.
 */
export function pollingHealthTransformer(logger: Logger): Transformer {
  let failing = false;
  const failed = (problem: string) => {
    if (failing) return;
    failing = true;
    logger.warn({ problem }, "cannot receive from Telegram; retrying every few seconds until it answers");
  };
  return async (prev, method, payload, signal) => {
    if (method !== "getUpdates") return prev(method, payload, signal);
    try {
      const result = await prev(method, payload, signal);
      if (!result.ok) failed(`${result.error_code} ${result.description}`);
      else if (failing) {
        failing = false;
        logger.info("receiving from Telegram again");
      }
      return result;
    } catch (error) {
      if (!signal?.aborted) failed(describeTransportFailure(error));
      throw error;
    }
  };
}
