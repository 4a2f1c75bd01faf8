// Line parsing for log sources (DESIGN.md 5.12, DECISIONS.md D2–D4).
//
// parseLine() turns one raw line (already decoded, without its newline) into the parts of
// a LogBatchEntry: RFC 5424 first, then RFC 3164 (also the PRI-less form rsyslog writes
// to /var/log/syslog, and its RFC 3339 variant), then a JSON object, and anything else
// is the plain line with severity `info` and the read time. Hand-written scanners, no
// regular expression on the hot path: a 5424 line costs a few hundred nanoseconds.

import { SerializedEntry, type Severity } from '../buffer/entry.js';
import { LIMITS } from '@cortex/agent-protocol';
import { metadataProblem } from '@cortex/agent-protocol/runtime';

export interface ParsedLine {
  /** RFC 3339 UTC with milliseconds. */
  ts: string;
  severity: Severity;
  facility: string | null;
  app_name: string | null;
  process_id: string | null;
  message: string;
  /** hostname, msgid, structured_data (5424), JSON fields; null when there is nothing. */
  metadata: Record<string, unknown> | null;
  /** Which parser recognised the line. */
  format: 'rfc5424' | 'rfc3164' | 'json' | 'plain';
}

export const SEVERITIES: readonly Severity[] = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug'];

/** Facility names by code (RFC 5424 table 1; names as glibc/rsyslog spell them). */
export const FACILITIES: readonly string[] = [
  'kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news',
  'uucp', 'cron', 'authpriv', 'ftp', 'ntp', 'security', 'console', 'solaris-cron',
  'local0', 'local1', 'local2', 'local3', 'local4', 'local5', 'local6', 'local7',
];

const MONTHS: Record<string, number> = {
  Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11,
};

const DAY_MS = 86_400_000;

/** Two and three digit zero-padded numbers, for formatting timestamps without a Date. */
const D2: readonly string[] = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : `${i}`));
const D3: readonly string[] = Array.from({ length: 1000 }, (_, i) => `${i}`.padStart(3, '0'));
/** 9999-12-31T23:59:59.999Z: up to here toISOString() writes a plain four-digit year. */
const MAX_ISO4_MS = 253_402_300_799_999;

/**
 * new Date(ms).toISOString(), without allocating a Date: the civil date of an integer
 * epoch in [1970, 9999] by Howard Hinnant's days-to-civil; anything else (before 1970,
 * past 9999, a fraction, NaN) is left to Date itself.
 */
export function isoFromEpoch(ms: number): string {
  if (!(ms >= 0 && ms <= MAX_ISO4_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / 86_400_000);
  let rest = ms - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const mi = Math.floor(rest / 60_000);
  rest -= mi * 60_000;
  const sec = Math.floor(rest / 1000);
  return `${y}-${D2[m]}-${D2[d]}T${D2[h]}:${D2[mi]}:${D2[sec]}.${D3[rest - sec * 1000]}Z`;
}

/** The PRI value parsePri() read (valid when it returned an index). */
let priValue = 0;

/** Parses `<PRI>` at the start; returns the index after '>' (the value in priValue), or -1 when malformed (RFC 5424 6.2.1: 1–3 digits, ≤ 191, no leading zero except "0"). */
function parsePri(line: string): number {
  if (line.charCodeAt(0) !== 60 /* < */) return -1;
  let v = 0;
  let i = 1;
  for (; i < line.length && i <= 4; i++) {
    const c = line.charCodeAt(i);
    if (c === 62 /* > */) break;
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  const digits = i - 1;
  if (digits < 1 || digits > 3 || line.charCodeAt(i) !== 62) return -1;
  if (digits > 1 && line.charCodeAt(1) === 48) return -1;
  if (v > 191) return -1;
  priValue = v;
  return i + 1;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function num(s: string, a: number, n: number): number {
  let v = 0;
  for (let i = a; i < a + n; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    v = v * 10 + (c - 48);
  }
  return v;
}

/** The last day of month M (1–12) as Date.UTC(Y, M, 0) finds it (which reads years 0–99 as 1900–1999). */
export function daysInMonth(Y: number, M: number): number {
  if (M !== 2) return M === 4 || M === 6 || M === 9 || M === 11 ? 30 : 31;
  const y = Y < 100 ? 1900 + Y : Y;
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
}

/** The ISO text of the timestamp rfc3339() parsed last (what toISOString() gives for it). */
let rfc3339Iso = '';

/**
 * parseRfc3339, also leaving new Date(result).toISOString() in rfc3339Iso (for a valid
 * timestamp). wantMs false: only the text is wanted; a valid UTC timestamp from year 100
 * on then returns 0 instead of its epoch value (the text is its own fields, no Date.UTC).
 */
function rfc3339(s: string, a: number, b: number, wantMs: boolean): number {
  if (b - a < 20) return NaN;
  const Y = num(s, a, 4), M = num(s, a + 5, 2), D = num(s, a + 8, 2);
  const h = num(s, a + 11, 2), m = num(s, a + 14, 2), sec = num(s, a + 17, 2);
  const t = s.charCodeAt(a + 10);
  if (s.charCodeAt(a + 4) !== 45 || s.charCodeAt(a + 7) !== 45 || (t !== 84 && t !== 116) || s.charCodeAt(a + 13) !== 58 || s.charCodeAt(a + 16) !== 58) return NaN;
  if (Y < 0 || M < 1 || M > 12 || D < 1 || D > 31 || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60) return NaN;
  let i = a + 19;
  let ms = 0;
  if (s.charCodeAt(i) === 46 /* . */) {
    i++;
    const start = i;
    while (i < b && isDigit(s.charCodeAt(i))) i++;
    if (i === start) return NaN;
    // the first three digits, padded with zeros: milliseconds (the rest is truncated)
    const n = i - start;
    ms = (s.charCodeAt(start) - 48) * 100 + (n > 1 ? (s.charCodeAt(start + 1) - 48) * 10 : 0) + (n > 2 ? s.charCodeAt(start + 2) - 48 : 0);
  }
  let offMin = 0;
  const z = s.charCodeAt(i);
  if (z === 90 || z === 122) {
    i++;
  } else if (z === 43 || z === 45) {
    const oh = num(s, i + 1, 2), om = num(s, i + 4, 2);
    if (oh < 0 || om < 0 || s.charCodeAt(i + 3) !== 58 || oh > 23 || om > 59) return NaN;
    offMin = (oh * 60 + om) * (z === 43 ? 1 : -1);
    i += 6;
  } else return NaN;
  if (i !== b) return NaN;
  if (D > daysInMonth(Y, M)) return NaN;
  // In UTC, from year 100 on (Date.UTC reads 0–99 as 1900–1999), the text is the fields
  // themselves: copied from the line when it has the canonical form.
  if (offMin === 0 && sec < 60 && Y >= 100) {
    if (t === 84 && i - a === 24 && s.charCodeAt(a + 19) === 46 && z === 90) rfc3339Iso = s.slice(a, b);
    else if (t === 84) rfc3339Iso = `${s.slice(a, a + 19)}.${D3[ms]}Z`;
    else rfc3339Iso = `${s.slice(a, a + 10)}T${s.slice(a + 11, a + 19)}.${D3[ms]}Z`;
    return wantMs ? Date.UTC(Y, M - 1, D, h, m, sec, ms) : 0;
  }
  const ts = Date.UTC(Y, M - 1, D, h, m, Math.min(sec, 59), ms) - offMin * 60_000;
  rfc3339Iso = isoFromEpoch(ts);
  return ts;
}

/** The ISO text (what toISOString() gives) of the RFC 3339 timestamp that is all of s, or null when s is not one. */
export function rfc3339Text(s: string): string | null {
  return Number.isNaN(rfc3339(s, 0, s.length, false)) ? null : rfc3339Iso;
}

/**
 * Parses an RFC 3339 timestamp occupying s[a, b); returns epoch ms or NaN.
 * Accepts fractions of any length (truncated to ms), `Z`/`z` or ±hh:mm.
 */
export function parseRfc3339(s: string, a: number, b: number): number {
  return rfc3339(s, a, b, true);
}

function nextSpace(s: string, i: number): number {
  const j = s.indexOf(' ', i);
  return j < 0 ? s.length : j;
}

function stripBom(s: string): string {
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
}

/**
 * SD-IDs and PARAM-NAMEs seen lately, by a hash of their length and end characters: a
 * log repeats the same few names on every line, and a name found here is the same string
 * as before (no slice to allocate, and a property key V8 has already internalised).
 */
const sdNames: string[] = new Array<string>(64).fill('');

/** s.slice(a, b) for a structured-data name (b > a), from sdNames when it is there. */
function sdName(s: string, a: number, b: number): string {
  const n = b - a;
  const slot = (n * 7 + s.charCodeAt(a) * 3 + s.charCodeAt(b - 1)) & 63;
  const c = sdNames[slot]!;
  if (c.length === n) {
    let k = 0;
    while (k < n && c.charCodeAt(k) === s.charCodeAt(a + k)) k++;
    if (k === n) return c;
  }
  const v = s.slice(a, b);
  sdNames[slot] = v;
  return v;
}

/**
 * obj[key] = value as an own, enumerable property: for "__proto__", which an assignment
 * takes as the object's prototype (an object) or ignores (a string), losing the data.
 */
function ownKey(obj: object, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Where the structured data parseStructuredData() read last ended. */
let sdEnd = 0;

/** RFC 5424 STRUCTURED-DATA starting at s[i] === '['; returns the data (its end in sdEnd) or null. */
function parseStructuredData(s: string, i: number): Record<string, Record<string, string>> | null {
  const out: Record<string, Record<string, string>> = {};
  const len = s.length;
  /** The next backslash at or after the value being read (-1: none left). */
  let bs = s.indexOf('\\', i);
  while (s.charCodeAt(i) === 91 /* [ */) {
    i++;
    let j = i;
    while (j < len) {
      const c = s.charCodeAt(j);
      if (c === 32 || c === 93 || c === 61 || c === 34) break;
      j++;
    }
    if (j === i) return null;
    const id = sdName(s, i, j);
    const params: Record<string, string> = {};
    i = j;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 93 /* ] */) {
        i++;
        break;
      }
      if (c !== 32) return null;
      i++;
      // PARAM-NAME up to '=' (no space or ']' in it), then '"'
      let eq = i;
      for (; eq < len; eq++) {
        const d = s.charCodeAt(eq);
        if (d === 61) break;
        if (d === 32 || d === 93) return null; // a name with a space or ']' in it
      }
      if (eq >= len || s.charCodeAt(eq + 1) !== 34 || eq === i) return null;
      const name = sdName(s, i, eq);
      i = eq + 2;
      if (bs < i && bs >= 0) bs = s.indexOf('\\', i);
      const q = s.indexOf('"', i);
      if (q >= 0 && (bs < 0 || bs > q)) {
        // no escape before the closing quote: the value as it stands
        if (name === '__proto__') ownKey(params, name, s.slice(i, q));
        else params[name] = s.slice(i, q);
        i = q + 1;
        continue;
      }
      let val = '';
      let start = i;
      for (;;) {
        if (i >= len) return null;
        const d = s.charCodeAt(i);
        if (d === 92 /* \ */) {
          const e = s.charCodeAt(i + 1);
          if (e === 34 || e === 92 || e === 93) {
            val += s.slice(start, i);
            start = i + 1;
            i += 2;
            continue;
          }
          i++;
          continue;
        }
        if (d === 34) break;
        i++;
      }
      const value = start === eq + 2 ? s.slice(start, i) : val + s.slice(start, i);
      if (name === '__proto__') ownKey(params, name, value);
      else params[name] = value;
      i++;
    }
    if (id === '__proto__') ownKey(out, id, params);
    else out[id] = params;
  }
  sdEnd = i;
  return out;
}

/** An RFC 5424 field: null for the NILVALUE "-". */
function field(line: string, a: number, b: number): string | null {
  return b - a === 1 && line.charCodeAt(a) === 45 ? null : line.slice(a, b);
}

/**
 * The fields of the RFC 5424 line scanRfc5424() read last (one shared object, valid until
 * the next call: no allocation per line for the scan itself). parseRfc5424() builds a
 * ParsedLine from it, ./entry.ts the file source's entry without the ParsedLine between.
 */
export interface Rfc5424Fields {
  pri: number;
  ts: string;
  hostname: string | null;
  app_name: string | null;
  process_id: string | null;
  msgid: string | null;
  structured_data: Record<string, Record<string, string>> | null;
  message: string;
}

const fields5424: Rfc5424Fields = { pri: 0, ts: '', hostname: null, app_name: null, process_id: null, msgid: null, structured_data: null, message: '' };

/**
 * Scans an RFC 5424 line's header (PRI VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID)
 * into the shared Rfc5424Fields (pri, ts and the four tokens); returns the index where
 * STRUCTURED-DATA starts, or -1 when the line is not RFC 5424.
 */
function scanHead5424(line: string, nowMs: number): number {
  const afterPri = parsePri(line);
  if (afterPri < 0) return -1;
  const pri = priValue;
  // VERSION: 1–2 digits, non-zero first, then SP.
  const v0 = line.charCodeAt(afterPri);
  if (!(v0 >= 49 && v0 <= 57)) return -1;
  let i = afterPri + 1;
  if (isDigit(line.charCodeAt(i))) i++;
  if (line.charCodeAt(i) !== 32) return -1;
  i++;
  const e = nextSpace(line, i);
  let ts: string;
  if (e - i === 1 && line.charCodeAt(i) === 45) ts = isoFromEpoch(nowMs);
  else {
    // only the ISO text is used: the epoch value is not computed for a UTC timestamp
    if (Number.isNaN(rfc3339(line, i, e, false))) return -1;
    ts = rfc3339Iso;
  }
  // HOSTNAME APP-NAME PROCID MSGID: each one non-empty token
  const len = line.length;
  if (e + 1 > len) return -1;
  const hA = e + 1, hB = nextSpace(line, hA);
  if (hB === hA || hB + 1 > len) return -1;
  const aA = hB + 1, aB = nextSpace(line, aA);
  if (aB === aA || aB + 1 > len) return -1;
  const pA = aB + 1, pB = nextSpace(line, pA);
  if (pB === pA || pB + 1 > len) return -1;
  const mA = pB + 1, mB = nextSpace(line, mA);
  if (mB === mA) return -1;
  // STRUCTURED-DATA
  if (mB + 1 > len) return -1;
  const f = fields5424;
  f.pri = pri;
  f.ts = ts;
  f.hostname = field(line, hA, hB);
  f.app_name = field(line, aA, aB);
  f.process_id = field(line, pA, pB);
  f.msgid = field(line, mA, mB);
  return mB + 1;
}

/** The MSG after STRUCTURED-DATA ending at i (without a leading BOM), or null when no SP follows it. */
function message5424(line: string, i: number): string | null {
  if (i >= line.length) return '';
  if (line.charCodeAt(i) !== 32) return null;
  return line.charCodeAt(i + 1) === 0xfeff ? line.slice(i + 2) : line.slice(i + 1);
}

/** Scans an RFC 5424 line into the shared Rfc5424Fields; null when the line is not one. */
export function scanRfc5424(line: string, nowMs: number): Rfc5424Fields | null {
  let i = scanHead5424(line, nowMs);
  if (i < 0) return null;
  let sd: Record<string, Record<string, string>> | null = null;
  const c = line.charCodeAt(i);
  if (c === 45 /* - */) {
    i++;
  } else if (c === 91) {
    sd = parseStructuredData(line, i);
    if (sd === null) return null;
    i = sdEnd;
  } else return null;
  const message = message5424(line, i);
  if (message === null) return null;
  const f = fields5424;
  f.structured_data = sd;
  f.message = message;
  return f;
}

/**
 * A string's JSON text when it holds neither '"' nor '\' (the caller has checked the line
 * holds no character JSON.stringify writes as a \u escape): the string in quotes.
 */
function quoted(v: string): string {
  return v.indexOf('"') < 0 && v.indexOf('\\') < 0 ? `"${v}"` : JSON.stringify(v);
}

/** A structured-data name JSON.stringify writes as it stands, first among an object's keys in the order set: no '"' or '\', not an array index, not "__proto__". */
function plainKey(k: string): boolean {
  const c0 = k.charCodeAt(0);
  if (c0 >= 48 && c0 <= 57) return false; // "0", "12": an object lists array indices first
  if (k === '__proto__') return false;
  for (let i = 0; i < k.length; i++) {
    const c = k.charCodeAt(i);
    if (c === 34 || c === 92) return false;
  }
  return true;
}

/** The SD-IDs of the structured data being written as JSON, and the PARAM-NAMEs of its element. */
const sdIds: string[] = [];
const sdParams: string[] = [];

function seen(list: string[], n: number, v: string): boolean {
  for (let k = 0; k < n; k++) if (list[k] === v) return true;
  return false;
}

/**
 * parseStructuredData's JSON text, written as it scans (no objects), or null when the data
 * is malformed or its JSON is left to the object path: a name that is not a plainKey, an
 * SD-ID or PARAM-NAME repeated (the object keeps the last value at the first place). The
 * caller has checked the line holds no character JSON.stringify writes as a \u escape.
 */
function structuredDataJson(s: string, i: number): string | null {
  let out = '{';
  const len = s.length;
  let ids = 0;
  let bs = s.indexOf('\\', i);
  while (s.charCodeAt(i) === 91 /* [ */) {
    i++;
    let j = i;
    while (j < len) {
      const c = s.charCodeAt(j);
      if (c === 32 || c === 93 || c === 61 || c === 34) break;
      j++;
    }
    if (j === i) return null;
    const id = sdName(s, i, j);
    if (!plainKey(id) || seen(sdIds, ids, id)) return null;
    sdIds[ids++] = id;
    out += ids > 1 ? `,"${id}":{` : `"${id}":{`;
    let names = 0;
    i = j;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 93 /* ] */) {
        i++;
        break;
      }
      if (c !== 32) return null;
      i++;
      let eq = i;
      for (; eq < len; eq++) {
        const d = s.charCodeAt(eq);
        if (d === 61) break;
        if (d === 32 || d === 93) return null;
      }
      if (eq >= len || s.charCodeAt(eq + 1) !== 34 || eq === i) return null;
      const name = sdName(s, i, eq);
      if (!plainKey(name) || seen(sdParams, names, name)) return null;
      sdParams[names++] = name;
      i = eq + 2;
      if (bs < i && bs >= 0) bs = s.indexOf('\\', i);
      const q = s.indexOf('"', i);
      let value: string;
      if (q >= 0 && (bs < 0 || bs > q)) {
        // no escape before the closing quote: no '"' or '\' in the value
        value = `"${s.slice(i, q)}"`;
        i = q + 1;
      } else {
        let val = '';
        let start = i;
        for (;;) {
          if (i >= len) return null;
          const d = s.charCodeAt(i);
          if (d === 92 /* \ */) {
            const e = s.charCodeAt(i + 1);
            if (e === 34 || e === 92 || e === 93) {
              val += s.slice(start, i);
              start = i + 1;
              i += 2;
              continue;
            }
            i++;
            continue;
          }
          if (d === 34) break;
          i++;
        }
        value = JSON.stringify(val + s.slice(start, i));
        i++;
      }
      out += names > 1 ? `,"${name}":${value}` : `"${name}":${value}`;
    }
    out += '}';
  }
  sdEnd = i;
  return out + '}';
}

/** `","severity":"…","message":` by severity code, `,"facility":"…"` by facility code: fewer pieces to join per entry. */
const SEVERITY_MESSAGE_JSON: readonly string[] = SEVERITIES.map((v) => `","severity":"${v}","message":`);
const FACILITY_JSON: readonly string[] = FACILITIES.map((v) => `,"facility":"${v}"`);

/** Characters outside printable ASCII; and those JSON.stringify writes as a \u escape (or could: any surrogate). */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/;
const U_ESCAPED = /[\x00-\x1f\ud800-\udfff]/;

/**
 * The JSON text of the entry parsedLineEntry (./entry.ts) builds for an RFC 5424 line,
 * after its opening brace (the buffer puts "seq" there), written straight from the scan:
 * no entry, metadata or structured-data objects and no JSON.stringify of them (see
 * EntryJsonContext). Null when the line is not RFC 5424, or when its
 * entry is left to the object path (which decides the same way as before): a line holding
 * a character JSON.stringify writes as a \u escape (a control character such as a tab, a
 * surrogate), a line long enough that its metadata could pass metadata_max_bytes, a
 * structured-data name that is not a plainKey or is repeated.
 */
export function rfc5424EntryJson(line: string, nowMs: number, ctx: EntryJsonContext): SerializedEntry | null {
  // An entry whose metadata text could reach the cap, or whose message could pass max_message_chars.
  if (line.length * 3 > LIMITS.metadata_max_bytes || line.length > LIMITS.max_message_chars) return null;
  let ascii = true;
  if (NOT_PRINTABLE_ASCII.test(line)) {
    if (U_ESCAPED.test(line)) return null;
    ascii = false;
  }
  let i = scanHead5424(line, nowMs);
  if (i < 0) return null;
  let sd: string | null = null;
  const c = line.charCodeAt(i);
  if (c === 45 /* - */) {
    i++;
  } else if (c === 91) {
    sd = structuredDataJson(line, i);
    if (sd === null) return null;
    i = sdEnd;
  } else return null;
  const message = message5424(line, i);
  if (message === null) return null;
  const f = fields5424;
  const labelsJson = ctx.labelsJson;
  let json = '"ts":"' + f.ts + SEVERITY_MESSAGE_JSON[f.pri & 7]! + quoted(message) + ctx.sourceJson + FACILITY_JSON[f.pri >> 3]!;
  if (f.app_name !== null) json += `,"app_name":${quoted(f.app_name)}`;
  if (f.process_id !== null) json += `,"process_id":${quoted(f.process_id)}`;
  const h = f.hostname, m = f.msgid;
  if (h !== null || m !== null || sd !== null || labelsJson !== '') {
    let meta = '';
    if (h !== null) meta = `,"hostname":${quoted(h)}`;
    if (m !== null) meta += `,"msgid":${quoted(m)}`;
    if (sd !== null) meta += `,"structured_data":${sd}`;
    meta += labelsJson;
    json += `,"metadata":{${meta.slice(1)}}`;
  }
  json += '}';
  return new SerializedEntry(json, ascii && ctx.ascii ? json.length : Buffer.byteLength(json, 'utf8'));
}

/** What every entry of one source shares, as JSON text (entryJsonContext). */
export interface EntryJsonContext {
  /** `,"source":…` */
  sourceJson: string;
  /** `,"labels":…`, or '' without labels. */
  labelsJson: string;
  /** Both are ASCII (else an entry's UTF-8 length is counted). */
  ascii: boolean;
}

/** The context for a source's entries, or null when its source or labels have a character JSON.stringify writes as a \u escape (its entries then take the object path). */
export function entryJsonContext(source: string, labels: Record<string, string> | null): EntryJsonContext | null {
  const sourceJson = `,"source":${JSON.stringify(source)}`;
  const labelsJson = labels === null ? '' : `,"labels":${JSON.stringify(labels)}`;
  if (sourceJson.includes('\\u') || labelsJson.includes('\\u')) return null;
  return { sourceJson, labelsJson, ascii: !NOT_PRINTABLE_ASCII.test(sourceJson) && !NOT_PRINTABLE_ASCII.test(labelsJson) };
}

/** RFC 5424. Returns null when the line is not one (the caller tries the next format). */
export function parseRfc5424(line: string, nowMs: number): ParsedLine | null {
  const f = scanRfc5424(line, nowMs);
  if (f === null) return null;
  let metadata: Record<string, unknown> | null = null;
  const h = f.hostname, m = f.msgid, sd = f.structured_data;
  if (h !== null && m !== null && sd !== null) metadata = { hostname: h, msgid: m, structured_data: sd };
  else if (h !== null || m !== null || sd !== null) {
    metadata = {};
    if (h !== null) metadata.hostname = h;
    if (m !== null) metadata.msgid = m;
    if (sd !== null) metadata.structured_data = sd;
  }
  return {
    ts: f.ts,
    severity: SEVERITIES[f.pri & 7]!,
    facility: FACILITIES[f.pri >> 3]!,
    app_name: f.app_name,
    process_id: f.process_id,
    message: f.message,
    metadata,
    format: 'rfc5424',
  };
}

/** The year-less 3164 timestamp "Mmm dd hh:mm:ss" at s[i..i+15) in local time; NaN if malformed. */
function parse3164Stamp(s: string, i: number, nowMs: number): number {
  const mon = MONTHS[s.slice(i, i + 3)];
  if (mon === undefined || s.charCodeAt(i + 3) !== 32) return NaN;
  const d1 = s.charCodeAt(i + 4);
  const day = d1 === 32 ? num(s, i + 5, 1) : num(s, i + 4, 2);
  if (day < 1 || day > 31 || s.charCodeAt(i + 6) !== 32) return NaN;
  const h = num(s, i + 7, 2), m = num(s, i + 10, 2), sec = num(s, i + 13, 2);
  if (s.charCodeAt(i + 9) !== 58 || s.charCodeAt(i + 12) !== 58 || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 60) return NaN;
  const year = new Date(nowMs).getFullYear();
  let t = new Date(year, mon, day, h, m, Math.min(sec, 59)).getTime();
  // No year in 3164: the current one, or the previous if that is more than a day ahead.
  if (t > nowMs + DAY_MS) t = new Date(year - 1, mon, day, h, m, Math.min(sec, 59)).getTime();
  return t;
}

function isTagChar(c: number): boolean {
  // Printable ASCII except space, '[', ']', ':'.
  return c > 32 && c < 127 && c !== 91 && c !== 93 && c !== 58;
}

/**
 * Reads "TAG[pid]: " or "TAG: " at s[i]; returns [tag, pid, index of the message] or null.
 */
function parseTag(s: string, i: number): [string, string | null, number] | null {
  let j = i;
  while (j < s.length && j - i < 48 && isTagChar(s.charCodeAt(j))) j++;
  if (j === i) return null;
  const tag = s.slice(i, j);
  let pid: string | null = null;
  if (s.charCodeAt(j) === 91) {
    const close = s.indexOf(']', j + 1);
    if (close < 0 || close - j > 21) return null;
    pid = s.slice(j + 1, close);
    if (pid.length === 0 || pid.includes(' ')) return null;
    j = close + 1;
  }
  if (s.charCodeAt(j) !== 58) return null;
  j++;
  if (s.charCodeAt(j) === 32) j++;
  return [tag, pid, j];
}

/**
 * RFC 3164 (BSD syslog): "<PRI>Mmm dd hh:mm:ss HOST TAG[pid]: MSG". Also accepted: no PRI
 * (the format rsyslog writes to files; severity `info`, facility null), an RFC 3339
 * timestamp in place of the BSD one, and no HOST ("<PRI>Mmm dd hh:mm:ss TAG: MSG").
 */
export function parseRfc3164(line: string, nowMs: number): ParsedLine | null {
  let pri = -1;
  let i = 0;
  if (line.charCodeAt(0) === 60) {
    i = parsePri(line);
    if (i < 0) return null;
    pri = priValue;
  }
  let ts: number;
  const c0 = line.charCodeAt(i);
  if (isDigit(c0)) {
    const e = nextSpace(line, i);
    ts = parseRfc3339(line, i, e);
    if (Number.isNaN(ts)) return null;
    i = e + 1;
  } else {
    ts = parse3164Stamp(line, i, nowMs);
    if (Number.isNaN(ts)) return null;
    i += 15;
    if (line.charCodeAt(i) !== 32) return null;
    i++;
  }
  let hostname: string | null = null;
  let tag = parseTag(line, i); // "TAG[pid]: msg" without HOST
  if (tag === null) {
    const e = nextSpace(line, i);
    if (e > i && e < line.length) {
      hostname = line.slice(i, e);
      tag = parseTag(line, e + 1);
      if (tag === null) i = e + 1;
    }
  }
  const message = stripBom(tag !== null ? line.slice(tag[2]) : line.slice(i));
  return {
    ts: isoFromEpoch(ts),
    severity: pri < 0 ? 'info' : SEVERITIES[pri & 7]!,
    facility: pri < 0 ? null : FACILITIES[pri >> 3]!,
    app_name: tag !== null ? tag[0] : null,
    process_id: tag !== null ? tag[1] : null,
    message,
    metadata: hostname !== null ? { hostname } : null,
    format: 'rfc3164',
  };
}

const LEVEL_NAMES: Record<string, Severity> = {
  emerg: 'emerg', emergency: 'emerg', panic: 'emerg',
  alert: 'alert',
  crit: 'crit', critical: 'crit', fatal: 'crit',
  err: 'err', error: 'err', eror: 'err',
  warn: 'warning', warning: 'warning',
  notice: 'notice',
  info: 'info', information: 'info', informational: 'info',
  debug: 'debug', trace: 'debug', verbose: 'debug',
};

/** Maps a JSON `level`/`severity` value: syslog names and common aliases, syslog numbers 0–7, pino/bunyan numbers 10–60. */
export function mapLevel(v: unknown): Severity | null {
  if (typeof v === 'string') {
    const s = LEVEL_NAMES[v.toLowerCase()];
    if (s !== undefined) return s;
    if (/^[0-7]$/.test(v)) return SEVERITIES[Number(v)]!;
    return null;
  }
  if (typeof v === 'number' && Number.isInteger(v)) {
    if (v >= 0 && v <= 7) return SEVERITIES[v]!;
    if (v >= 10 && v <= 60 && v % 10 === 0) {
      return (['debug', 'debug', 'info', 'warning', 'err', 'crit'] as const)[v / 10 - 1]!;
    }
  }
  return null;
}

const MESSAGE_KEYS = ['message', 'msg', 'log'] as const;
const LEVEL_KEYS = ['level', 'severity', 'lvl'] as const;
const TIME_KEYS = ['timestamp', '@timestamp', 'time', 'ts'] as const;

function jsonTime(v: unknown): number {
  if (typeof v === 'string') {
    const t = parseRfc3339(v, 0, v.length);
    return t;
  }
  // Epoch milliseconds (pino `time`) in a plausible range (2001–2286).
  if (typeof v === 'number' && v > 1e12 && v < 1e13) return Math.floor(v);
  return NaN;
}

/** The metadata key that marks an entry whose own metadata broke a contract cap (its value: "depth", "size" or "unserializable"). */
export const METADATA_DROPPED = 'cortex_metadata_dropped';
const METADATA_LIMITS = { maxDepth: LIMITS.metadata_max_depth, maxBytes: LIMITS.metadata_max_bytes };

/** A JSON object line: message from `message`/`msg`/`log`, every other field in metadata. */
export function parseJsonLine(line: string, nowMs: number): ParsedLine | null {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return null;
  const o = obj as Record<string, unknown>;
  let message: string | null = null;
  let msgKey: string | null = null;
  for (const k of MESSAGE_KEYS) {
    const v = o[k];
    if (typeof v === 'string') {
      message = v.endsWith('\n') ? v.slice(0, -1) : v;
      msgKey = k;
      break;
    }
  }
  let severity: Severity = 'info';
  for (const k of LEVEL_KEYS) {
    const s = mapLevel(o[k]);
    if (s !== null) {
      severity = s;
      break;
    }
  }
  let ts = nowMs;
  for (const k of TIME_KEYS) {
    if (k in o) {
      const t = jsonTime(o[k]);
      if (!Number.isNaN(t)) {
        ts = t;
        break;
      }
    }
  }
  let metadata: Record<string, unknown> | null = null;
  if (msgKey === null) {
    metadata = Object.keys(o).length > 0 ? o : null;
  } else {
    const { [msgKey]: _omit, ...rest } = o;
    metadata = Object.keys(rest).length > 0 ? rest : null;
  }
  // Past the contract's metadata caps the whole line is sent as plain text, marked (DECISIONS H2).
  const problem = metadata === null ? undefined : metadataProblem(metadata, METADATA_LIMITS);
  if (problem !== undefined) return { ...plainLine(line, nowMs), metadata: { [METADATA_DROPPED]: problem.kind } };
  return {
    ts: isoFromEpoch(ts),
    severity,
    facility: null,
    app_name: null,
    process_id: null,
    message: message ?? line,
    metadata,
    format: 'json',
  };
}

/** The plain fallback: the line itself, severity info, the read time. */
export function plainLine(line: string, nowMs: number, nowIso?: string): ParsedLine {
  return {
    ts: nowIso ?? isoFromEpoch(nowMs),
    severity: 'info',
    facility: null,
    app_name: null,
    process_id: null,
    message: line,
    metadata: null,
    format: 'plain',
  };
}

/**
 * Parses one line (no trailing newline; a trailing CR and a leading BOM are removed).
 * `nowIso` (= new Date(nowMs).toISOString()) may be passed to save formatting it per line.
 */
export function parseLine(raw: string, nowMs: number, nowIso?: string): ParsedLine {
  let line = raw;
  if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
  if (line.charCodeAt(line.length - 1) === 13) line = line.slice(0, -1);
  const c = line.charCodeAt(0);
  if (c === 60 /* < */) {
    return parseRfc5424(line, nowMs) ?? parseRfc3164(line, nowMs) ?? plainLine(line, nowMs, nowIso);
  }
  if (c === 123 /* { */) {
    return parseJsonLine(line, nowMs) ?? plainLine(line, nowMs, nowIso);
  }
  if ((c >= 65 && c <= 90) || (c >= 48 && c <= 57)) {
    return parseRfc3164(line, nowMs) ?? plainLine(line, nowMs, nowIso);
  }
  return plainLine(line, nowMs, nowIso);
}
