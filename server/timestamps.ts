// The entry and sample times a server stores (DECISIONS H38). The contract's `date-time` is
// RFC 3339: any offset, `t`/`z` in either case, a space for `T`, any number of fraction digits,
// a leap second. Stored as sent, such times broke every use that compares them as text — the
// console's and `agent tail`'s time ranges, the metric charts' hour, metrics retention (by
// sample time): `2026-12-06T12:00:00+02:00` (10:00 UTC) sorted after 11:30 UTC. They are now
// stored as the reference agent sends them (DECISIONS D3): UTC, `YYYY-MM-DDTHH:MM:SS.mmmZ`,
// digits past the millisecond dropped (they would sort wrongly against three-digit fractions).

const CANONICAL_LENGTH = 24; // 2026-05-16T19:42:50.123Z
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):?(\d{2})?)$/;

/** A time given to a search (admin API `from`/`to`, `agent tail --since/--until`): RFC 3339, seconds optional. */
const QUERY_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;

/** A search's time as stored times are written (UTC, ms), so they compare as text; undefined when it is not one. */
export function queryTime(value: string): string | undefined {
  const t = Date.parse(value);
  return QUERY_TIME.test(value) && !Number.isNaN(t) ? new Date(t).toISOString() : undefined;
}

/** `ts` in the stored form; as it came when it is that already (the reference agent's) or not an RFC 3339 time. */
export function utcTimestamp(ts: string): string {
  if (
    ts.length === CANONICAL_LENGTH &&
    ts.charCodeAt(23) === 90 /* Z */ &&
    ts.charCodeAt(10) === 84 /* T */ &&
    ts.charCodeAt(19) === 46 /* . */
  ) {
    return ts;
  }
  const m = RFC3339.exec(ts);
  if (m === null) return ts;
  const [, y, mo, d, h, mi, s, frac, sign, oh, om] = m as unknown as (string | undefined)[];
  const ms = Number(((frac ?? '') + '000').slice(0, 3));
  const leap = Number(s) === 60; // 23:59:60: the last instant of the minute that can be written
  const t = new Date(0);
  t.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  t.setUTCHours(Number(h), Number(mi), leap ? 59 : Number(s), leap ? 999 : ms);
  const offsetMin = sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om ?? 0));
  const utc = new Date(t.getTime() - offsetMin * 60_000);
  const year = utc.getUTCFullYear();
  if (Number.isNaN(utc.getTime()) || year < 0 || year > 9999) return ts; // not writable in this form: kept
  return utc.toISOString();
}
