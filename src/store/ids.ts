import { randomBytes } from "node:crypto";
import type { Clock } from "../core/clock.ts";

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

/**
 * Makes message ids that sort the way the messages were created (ULID layout: 48 bits of
 * clock milliseconds, then 80 random bits, Crockford base 32). Ids made within one
 * millisecond, or while a simulated clock stands still, still sort in creation order
 * because the random part is incremented instead of redrawn.
 */
export function createIdGenerator(clock: Clock): () => string {
  let lastMs = -1;
  let lastRandom = 0n;
  return () => {
    const ms = clock.now().getTime();
    if (ms > lastMs) {
      lastMs = ms;
      // One bit short of 80 leaves room for 2^79 increments within a millisecond.
      lastRandom = BigInt(`0x${randomBytes(10).toString("hex")}`) >> 1n;
    } else {
      lastRandom += 1n;
    }
    return encode(BigInt(lastMs), TIME_CHARS) + encode(lastRandom, RANDOM_CHARS);
  };
}

function encode(value: bigint, length: number): string {
  let out = "";
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(rest & 31n)] + out;
    rest >>= 5n;
  }
  return out;
}
