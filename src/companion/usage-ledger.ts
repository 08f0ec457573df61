import type { ModelConfig } from "../app/config.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { UsageRecord } from "../core/usage.ts";
import { ModelClient } from "../model/llm.ts";
import type { MindStore } from "../store/mind.ts";

/** The onUsage hook that writes every call's usage into the mind's ledger. */
export function usageLedger(mind: MindStore): (usage: UsageRecord) => Promise<void> {
  return (usage) => mind.recordUsage(usage);
}

/** A model client whose usage lands in the mind's ledger (what the daily budget counts). */
export function createLedgerModelClient(
  config: ModelConfig,
  deps: { clock: Clock; mind: MindStore; logger?: Logger },
): ModelClient {
  return new ModelClient(config, {
    clock: deps.clock,
    onUsage: usageLedger(deps.mind),
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
}
