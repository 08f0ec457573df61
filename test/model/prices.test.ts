import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ConfigError, loadModelSettings } from "../../src/app/config.ts";
import {
  loadPriceTable,
  minCacheableTokens,
  PriceFileError,
  pricesInWords,
  SHIPPED_PRICES_FILE,
  shippedPriceTable,
  unpricedModelMessage,
  usageDollars,
} from "../../src/model/prices.ts";
import { FAKE_PRICES, fakeDollars } from "../../testkit/prices.ts";
import { tempDataDir } from "../store/helpers.ts";

/** The issue's table, per million tokens: input, output, write 5 min, write 1 h, read, minimum. */
const ISSUE_TABLE = [
  {
    model: "claude-sonnet-5-5",
    minCacheableTokens: 1024,
    tiers: [{ input: 2, output: 10, cacheWrite5m: 2.5, cacheWrite1h: 4, cacheRead: 0.1 }],
  },
  {
    model: "claude-haiku-5-5",
    minCacheableTokens: 2048,
    tiers: [
      {
        maxPromptTokens: 100_000,
        input: 0.1,
        output: 0.5,
        cacheWrite5m: 0.125,
        cacheWrite1h: 0.2,
        cacheRead: 0.01,
      },
      { input: 0.5, output: 2.5, cacheWrite5m: 0.625, cacheWrite1h: 1, cacheRead: 0.05 },
    ],
  },
];

const strip = (models: readonly { model: string; minCacheableTokens: number; tiers: unknown[] }[]) =>
  models.map(({ model, minCacheableTokens, tiers }) => ({ model, minCacheableTokens, tiers }));

describe("the price tables", () => {
  it("the test kit's copy is the issue's table", () => {
    expect(strip(FAKE_PRICES.models)).toEqual(ISSUE_TABLE);
  });

  it("production's shipped table says the same as the test kit's copy, with its source and date", () => {
    const table = shippedPriceTable();
    expect(strip(table.models)).toEqual(strip(FAKE_PRICES.models));
    expect(table.source).toBe("public price trackers, not checked online");
    expect(table.date).toBe("2026-10");
    expect(pricesInWords(table)).toBe(
      "the 2026-10 prices (source: public price trackers, not checked online)",
    );
    expect(table.file).toBe(SHIPPED_PRICES_FILE);
  });

  it("give the minimum cacheable length per model, the largest for a model they do not list", () => {
    const table = shippedPriceTable();
    expect(minCacheableTokens(table, "claude-sonnet-5-5")).toBe(1024);
    expect(minCacheableTokens(table, "claude-haiku-5-5-20261001")).toBe(2048);
    expect(minCacheableTokens(table, "claude-opus-9")).toBe(2048);
  });
});

describe("usageDollars", () => {
  const table = shippedPriceTable();
  const none = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

  it("prices each kind of token at its own rate", () => {
    const sonnet = (u: Partial<typeof none> & { cacheWrite1h?: number }) =>
      usageDollars({ ...none, model: "claude-sonnet-5-5", ...u }, table);
    expect(sonnet({ input: 1_000_000 })).toBeCloseTo(2, 10);
    expect(sonnet({ output: 1_000_000 })).toBeCloseTo(10, 10);
    expect(sonnet({ cacheWrite: 1_000_000 })).toBeCloseTo(2.5, 10);
    expect(sonnet({ cacheWrite: 1_000_000, cacheWrite1h: 1_000_000 })).toBeCloseTo(4, 10);
    expect(sonnet({ cacheWrite: 1_000_000, cacheWrite1h: 400_000 })).toBeCloseTo(0.6 * 2.5 + 0.4 * 4, 10);
    expect(sonnet({ cacheRead: 1_000_000 })).toBeCloseTo(0.1, 10);
    // A real call: 700 new tokens, 2,660 read, 40 out.
    expect(sonnet({ input: 700, cacheRead: 2_660, output: 40 })).toBeCloseTo(
      (700 * 2 + 2_660 * 0.1 + 40 * 10) / 1e6,
      12,
    );
  });

  it("prices the whole call at the tier its prompt length falls in", () => {
    const haiku = (u: Partial<typeof none>) =>
      usageDollars({ ...none, model: "claude-haiku-5-5", ...u }, table);
    // 100,000 prompt tokens is still the first tier; one more and every token costs the second.
    expect(haiku({ input: 60_000, cacheRead: 40_000, output: 1_000 })).toBeCloseTo(
      (60_000 * 0.1 + 40_000 * 0.01 + 1_000 * 0.5) / 1e6,
      12,
    );
    expect(haiku({ input: 60_001, cacheRead: 40_000, output: 1_000 })).toBeCloseTo(
      (60_001 * 0.5 + 40_000 * 0.05 + 1_000 * 2.5) / 1e6,
      12,
    );
    expect(haiku({ input: 10, cacheWrite: 100_000 })).toBeCloseTo((10 * 0.5 + 100_000 * 0.625) / 1e6, 12);
  });

  it("prices a dated snapshot like its model and refuses a model the table does not list", () => {
    expect(usageDollars({ ...none, model: "claude-sonnet-5-5-20261001", input: 1e6 }, table)).toBeCloseTo(2);
    expect(() => usageDollars({ ...none, model: "claude-opus-9", input: 1 }, table)).toThrow(
      unpricedModelMessage("claude-opus-9", table.file),
    );
    expect(() => usageDollars({ ...none, model: "claude-opus-9", input: 1 }, table)).toThrow(
      /claude-opus-9.*prices\.json.*PRESENCE_PRICES_FILE/,
    );
  });

  it("agrees with the test kit's own arithmetic on any usage", () => {
    const usage = fc.record({
      model: fc.constantFrom("claude-sonnet-5-5", "claude-haiku-5-5"),
      input: fc.nat(150_000),
      output: fc.nat(5_000),
      cacheRead: fc.nat(60_000),
      cacheWrite: fc.nat(20_000),
      oneHourShare: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(usage, ({ oneHourShare, ...u }) => {
        const priced = { ...u, cacheWrite1h: Math.floor(u.cacheWrite * oneHourShare) };
        expect(usageDollars(priced, table)).toBeCloseTo(fakeDollars(priced), 12);
      }),
    );
  });
});

describe("a price file of one's own (PRESENCE_PRICES_FILE)", () => {
  async function priceFile(content: unknown): Promise<string> {
    const dir = await tempDataDir();
    await mkdir(dir, { recursive: true });
    const file = join(dir, "prices.json");
    await writeFile(file, typeof content === "string" ? content : JSON.stringify(content));
    return file;
  }
  const shipped = () => JSON.parse(JSON.stringify({ ...shippedPriceTable(), file: undefined }));

  it("is used when it is valid", async () => {
    const mine = shipped();
    mine.models[0].tiers[0].input = 3;
    const file = await priceFile(mine);
    const settings = loadModelSettings({ PRESENCE_PRICES_FILE: file });
    expect(settings.prices.file).toBe(file);
    expect(
      usageDollars(
        { model: "claude-sonnet-5-5", input: 1e6, output: 0, cacheRead: 0, cacheWrite: 0 },
        settings.prices,
      ),
    ).toBe(3);
  });

  it("is refused naming the file and the field that is wrong", async () => {
    const mine = shipped();
    mine.models[1].tiers[0].cacheRead = "cheap";
    const file = await priceFile(mine);
    expect(() => loadPriceTable(file)).toThrow(PriceFileError);
    expect(() => loadPriceTable(file)).toThrow(`${file}: models.1.tiers.0.cacheRead:`);
    let error: unknown;
    try {
      loadModelSettings({ PRESENCE_PRICES_FILE: file });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.objectContaining({
        variable: "PRESENCE_PRICES_FILE",
        problem: expect.stringContaining(`${file}: models.1.tiers.0.cacheRead`),
      }),
    ]);
  });

  it("is refused when its tiers do not cover every prompt length in order, or a model is listed twice", async () => {
    const unbounded = shipped();
    unbounded.models[1].tiers[1].maxPromptTokens = 200_000;
    const unboundedFile = await priceFile(unbounded);
    expect(() => loadPriceTable(unboundedFile)).toThrow(
      /models\.1\.tiers\.1\.maxPromptTokens: the last tier/,
    );
    const backwards = shipped();
    backwards.models[1].tiers = [
      { ...backwards.models[1].tiers[0], maxPromptTokens: 100_000 },
      { ...backwards.models[1].tiers[0], maxPromptTokens: 50_000 },
      backwards.models[1].tiers[1],
    ];
    const backwardsFile = await priceFile(backwards);
    expect(() => loadPriceTable(backwardsFile)).toThrow(
      /models\.1\.tiers\.1\.maxPromptTokens: must be larger/,
    );
    const twice = shipped();
    twice.models.push(twice.models[0]);
    const twiceFile = await priceFile(twice);
    expect(() => loadPriceTable(twiceFile)).toThrow(/models\.2\.model: "claude-sonnet-5-5" is listed twice/);
  });

  it("is refused when missing or not JSON, naming the file", async () => {
    const missing = join(await tempDataDir(), "nope.json");
    expect(() => loadPriceTable(missing)).toThrow(`${missing}: no such file`);
    const broken = await priceFile("{ not json");
    expect(() => loadPriceTable(broken)).toThrow(new RegExp(`${broken}: is not valid JSON`));
  });
});
