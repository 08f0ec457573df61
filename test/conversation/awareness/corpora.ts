import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const corporaDir = fileURLToPath(new URL("../../fixtures/corpora/", import.meta.url));

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(`${corporaDir}${file}`, "utf8"));
}

/** test/fixtures/corpora/topics.json: messages per topic, and messages about subjects the lexicon lacks. */
export function loadTopicCorpus() {
  return z
    .object({ topics: z.record(z.string(), z.array(z.string())), other: z.array(z.string()) })
    .parse(readJson("topics.json"));
}

/** test/fixtures/corpora/tones.json: messages per tone. */
export function loadToneCorpus() {
  return z
    .object({
      tones: z.object({
        warm: z.array(z.string()),
        neutral: z.array(z.string()),
        tense: z.array(z.string()),
      }),
      moods: z.record(z.string(), z.array(z.string())),
    })
    .parse(readJson("tones.json"));
}

export interface AgreementRow {
  label: string;
  total: number;
  agreed: number;
  misses: string[];
}

/** Prints one row per label and the overall figure; returns the overall agreement (0..1). */
export function reportAgreement(title: string, rows: readonly AgreementRow[]): number {
  const total = rows.reduce((n, r) => n + r.total, 0);
  const agreed = rows.reduce((n, r) => n + r.agreed, 0);
  const table = rows.map((r) => ({
    label: r.label,
    agreed: `${r.agreed}/${r.total}`,
    percent: `${((100 * r.agreed) / r.total).toFixed(0)}%`,
    misses: r.misses.join(" | "),
  }));
  console.log(`${title}: ${agreed}/${total} = ${((100 * agreed) / total).toFixed(1)}%`);
  console.table(table);
  return agreed / total;
}
