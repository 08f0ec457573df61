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
  // By UTF-16 unit, a surrogate pair counted once: code points, without making a string of each.
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 128) ascii += 1;
    else {
      other += 1;
      if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) i += 1;
    }
  }
  return Math.ceil(ascii / 3.5) + other;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
