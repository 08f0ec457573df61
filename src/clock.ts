/**
 * The only source of "now" in presence. Logic receives a Clock instead of reading
 * the wall clock, so a whole day can be simulated in seconds and tests are exact.
 */
export interface Clock {
  /** The current instant. */
  now(): Date;
}

/** The machine's clock, for production. */
export const systemClock: Clock = {
  now: () => new Date(),
};

/** A clock that only moves when told to: for tests and simulations. */
export class SettableClock implements Clock {
  #ms: number;

  constructor(start: Date | string) {
    this.#ms = new Date(start).getTime();
    if (Number.isNaN(this.#ms)) throw new RangeError(`SettableClock: not a valid instant: ${String(start)}`);
  }

  now(): Date {
    return new Date(this.#ms);
  }

  /** Jumps to an instant; time never runs backwards. */
  set(instant: Date | string): void {
    const ms = new Date(instant).getTime();
    if (Number.isNaN(ms)) throw new RangeError(`SettableClock: not a valid instant: ${String(instant)}`);
    if (ms < this.#ms) throw new RangeError("SettableClock: time cannot run backwards");
    this.#ms = ms;
  }

  /** Moves forward by a number of minutes. */
  advanceMinutes(minutes: number): void {
    this.set(new Date(this.#ms + minutes * 60_000));
  }
}
