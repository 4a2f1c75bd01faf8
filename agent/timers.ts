// Timers for delays a server may set beyond what a Node.js timer holds (DECISIONS F11). Node runs
// a setTimeout longer than 2^31 − 1 ms (24.8 days) after 1 ms, with a TimeoutOverflowWarning:
// a config's metrics_interval_secs of 3,000,000 (35 days, a way to "nearly switch metrics off";
// the contract sets no maximum) made the agent send metrics every millisecond.

/** The longest delay a Node.js timer takes as given (a longer one fires after 1 ms). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** One timer at a time for any delay: one longer than MAX_TIMER_MS waits in steps. */
export class LongTimer {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Runs `fn` once after `ms` (instead of what was armed before). */
  start(ms: number, fn: () => void): void {
    this.stop();
    const due = this.now() + ms;
    const arm = (): void => {
      const left = due - this.now();
      this.timer = setTimeout(
        () => {
          this.timer = null;
          if (due - this.now() > 1) arm();
          else fn();
        },
        Math.min(Math.max(0, left), MAX_TIMER_MS),
      );
    };
    arm();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
