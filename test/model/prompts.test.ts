import { describe, expect, it } from "vitest";
import { NOTES_TOOLS } from "../../src/mind/notes-tools.ts";
import { REFLECT_TOOL } from "../../src/mind/reflect.ts";
import { fixedPersona, loadPersona, personaFromDir } from "../../src/model/persona.ts";
import { minCacheableTokens, shippedPriceTable } from "../../src/model/prices.ts";
import {
  buildStablePrefix,
  CACHE_MARGIN,
  PROTOCOL,
  prefixIsCacheable,
  protocolAndPersona,
  whatTheyWrote,
} from "../../src/model/prompts.ts";
import { estimateTokens } from "../../src/model/tokens.ts";
import { tempDataDir } from "../store/helpers.ts";

describe("the shipped persona and protocol", () => {
  it("stay under 2,500 tokens together", async () => {
    const persona = await loadPersona();
    expect(estimateTokens(protocolAndPersona(persona))).toBeLessThan(2_500);
  });

  it("cover the safety rules the issue asks for", async () => {
    const persona = await loadPersona();
    expect(persona.soul).toMatch(/Claire/);
    expect(persona.soul).toMatch(/emergency services/);
    expect(persona.soul).toMatch(/crisis line/);
    expect(persona.soul).toMatch(/not a therapist/i);
    expect(PROTOCOL).toMatch(/crisis line/);
  });

  it("contain nothing that changes from turn to turn (no dates, no counters)", async () => {
    const text = protocolAndPersona(await loadPersona());
    expect(text).not.toMatch(/\b20\d\d-\d\d-\d\d\b/);
    expect(text).not.toMatch(/\{\{|\$\{/);
  });
});

describe("what the model reads of the persona files", () => {
  it("is what the person wrote: the template's hints, empty fields and empty headings are left out", async () => {
    const persona = await loadPersona();
    const text = protocolAndPersona(persona);
    expect(text).not.toContain("<!--");
    expect(text).not.toContain("Name (what to call me)");
    expect(text).toContain(
      "# The person, in their own words\n\n(Nothing yet: they have not written about themselves.)\n\n# Check-ins",
    );
    // HEARTBEAT.md begins with the heading the section would add: it is said once.
    expect(text.match(/^# Check-ins$/gm)).toHaveLength(1);
  });

  it("keeps what the person wrote in bold, a field filled on the next line, and code", () => {
    expect(whatTheyWrote("## Please don't\n\n- **Ask about my ex**")).toBe(
      "## Please don't\n\n- **Ask about my ex**",
    );
    expect(whatTheyWrote("## Allergies\n- **Peanuts**")).toBe("## Allergies\n- **Peanuts**");
    expect(whatTheyWrote("- **Name (what to call me):**\n  Sam\n- **Where I live:**")).toBe(
      "- **Name (what to call me):**\n  Sam",
    );
    // A list nested under a label answers it; the next field at the label's depth does not.
    expect(
      whatTheyWrote("- **Allergies:**\n  - peanuts\n  - shellfish\n- **Where I live:**\n- **Pets:**"),
    ).toBe("- **Allergies:**\n  - peanuts\n  - shellfish");
    expect(whatTheyWrote("## Routine\n\n```\n# step one\n# step two\n```")).toBe(
      "## Routine\n\n```\n# step one\n# step two\n```",
    );
  });

  it("keeps a filled field, a heading with text under it or under a subsection, and the person's own words", () => {
    const filled = [
      "# About me",
      "<!-- Fill this in. -->",
      "- **Name (what to call me):** Sam",
      "- **Where I live / my usual time zone:**",
      "## What I'd like from Claire",
      "<!-- e.g. short messages -->",
      "## Things I'm working on",
      "### Running",
      "A half marathon in May.",
      "## Please don't",
    ].join("\n\n");
    expect(whatTheyWrote(filled)).toBe(
      [
        "# About me",
        "- **Name (what to call me):** Sam",
        "## Things I'm working on",
        "### Running",
        "A half marathon in May.",
      ].join("\n\n"),
    );
  });
});

describe("what the protocol says about voice notes", () => {
  it("is what is true for the setup: heard when a transcription service is set up, else not; under 2,500 tokens either way", async () => {
    const persona = await loadPersona();
    const unheard = protocolAndPersona(persona);
    const heard = protocolAndPersona(persona, true);
    expect(unheard.startsWith(PROTOCOL)).toBe(true);
    expect(unheard).toContain("voice notes you cannot hear");
    expect(heard).not.toContain("voice notes you cannot hear");
    expect(heard).toContain(
      "Voice notes are transcribed for you:\n[voice note, 0:42] comes before their words",
    );
    expect(estimateTokens(heard)).toBeLessThan(2_500);
    const prefix = buildStablePrefix(persona, { notes: NOTES_TOOLS, hearsVoiceNotes: true });
    expect(prefix.system[0]?.text).toBe(heard);
    expect(
      JSON.stringify(
        buildStablePrefix(structuredClone(persona), { notes: NOTES_TOOLS, hearsVoiceNotes: true }),
      ),
    ).toBe(JSON.stringify(prefix));
  });
});

describe("buildStablePrefix", () => {
  it("is byte-identical for the same persona, with the breakpoint on its last block", async () => {
    const persona = await loadPersona();
    const a = buildStablePrefix(persona, { notes: NOTES_TOOLS });
    const b = buildStablePrefix(structuredClone(persona), { notes: NOTES_TOOLS });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.system.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(a.tools.map((t) => t.name)).toEqual([
      "notes_list",
      "notes_read",
      "notes_write",
      "react",
      "decide_checkin",
      "write_message",
    ]);
  });

  it("carries the reflect tool in every call in single-phase mode", async () => {
    const prefix = buildStablePrefix(await loadPersona(), { notes: NOTES_TOOLS, reflect: REFLECT_TOOL });
    expect(prefix.tools.at(-1)?.name).toBe(REFLECT_TOOL.name);
  });

  it("is above the minimum cacheable length of Sonnet- and Haiku-class models with a 25% margin", async () => {
    const prefix = buildStablePrefix(await loadPersona(), { notes: NOTES_TOOLS });
    const prices = shippedPriceTable();
    expect(minCacheableTokens(prices, "claude-sonnet-5-5")).toBe(1024);
    expect(minCacheableTokens(prices, "claude-haiku-5-5")).toBe(2048);
    expect(minCacheableTokens(prices, "some-new-model")).toBe(2048);
    expect(prefix.tokens).toBeGreaterThanOrEqual(1024 * CACHE_MARGIN);
    expect(prefixIsCacheable(prefix, prices, "claude-sonnet-5-5")).toBe(true);
    expect(prefixIsCacheable(prefix, prices, "claude-haiku-5-5")).toBe(true);
    const tiny = buildStablePrefix({ soul: "x", user: "", heartbeat: "" }, { notes: [] });
    expect(prefixIsCacheable(tiny, prices, "claude-sonnet-5-5")).toBe(false);
  });
});

describe("persona sources", () => {
  it("re-read the files after an edit and name a missing file", async () => {
    const { mkdir, writeFile, rm } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const dir = await tempDataDir();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "SOUL.md"), "I am Claire.\r\n");
    await writeFile(join(dir, "USER.md"), "Sam");
    await writeFile(join(dir, "HEARTBEAT.md"), "Rarely.");
    const source = personaFromDir(dir);
    expect(await source.current()).toEqual({ soul: "I am Claire.", user: "Sam", heartbeat: "Rarely." });
    await writeFile(join(dir, "USER.md"), "Sam, who bakes bread on Sundays");
    expect((await source.current()).user).toBe("Sam, who bakes bread on Sundays");
    await rm(join(dir, "HEARTBEAT.md"));
    await expect(source.current()).rejects.toThrow(
      /^cannot read the persona file .*HEARTBEAT\.md \(ENOENT\); restore it/,
    );
    await expect(fixedPersona({ soul: "s", user: "u", heartbeat: "h" }).current()).resolves.toMatchObject({
      soul: "s",
    });
  });
});
