import { describe, expect, it } from "vitest";
import { loadModelSettings } from "../../src/app/config.ts";
import type { CallPurpose } from "../../src/core/usage.ts";
import {
  choosePrefixCache,
  prefixCacheFor,
  REFLECTION_PREFIX_PURPOSES,
  recentReuse,
  TURN_PREFIX_PURPOSES,
  withPrefixCache,
} from "../../src/model/cache-plan.ts";
import { shippedPriceTable } from "../../src/model/prices.ts";

const prices = shippedPriceTable();
const SONNET = "claude-sonnet-5-5";

/** Calls at these minutes after 09:00. */
function calls(minutes: number[], purpose: CallPurpose = "reply", model = SONNET) {
  return minutes.map((m) => ({ ts: new Date(Date.UTC(2026, 3, 6, 9, m)).toISOString(), purpose, model }));
}

describe("recentReuse", () => {
  it("measures the gaps between calls that share the prefix: its purposes, on its model", () => {
    const usage = [
      ...calls([0, 2, 4, 70]),
      ...calls([1, 3], "reflect"),
      ...calls([5, 6], "reply", "claude-haiku-5-5"),
      ...calls([130], "heartbeat-write", `${SONNET}-20261001`),
    ];
    expect(recentReuse(usage, TURN_PREFIX_PURPOSES, SONNET)).toEqual({ samples: 4, within5m: 0.5 });
    expect(recentReuse(usage, REFLECTION_PREFIX_PURPOSES, SONNET)).toEqual({ samples: 1, within5m: 1 });
  });

  it("counts a dated snapshot as the same model, and a model that only shares the name's start as another model", () => {
    const usage = [
      ...calls([0, 1, 2], "reply", "claude-sonnet-5-5-20261001"),
      ...calls([3, 4], "reply", "claude-sonnet-5-5-mini"),
    ];
    expect(recentReuse(usage, TURN_PREFIX_PURPOSES, SONNET)).toEqual({ samples: 2, within5m: 1 });
  });

  it("reads a ledger edited by hand as the one the bot writes: calls out of time order, times with an offset", () => {
    const written = calls([0, 2, 4, 70, 73]);
    expect(recentReuse(written, TURN_PREFIX_PURPOSES, SONNET)).toEqual({ samples: 4, within5m: 0.75 });
    const reordered = [0, 3, 1, 2, 4].map((i) => written[i] as (typeof written)[number]);
    expect(recentReuse(reordered, TURN_PREFIX_PURPOSES, SONNET)).toEqual({ samples: 4, within5m: 0.75 });
    const spelled = written.map((call, i) => (i === 2 ? { ...call, ts: "2026-04-06T11:04:00+02:00" } : call));
    expect(recentReuse(spelled, TURN_PREFIX_PURPOSES, SONNET)).toEqual({ samples: 4, within5m: 0.75 });
    // In text order but not in time order: 10:14+02:00 is 08:14Z, before every other call.
    const early = [
      ...written.slice(0, 4),
      { ...(written[4] as (typeof written)[number]), ts: "2026-04-06T10:14:00+02:00" },
    ];
    expect(recentReuse(early, TURN_PREFIX_PURPOSES, SONNET)).toEqual({ samples: 4, within5m: 0.5 });
  });

  it("looks at the latest twenty gaps only", () => {
    const old = Array.from({ length: 30 }, (_, i) => i); // a minute apart
    const recent = Array.from({ length: 21 }, (_, i) => 100 + i * 10); // ten minutes apart
    expect(recentReuse(calls([...old, ...recent]), TURN_PREFIX_PURPOSES, SONNET)).toEqual({
      samples: 20,
      within5m: 0,
    });
  });
});

describe("choosePrefixCache", () => {
  it("marks nothing until there are three gaps to go by", () => {
    expect(choosePrefixCache({ samples: 2, within5m: 1 }, prices, SONNET)).toBe("none");
    expect(choosePrefixCache({ samples: 3, within5m: 1 }, prices, SONNET)).toBe("5m");
  });

  it("marks the prefix only when the reads it can expect pay for the writes, by the model's prices", () => {
    // Sonnet: a marked prefix costs 0.05 when read, 1.25 when written; unmarked, 1: even at a reuse of 0.21.
    expect(choosePrefixCache({ samples: 20, within5m: 0.2 }, prices, SONNET)).toBe("none");
    expect(choosePrefixCache({ samples: 20, within5m: 0.25 }, prices, SONNET)).toBe("5m");
    expect(choosePrefixCache({ samples: 20, within5m: 0 }, prices, "claude-haiku-5-5")).toBe("none");
    expect(choosePrefixCache({ samples: 20, within5m: 1 }, prices, "claude-opus-9")).toBe("none");
  });

  it("follows a person's rhythm: bursts get the breakpoint, calls hours apart do not", () => {
    expect(prefixCacheFor(calls([0, 1, 3, 4, 6, 7]), TURN_PREFIX_PURPOSES, SONNET, prices)).toBe("5m");
    expect(prefixCacheFor(calls([0, 50, 110, 170, 230]), TURN_PREFIX_PURPOSES, SONNET, prices)).toBe("none");
  });
});

describe("withPrefixCache", () => {
  const system = [
    { type: "text" as const, text: "protocol and persona", cache_control: { type: "ephemeral" as const } },
    { type: "text" as const, text: "scratchpad", cache_control: { type: "ephemeral" as const } },
  ];

  it("puts the one breakpoint on the stable prefix, or none at all", () => {
    expect(withPrefixCache(system, "5m")).toEqual([
      { type: "text", text: "protocol and persona", cache_control: { type: "ephemeral" } },
      { type: "text", text: "scratchpad" },
    ]);
    expect(withPrefixCache(system, "none")).toEqual([
      { type: "text", text: "protocol and persona" },
      { type: "text", text: "scratchpad" },
    ]);
  });
});

describe("PRESENCE_DECIDE_MODEL", () => {
  it("is the reflect model unless set", () => {
    expect(loadModelSettings({}).decideModel).toBe("claude-haiku-5-5");
    expect(loadModelSettings({ PRESENCE_REFLECT_MODEL: "claude-haiku-6" }).decideModel).toBe(
      "claude-haiku-6",
    );
    expect(loadModelSettings({ PRESENCE_DECIDE_MODEL: SONNET }).decideModel).toBe(SONNET);
  });
});
