// The time this machine has seen pass, which no step of the wall clock moves: what a server
// measures its own intervals in when a wall-clock step (`date -s`, an NTP step) must neither end
// them at once nor stretch them by the step (retention's cutoff, DECISIONS H76; the lease
// renewal gap, G45).
import { readFileSync } from 'node:fs';

/**
 * Time this machine has seen pass, ms from an arbitrary origin, which no step of the wall clock
 * moves. On Linux CLOCK_BOOTTIME (/proc/uptime): like CLOCK_MONOTONIC but it counts the time the
 * machine was suspended, as the wall clock does, so a resume is no jump; elsewhere (or should the
 * file become unreadable, e.g. no file descriptor left) performance.now() from the last reading.
 */
export function systemElapsedMs(): () => number {
  const uptime = (): number | undefined => {
    try {
      const s = Number.parseFloat(readFileSync('/proc/uptime', 'latin1'));
      return Number.isFinite(s) ? s * 1000 : undefined;
    } catch {
      return undefined;
    }
  };
  const first = uptime();
  if (first === undefined) return () => performance.now();
  let offset = first - performance.now();
  return () => {
    const u = uptime();
    if (u === undefined) return performance.now() + offset;
    offset = u - performance.now();
    return u;
  };
}

