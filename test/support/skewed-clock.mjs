// Preload (`node --import ./skewed-clock.mjs`) that runs a process as on a machine whose
// clock is off: Date.now() and `new Date()` are CORTEX_TEST_CLOCK_SKEW_MS ahead (negative:
// behind), as libfaketime's `faketime -f +60d` would make them (not installed everywhere).
// Timers and performance.now() are untouched, as they are on such a machine.
const skew = Number(process.env.CORTEX_TEST_CLOCK_SKEW_MS ?? 0);
if (!Number.isFinite(skew)) throw new Error('CORTEX_TEST_CLOCK_SKEW_MS must be a number of milliseconds');
const RealDate = globalThis.Date;
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skew);
    else super(...args);
  }
  static now() {
    return RealDate.now() + skew;
  }
}
globalThis.Date = SkewedDate;
