/**
 * The one token estimator every budget in presence is measured with. It does not need
 * to match the model's tokenizer exactly; it needs to be consistent and to err on the
 * generous side, so that budgets hold: about one token per 3.5 characters of prose,
 * and every non-ASCII code point (emoji, accents, other scripts) counted as one.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if (ch.charCodeAt(0) < 128) ascii += 1;
    else other += 1;
  }
  return Math.ceil(ascii / 3.5) + other;
}
