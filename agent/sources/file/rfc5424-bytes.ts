// RFC 5424 file lines as JSON text written from the file's bytes (DECISIONS P19): one pass
// over the line's bytes in the chunk, copying its fields into a reusable byte buffer with the
// JSON punctuation around them, and one string made of it at the end. No line string, no
// field strings, no concatenations (P18 wrote the same text from ~25 string pieces, whose
// allocation cost what JSON.stringify had). Only printable-ASCII lines take this path (every
// byte is then its own character, and JSON escapes only `"` and `\` among them); any other
// line, and anything this path would have to decide differently from rfc5424EntryJson
// (../syslog-parse.ts), returns null and goes the string path as before. The text is the one
// rfc5424EntryJson writes for the same line, byte for byte (a test compares them).

import { LIMITS } from '@cortex/agent-protocol';
import { SerializedEntry } from '../../buffer/entry.js';
import { FACILITIES, SEVERITIES, daysInMonth, rfc3339Text, type EntryJsonContext } from '../syslog-parse.js';

/** An EntryJsonContext with its pieces as bytes. */
export interface EntryBytesContext {
  /** `,"source":…` */
  source: Buffer;
  /** `"labels":…` (no leading comma), or null without labels. */
  labels: Buffer | null;
}

/** The longest line this path writes: one whose metadata could not reach metadata_max_bytes, nor its message max_message_chars (rfc5424EntryJson's bounds). */
const MAX_LINE = Math.min(Math.floor(LIMITS.metadata_max_bytes / 3), LIMITS.max_message_chars);

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
const TS_OPEN = ascii('"ts":"');
const SEVERITY_MESSAGE: readonly Buffer[] = SEVERITIES.map((v) => ascii(`","severity":"${v}","message":"`));
const FACILITY: readonly Buffer[] = FACILITIES.map((v) => ascii(`,"facility":"${v}"`));
const APP_NAME = ascii(',"app_name":"');
const PROCESS_ID = ascii(',"process_id":"');
const METADATA = ascii(',"metadata":{');
const HOSTNAME = ascii('"hostname":"');
const MSGID = ascii('"msgid":"');
const STRUCTURED_DATA = ascii('"structured_data":');
const PROTO = ascii('__proto__');

/** The bytes context for an EntryJsonContext, or null when its source or labels are not ASCII (their entries take the string path). */
export function entryBytesContext(ctx: EntryJsonContext): EntryBytesContext | null {
  if (!ctx.ascii) return null;
  return { source: ascii(ctx.sourceJson), labels: ctx.labelsJson === '' ? null : ascii(ctx.labelsJson.slice(1)) };
}

/**
 * The entry being written, and its structured data (which goes after the message, read after
 * it): one pair for every source, made at the first use. A line of MAX_LINE bytes at most
 * writes at most twice its bytes (each one escaped) around the fixed text; the source and the
 * labels are added per entry.
 */
let outBuf: Buffer | null = null;
let sdBuf: Buffer | null = null;
const ROOM = 2 * MAX_LINE + 512;

/** Where the writer is in `out` (and `sd`): module state, as the string scanners keep theirs. */
let p = 0;
let q = 0;

/** piece into out (a loop: TypedArray.set costs more than these few bytes). */
function put(out: Buffer, piece: Buffer): void {
  let o = p;
  for (let k = 0; k < piece.length; k++) out[o++] = piece[k]!;
  p = o;
}

/** buf[a, b) into out as a JSON string's characters (only `"` and `\` escaped); false at a byte that is not printable ASCII. */
function putEscaped(out: Buffer, buf: Buffer, a: number, b: number): boolean {
  let o = p;
  for (let k = a; k < b; k++) {
    const c = buf[k]!;
    if (c < 32 || c > 126) return false;
    if (c === 34 || c === 92) out[o++] = 92;
    out[o++] = c;
  }
  p = o;
  return true;
}

/** The index of the next space in buf[i, b), or b; -1 at a byte that is not printable ASCII. */
function nextSpace(buf: Buffer, i: number, b: number): number {
  for (; i < b; i++) {
    const c = buf[i]!;
    if (c === 32) return i;
    if (c < 32 || c > 126) return -1;
  }
  return b;
}

/** buf[x, y) is the NILVALUE "-". */
function nil(buf: Buffer, x: number, y: number): boolean {
  return y - x === 1 && buf[x] === 45;
}

/** Two digits at buf[i]: their value, or -1. */
function d2(buf: Buffer, i: number): number {
  const x = buf[i]! - 48, y = buf[i + 1]! - 48;
  return x >= 0 && x <= 9 && y >= 0 && y <= 9 ? x * 10 + y : -1;
}

/**
 * The timestamp buf[a, a + 24) is canonical (YYYY-MM-DDThh:mm:ss.fffZ, a valid date from year
 * 100 on, no leap second): rfc3339Text gives these bytes back as they are.
 */
function canonicalTimestamp(buf: Buffer, a: number): boolean {
  if (buf[a + 4] !== 45 || buf[a + 7] !== 45 || buf[a + 10] !== 84 || buf[a + 13] !== 58 || buf[a + 16] !== 58 || buf[a + 19] !== 46 || buf[a + 23] !== 90) return false;
  const yh = d2(buf, a), yl = d2(buf, a + 2), M = d2(buf, a + 5), D = d2(buf, a + 8);
  const h = d2(buf, a + 11), m = d2(buf, a + 14), sec = d2(buf, a + 17), f = d2(buf, a + 20), f3 = buf[a + 22]! - 48;
  if (yh < 1 || yl < 0 || M < 1 || M > 12 || D < 1 || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59 || f < 0 || f3 < 0 || f3 > 9) return false;
  return D <= daysInMonth(yh * 100 + yl, M);
}

/** buf[a, b) is a structured-data name rfc5424EntryJson writes itself (its plainKey): not starting with a digit, not `__proto__`, no `"` or `\`. */
function plainKey(buf: Buffer, a: number, b: number): boolean {
  const c0 = buf[a]!;
  if (c0 >= 48 && c0 <= 57) return false;
  if (c0 === 95 && b - a === 9) {
    let k = 1;
    while (k < 9 && buf[a + k] === PROTO[k]) k++;
    if (k === 9) return false;
  }
  for (let k = a; k < b; k++) {
    const c = buf[k]!;
    if (c === 34 || c === 92) return false;
  }
  return true;
}

/** Start and end of the SD-IDs written so far, then of the current element's PARAM-NAMEs. */
const ids = new Int32Array(2 * 256);
const names = new Int32Array(2 * 256);

/** buf[a, b) equals one of the n ranges in list. */
function seen(buf: Buffer, list: Int32Array, n: number, a: number, b: number): boolean {
  const len = b - a;
  for (let k = 0; k < n; k++) {
    const s = list[2 * k]!, e = list[2 * k + 1]!;
    if (e - s !== len) continue;
    let x = 0;
    while (x < len && buf[s + x] === buf[a + x]) x++;
    if (x === len) return true;
  }
  return false;
}

/** Where the structured data ended. */
let sdEnd = 0;

/**
 * The structured data at buf[i] === '[' as JSON into ctx.sd (its length in q, its end in
 * sdEnd); false when it is malformed or left to the string path (structuredDataJson's rules).
 */
function structuredData(buf: Buffer, i: number, b: number, sd: Buffer): boolean {
  q = 0;
  sd[q++] = 123; // {
  let nIds = 0;
  while (i < b && buf[i] === 91 /* [ */) {
    i++;
    let j = i;
    while (j < b) {
      const c = buf[j]!;
      if (c === 32 || c === 93 || c === 61 || c === 34) break;
      if (c < 32 || c > 126) return false;
      j++;
    }
    if (j === i || !plainKey(buf, i, j) || seen(buf, ids, nIds, i, j) || nIds === 256) return false;
    ids[2 * nIds] = i;
    ids[2 * nIds + 1] = j;
    if (nIds++ > 0) sd[q++] = 44; // ,
    sd[q++] = 34;
    for (let k = i; k < j; k++) sd[q++] = buf[k]!;
    sd[q++] = 34;
    sd[q++] = 58;
    sd[q++] = 123; // "id":{
    let nNames = 0;
    i = j;
    for (;;) {
      if (i >= b) return false;
      const c = buf[i]!;
      if (c === 93 /* ] */) {
        i++;
        break;
      }
      if (c !== 32) return false;
      i++;
      let eq = i;
      for (; eq < b; eq++) {
        const d = buf[eq]!;
        if (d === 61) break;
        if (d === 32 || d === 93 || d < 32 || d > 126) return false;
      }
      if (eq >= b || eq + 1 >= b || buf[eq + 1] !== 34 || eq === i) return false;
      if (!plainKey(buf, i, eq) || seen(buf, names, nNames, i, eq) || nNames === 256) return false;
      names[2 * nNames] = i;
      names[2 * nNames + 1] = eq;
      if (nNames++ > 0) sd[q++] = 44;
      sd[q++] = 34;
      for (let k = i; k < eq; k++) sd[q++] = buf[k]!;
      sd[q++] = 34;
      sd[q++] = 58;
      sd[q++] = 34; // "name":"
      // PARAM-VALUE: \" \\ \] stand for the character, any other \ for itself (RFC 5424 6.3.3)
      i = eq + 2;
      for (;;) {
        if (i >= b) return false;
        const d = buf[i]!;
        if (d === 92 /* \ */) {
          const e = i + 1 < b ? buf[i + 1]! : -1;
          if (e === 34 || e === 92) {
            sd[q++] = 92;
            sd[q++] = e;
            i += 2;
          } else if (e === 93) {
            sd[q++] = 93;
            i += 2;
          } else {
            sd[q++] = 92;
            sd[q++] = 92;
            i++;
          }
          continue;
        }
        if (d === 34) break;
        if (d < 32 || d > 126) return false;
        sd[q++] = d;
        i++;
      }
      sd[q++] = 34;
      i++;
    }
    sd[q++] = 125; // }
  }
  sd[q++] = 125;
  sdEnd = i;
  return true;
}

/**
 * rfc5424EntryJson's text for the line buf[a, b) (no LF, no CR), read at nowMs (nowIso its
 * ISO text), written from the bytes; null when the line is not printable ASCII, not RFC 5424,
 * or is left to the string path.
 */
export function rfc5424EntryBytes(buf: Buffer, a: number, b: number, nowIso: string, ctx: EntryBytesContext): SerializedEntry | null {
  // PRI: "<" 1-3 digits ">", no leading zero but "0", at most 191
  if (buf[a] !== 60 || b - a > MAX_LINE) return null;
  const room = ROOM + ctx.source.length + (ctx.labels?.length ?? 0);
  if (outBuf === null || outBuf.length < room) outBuf = Buffer.allocUnsafe(room);
  sdBuf ??= Buffer.allocUnsafe(ROOM);
  let i = a + 1;
  let pri = 0;
  for (; i < b && i <= a + 4; i++) {
    const c = buf[i]!;
    if (c === 62) break;
    if (c < 48 || c > 57) return null;
    pri = pri * 10 + (c - 48);
  }
  const digits = i - a - 1;
  if (digits < 1 || digits > 3 || i >= b || buf[i] !== 62 || (digits > 1 && buf[a + 1] === 48) || pri > 191) return null;
  i++;
  // VERSION: 1-2 digits, non-zero first, then SP
  const v0 = i < b ? buf[i]! : 0;
  if (!(v0 >= 49 && v0 <= 57)) return null;
  i++;
  if (i < b && buf[i]! >= 48 && buf[i]! <= 57) i++;
  if (i >= b || buf[i] !== 32) return null;
  i++;
  // TIMESTAMP: "-" (the read time), canonical (copied), or any other RFC 3339 form (rfc3339Text)
  const tsA = i, tsB = nextSpace(buf, i, b);
  if (tsB < 0) return null;
  let ts: string | null = nowIso;
  if (tsB - tsA === 24 && canonicalTimestamp(buf, tsA)) ts = null;
  else if (!(tsB - tsA === 1 && buf[tsA] === 45)) {
    ts = rfc3339Text(buf.toString('latin1', tsA, tsB));
    if (ts === null) return null;
  }
  // HOSTNAME APP-NAME PROCID MSGID: one non-empty token each, then SP
  if (tsB + 1 > b) return null;
  const hA = tsB + 1, hB = nextSpace(buf, hA, b);
  if (hB <= hA || hB + 1 > b) return null;
  const aA = hB + 1, aB = nextSpace(buf, aA, b);
  if (aB <= aA || aB + 1 > b) return null;
  const pA = aB + 1, pB = nextSpace(buf, pA, b);
  if (pB <= pA || pB + 1 > b) return null;
  const mA = pB + 1, mB = nextSpace(buf, mA, b);
  if (mB <= mA || mB + 1 > b) return null;
  // STRUCTURED-DATA: "-" or elements
  i = mB + 1;
  let hasSd = false;
  const c = i < b ? buf[i] : -1;
  if (c === 45) i++;
  else if (c === 91) {
    if (!structuredData(buf, i, b, sdBuf)) return null;
    hasSd = true;
    i = sdEnd;
  } else return null;
  // MSG: nothing, or SP and the rest
  let msgA = b;
  if (i < b) {
    if (buf[i] !== 32) return null;
    msgA = i + 1;
  }
  const out = outBuf;
  p = 0;
  put(out, TS_OPEN);
  if (ts === null) for (let k = tsA; k < tsB; k++) out[p++] = buf[k]!;
  else for (let k = 0; k < ts.length; k++) out[p++] = ts.charCodeAt(k);
  put(out, SEVERITY_MESSAGE[pri & 7]!);
  if (!putEscaped(out, buf, msgA, b)) return null;
  out[p++] = 34;
  put(out, ctx.source);
  put(out, FACILITY[pri >> 3]!);
  if (!nil(buf, aA, aB)) {
    put(out, APP_NAME);
    putEscaped(out, buf, aA, aB);
    out[p++] = 34;
  }
  if (!nil(buf, pA, pB)) {
    put(out, PROCESS_ID);
    putEscaped(out, buf, pA, pB);
    out[p++] = 34;
  }
  const host = !nil(buf, hA, hB), msgid = !nil(buf, mA, mB);
  if (host || msgid || hasSd || ctx.labels !== null) {
    put(out, METADATA);
    let first = true;
    if (host) {
      put(out, HOSTNAME);
      putEscaped(out, buf, hA, hB);
      out[p++] = 34;
      first = false;
    }
    if (msgid) {
      if (!first) out[p++] = 44;
      put(out, MSGID);
      putEscaped(out, buf, mA, mB);
      out[p++] = 34;
      first = false;
    }
    if (hasSd) {
      if (!first) out[p++] = 44;
      put(out, STRUCTURED_DATA);
      const sd = sdBuf;
      for (let k = 0; k < q; k++) out[p++] = sd[k]!;
      first = false;
    }
    if (ctx.labels !== null) {
      if (!first) out[p++] = 44;
      put(out, ctx.labels);
    }
    out[p++] = 125;
  }
  out[p++] = 125;
  return new SerializedEntry(out.toString('latin1', 0, p), p);
}
