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

/** A wait that was started and may be called off. */
export interface Timer {
  /** Calls the wait off; its callback will not run. Harmless after it ran. */
  cancel(): void;
}

/** How a wait behaves beyond its length. */
interface TimerOptions {
  /**
   * Whether this wait alone keeps the process running (true by default, as with setTimeout).
   * False for a wait whose work close() cancels anyway, such as an hour-long back-off.
   */
  keepAlive?: boolean;
}

/**
 * The only way logic waits, beside the Clock it belongs to: the reply retry, reflection's
 * back-off, the settle before answering a burst, shutdown's bounds. Production waits on the
 * machine's timers; a simulation on virtual ones that fire as its clock moves, so a wait
 * computed in virtual time is also spent in virtual time.
 */
export interface Timers {
  /** Calls `fire` once, `ms` from now, unless cancelled first. */
  after(ms: number, fire: () => void, options?: TimerOptions): Timer;
}

/** The machine's timers, for production: the one place logic's waits meet real setTimeout. */
export const systemTimers: Timers = {
  after(ms, fire, options) {
    const timer = setTimeout(fire, ms);
    if (options?.keepAlive === false) timer.unref();
    return { cancel: () => clearTimeout(timer) };
  },
};

/**
 * Timers on a SettableClock, for simulations and tests: nothing fires until advanceTo() moves
 * the clock, and then each wait fires at its own instant, in order, as if the time between
 * had passed.
 */
export class VirtualTimers implements Timers {
  readonly #clock: SettableClock;
  /** Waiting timers, earliest first; among equal instants, first started first. */
  #waiting: { at: number; fire: () => void }[] = [];

  constructor(clock: SettableClock) {
    this.#clock = clock;
  }

  after(ms: number, fire: () => void): Timer {
    const entry = { at: this.#clock.now().getTime() + Math.max(0, ms), fire };
    const index = this.#waiting.findIndex((w) => w.at > entry.at);
    if (index < 0) this.#waiting.push(entry);
    else this.#waiting.splice(index, 0, entry);
    return {
      cancel: () => {
        this.#waiting = this.#waiting.filter((w) => w !== entry);
      },
    };
  }

  /** When the earliest waiting timer fires, or null when none waits. */
  next(): Date | null {
    const first = this.#waiting[0];
    return first ? new Date(first.at) : null;
  }

  /**
   * Moves the clock to `instant`, firing on the way every timer due by then (those that firing
   * starts included), each with the clock at its own instant. After each one, `settle` is
   * awaited, so the work a timer starts is done before time moves on, as it would be when the
   * wait is much longer than the work.
   */
  async advanceTo(instant: Date, settle: () => Promise<void> = async () => undefined): Promise<void> {
    const until = instant.getTime();
    for (let first = this.#waiting[0]; first && first.at <= until; first = this.#waiting[0]) {
      this.#waiting.shift();
      if (first.at > this.#clock.now().getTime()) this.#clock.set(new Date(first.at));
      first.fire();
      await settle();
    }
    this.#clock.set(instant);
  }
}
