// Preload (`node --import ./clock-step-on-signal.mjs`) that runs a process as on a machine whose
// clock is stepped while it runs (`date -s`, a bad NTP source, a wrong hardware clock "fixed"):
// at each SIGUSR2, Date.now() and `new Date()` move CORTEX_TEST_CLOCK_STEP_MS ahead (negative:
// back), and a line `test clock: stepped N ms` goes to stderr. performance.now(), timers and
// /proc/uptime are untouched, as they are on such a machine.
const step = Number(process.env.CORTEX_TEST_CLOCK_STEP_MS ?? 0);
if (!Number.isFinite(step)) throw new Error('CORTEX_TEST_CLOCK_STEP_MS must be a number of milliseconds');
let skew = 0;
const RealDate = globalThis.Date;
class SteppedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skew);
    else super(...args);
  }
  static now() {
    return RealDate.now() + skew;
  }
}
globalThis.Date = SteppedDate;
process.on('SIGUSR2', () => {
  skew += step;
  process.stderr.write(`test clock: stepped ${step} ms\n`);
});
