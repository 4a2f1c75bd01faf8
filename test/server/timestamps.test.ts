// utcTimestamp (DECISIONS H38): every RFC 3339 form the contract's date-time admits is stored
// as UTC with milliseconds; the reference agent's form passes as it is.
import { describe, expect, it } from 'vitest';
import { validateLogBatchEntry } from '@cortex/agent-protocol';
import { utcTimestamp } from '../../server/timestamps.js';

const entry = (ts: string) => ({ seq: 1, ts, severity: 'info', message: 'm', source: 'journald' });

describe('utcTimestamp', () => {
  it.each([
    ['2026-05-16T19:42:50.123Z', '2026-05-16T19:42:50.123Z'],
    ['2026-05-16T19:42:50Z', '2026-05-16T19:42:50.000Z'],
    ['2026-05-16t19:42:50.1z', '2026-05-16T19:42:50.100Z'],
    ['2026-05-16 19:42:50Z', '2026-05-16T19:42:50.000Z'],
    ['2026-05-16T19:42:50.123456789Z', '2026-05-16T19:42:50.123Z'],
    ['2026-05-16T21:42:50.123456+02:00', '2026-05-16T19:42:50.123Z'],
    ['2026-05-16T00:10:00+01:00', '2026-05-15T23:10:00.000Z'],
    ['2026-12-31T23:30:00-01:00', '2027-01-01T00:30:00.000Z'],
    ['2026-05-16T19:42:50-00:30', '2026-05-16T20:12:50.000Z'],
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
  ])('%s → %s', (sent, stored) => {
    expect(validateLogBatchEntry(entry(sent)), `the contract admits ${sent}`).toBe(true);
    expect(utcTimestamp(sent)).toBe(stored);
  });

  it('a time that cannot be written as UTC in four-digit years is kept as sent', () => {
    expect(utcTimestamp('9999-12-31T23:30:00-01:00')).toBe('9999-12-31T23:30:00-01:00');
    expect(utcTimestamp('0000-01-01T00:30:00+01:00')).toBe('0000-01-01T00:30:00+01:00');
  });

  it('the reference agent form is returned as the same string (no copy, no parse)', () => {
    const ts = new Date().toISOString();
    expect(utcTimestamp(ts)).toBe(ts);
  });
});
