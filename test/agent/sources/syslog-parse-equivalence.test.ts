// The rewritten line parser (agent/sources/syslog-parse.ts, issue 20) against the parser
// it replaced (fixtures/syslog-parse-reference.ts, verbatim): the same ParsedLine, field
// for field and key for key (the buffer stores JSON text, so key order counts too), for a
// corpus of RFC 5424, RFC 3164, JSON and plain lines with their edge cases, and for a few
// thousand generated lines.
import { describe, expect, it } from 'vitest';
import * as next from '../../../agent/sources/syslog-parse.js';
import * as ref from './fixtures/syslog-parse-reference.js';
import { lineEntry, parsedLineEntry } from '../../../agent/sources/entry.js';

const NOW = Date.parse('2024-06-15T12:00:00.000Z');

const CORPUS: string[] = [
  // RFC 5424: the RFC's examples
  '<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF\'su root\' failed for lonvick on /dev/pts/8',
  '<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It\'s time to make the do-nuts.',
  '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] \uFEFFAn application event log entry...',
  '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
  // NILVALUE everywhere, and in each field
  '<0>1 - - - - - -',
  '<0>1 - - - - - - msg',
  '<13>1 2024-01-01T00:00:00Z - app 1 m - x',
  '<13>1 2024-01-01T00:00:00Z h - 1 m - x',
  '<13>1 2024-01-01T00:00:00Z h a - m - x',
  '<13>1 2024-01-01T00:00:00Z h a 1 - - x',
  '<13>1 2024-01-01T00:00:00Z h a 1 m -',
  '<13>1 2024-01-01T00:00:00Z h a 1 m - ',
  '<191>99 2024-01-01T00:00:00Z h a 1 m - max pri, two-digit version',
  // structured data with escapes, empty values, several params and elements
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="a\\"b\\]c\\\\d"] msg',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="\\n stays \\ backslash"] msg',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k=""][y@2 a="1" b="2"] msg',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v" k="w"] duplicate name',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1] no params',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v"][x@1 k="w"] duplicate id',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v\\\\"] trailing escaped backslash',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="unterminated',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k=v] unquoted',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k ="v"] space before =',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 ="v"] empty name',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 a]b="v"] bracket in name',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [ k="v"] empty id',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v"]nospace',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v"]',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="é😀\u0000"] unicode',
  // BOM: before the message, before the whole line, in the middle
  '\uFEFF<14>1 2024-01-01T00:00:00Z h a 1 m - bom first',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - \uFEFF',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - a\uFEFFb',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - crlf\r',
  // fractional seconds: none, 1..9 digits, empty
  '<14>1 2024-01-01T00:00:00Z h a 1 m - f0',
  '<14>1 2024-01-01T00:00:00.1Z h a 1 m - f1',
  '<14>1 2024-01-01T00:00:00.12Z h a 1 m - f2',
  '<14>1 2024-01-01T00:00:00.123Z h a 1 m - f3',
  '<14>1 2024-01-01T00:00:00.1234Z h a 1 m - f4',
  '<14>1 2024-01-01T00:00:00.123456789Z h a 1 m - f9',
  '<14>1 2024-01-01T00:00:00.Z h a 1 m - empty fraction',
  // timezone offsets, lower-case t/z, leap second, dates at the edges
  '<14>1 2024-01-01T00:30:00+01:00 h a 1 m - previous year',
  '<14>1 2024-12-31T23:30:00-01:00 h a 1 m - next year',
  '<14>1 2024-06-15T12:00:00.5+00:00 h a 1 m - plus zero',
  '<14>1 2024-06-15T12:00:00-00:00 h a 1 m - minus zero',
  '<14>1 2024-06-15T12:00:00+23:59 h a 1 m - max offset',
  '<14>1 2024-06-15T12:00:00+24:00 h a 1 m - bad offset',
  '<14>1 2024-06-15T12:00:00+0200 h a 1 m - offset without colon',
  '<14>1 2024-06-15t12:00:00.123z h a 1 m - lower case',
  '<14>1 2016-12-31T23:59:60Z h a 1 m - leap second',
  '<14>1 2016-12-31T23:59:60.999+05:30 h a 1 m - leap second with offset',
  '<14>1 2024-02-29T00:00:00Z h a 1 m - leap day',
  '<14>1 2023-02-29T00:00:00Z h a 1 m - not a leap day',
  '<14>1 2000-02-29T00:00:00Z h a 1 m - 400-year leap day',
  '<14>1 1900-02-29T00:00:00Z h a 1 m - 1900 not leap',
  '<14>1 0050-02-29T00:00:00Z h a 1 m - two-digit year (Date.UTC reads 1950)',
  '<14>1 0000-02-29T00:00:00Z h a 1 m - year zero',
  '<14>1 0100-03-01T00:00:00Z h a 1 m - year 100',
  '<14>1 1969-12-31T23:59:59.999Z h a 1 m - before 1970',
  '<14>1 1970-01-01T00:00:00+01:00 h a 1 m - before 1970 by offset',
  '<14>1 9999-12-31T23:59:59.999Z h a 1 m - last 4-digit instant',
  '<14>1 9999-12-31T23:59:59.999-01:00 h a 1 m - past 9999 by offset',
  '<14>1 2024-04-31T00:00:00Z h a 1 m - April 31',
  '<14>1 2024-13-01T00:00:00Z h a 1 m - month 13',
  '<14>1 2024-01-01T24:00:00Z h a 1 m - hour 24',
  '<14>1 2024-01-01 00:00:00Z h a 1 m - space for T',
  // malformed 5424 that falls through to 3164 or plain
  '<192>1 2024-01-01T00:00:00Z h a 1 m - x',
  '<01>1 - - - - - -',
  '<1a>1 - - - - - -',
  '<>1 - -',
  '<13',
  '<13>',
  '<13>0 - - - - - - version zero',
  '<13>1 - h a',
  '<13>1 - h a p',
  '<13>1 - h a p m',
  '<13>1 - h a p m ',
  '<13>1  h a p m - double space',
  '<13>1 - h a p m [broken x',
  '<13>1 - h a p m x not sd',
  // RFC 3164 and its variants
  '<13>Jun  5 22:14:15 mymachine sshd[1234]: Accepted publickey',
  '<13>Jun 15 11:00:00 host su: x',
  '<13>Dec 31 23:59:59 h su: rolled back a year',
  '<13>Jun  5 22:14:15 sshd[1234]: no host',
  '<13>Jun  5 22:14:15 host just a message',
  '<13>Jun  5 22:14:15 host tag[]: empty pid',
  '<13>Jun  5 22:14:15 host tag[1 2]: space in pid',
  '<13>Jun  5 22:14:15 host \uFEFFtag: bom',
  '<13>Foo  5 22:14:15 host x: bad month',
  '<13>2024-06-15T12:00:00.123456+02:00 host app[9]: rfc3339 in 3164',
  '<13>2024-06-15T12:00:00Z host app: z',
  'Jun 15 10:00:00 host cron[77]: (root) CMD (run-parts)',
  '2024-06-15T10:00:00.000000+00:00 host systemd[1]: Started x.',
  '2024-06-15 12:00:00,123 INFO worker-1 processed job 1',
  // JSON and plain
  '{"level":"error","msg":"boom","time":1718452800000,"extra":{"a":1}}',
  '{"message":"m\\n","severity":3,"@timestamp":"2024-06-15T12:00:00.5+02:00"}',
  '{"log":"x","lvl":"WARN","ts":"not a time"}',
  '{"a":1}',
  '{}',
  '{not json',
  '[1,2]',
  'just text',
  '',
  '\r',
  '\uFEFF',
];

function* generated(): Generator<string> {
  let seed = 7;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  for (let k = 0; k < 3000; k++) {
    const frac = pick(['', '.', `.${pad(rnd(10), 1)}`, `.${pad(rnd(1000), 3)}`, `.${pad(rnd(1_000_000), 6)}`]);
    const zone = pick(['Z', 'z', '+00:00', '-00:00', `+${pad(rnd(24), 2)}:${pad(rnd(60), 2)}`, `-${pad(rnd(25), 2)}:${pad(rnd(61), 2)}`]);
    const ts = pick([
      '-',
      `${pad(pick([0, 99, 100, 1969, 1970, 2000, 2024, 9999]) + rnd(2), 4)}-${pad(1 + rnd(13), 2)}-${pad(1 + rnd(31), 2)}${pick(['T', 't'])}${pad(rnd(25), 2)}:${pad(rnd(60), 2)}:${pad(rnd(61), 2)}${frac}${zone}`,
    ]);
    const tok = () => pick(['-', 'host', 'web-1.example.com', 'a', '']);
    const value = () => pick(['', 'v', 'a b', 'q\\"q', 'b\\]', 'bs\\\\', 'odd\\x', 'é😀']);
    const sd = pick(['-', `[id@1 k="${value()}"]`, `[id@1 a="${value()}" b="${value()}"][other c="${value()}"]`, '[id@1 k=v]', '[id@1']);
    const msg = pick(['', ' ', ' hello', ' \uFEFFbom', ' x\r', ` ${'y'.repeat(rnd(50))}`]);
    yield `<${rnd(200)}>${pick(['1', '2', '12', '0'])} ${ts} ${tok()} ${tok()} ${tok()} ${tok()} ${sd}${msg}`;
    yield `<${rnd(200)}>${pick(['Jun', 'Dec', 'Feb'])} ${pick([' 5', '15', '29'])} ${pad(rnd(25), 2)}:${pad(rnd(60), 2)}:${pad(rnd(61), 2)} ${tok()} ${pick(['sshd[12]:', 'cron:', 'x[]:', 'y'])} msg`;
  }
}

function same(line: string): void {
  for (const nowIso of [undefined, new Date(NOW).toISOString()]) {
    const a = next.parseLine(line, NOW, nowIso);
    const b = ref.parseLine(line, NOW, nowIso);
    expect(a, line).toEqual(b);
    expect(JSON.stringify(a), line).toBe(JSON.stringify(b));
  }
  expect(next.parseRfc5424(line, NOW), line).toEqual(ref.parseRfc5424(line, NOW));
  expect(next.parseRfc3164(line, NOW), line).toEqual(ref.parseRfc3164(line, NOW));
}

describe('the rewritten parser gives what the reference parser gives', () => {
  it('on the edge-case corpus (5424, 3164, JSON, plain)', () => {
    const formats = new Set<string>();
    for (const line of CORPUS) {
      same(line);
      formats.add(ref.parseLine(line, NOW).format);
    }
    expect([...formats].sort()).toEqual(['json', 'plain', 'rfc3164', 'rfc5424']);
  });

  it('on generated lines', () => {
    let n5424 = 0;
    for (const line of generated()) {
      same(line);
      if (ref.parseLine(line, NOW).format === 'rfc5424') n5424++;
    }
    expect(n5424).toBeGreaterThan(300); // the generator reaches the 5424 path often enough
  });

  it('parseRfc3339 and isoFromEpoch agree with Date on timestamps and instants', () => {
    const stamps = ['2024-06-15T12:00:00Z', '2024-06-15T12:00:00.123456-07:30', '0099-12-31T23:59:59Z', '1969-12-31T23:59:59.999+00:00', '2024-02-30T00:00:00Z', 'garbage'];
    for (const s of stamps) expect(next.parseRfc3339(s, 0, s.length), s).toEqual(ref.parseRfc3339(s, 0, s.length));
    const instants = [0, 1, -1, 86_399_999, 951_782_400_000, 1_718_452_800_123, 253_402_300_799_999, 253_402_300_800_000, -62_198_755_200_000, 1.5, NOW];
    let seed = 1;
    for (let k = 0; k < 2000; k++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      instants.push(Math.floor((seed / 0x7fffffff) * 253_402_300_799_999));
    }
    for (const ms of instants) expect(next.isoFromEpoch(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('parsedLineEntry (the file source path) gives the entry lineEntry(parseLine) gives, key for key', () => {
    const nowIso = new Date(NOW).toISOString();
    let fast = 0;
    for (const line of [...CORPUS, ...generated()]) {
      for (const labels of [null, { env: 'prod', team: 'a' }]) {
        const want = lineEntry(line, ref.parseLine(line, NOW, nowIso), 'file:/var/log/x.log', labels, null, nowIso);
        const got = parsedLineEntry(line, NOW, nowIso, 'file:/var/log/x.log', labels);
        expect(got, line).toEqual(want);
        expect(JSON.stringify(got), line).toBe(JSON.stringify(want));
      }
      if (ref.parseLine(line, NOW).format === 'rfc5424' && !line.endsWith('\r') && !line.startsWith('\uFEFF')) fast++;
    }
    expect(fast).toBeGreaterThan(300); // the direct RFC 5424 path was taken often enough
  });

  it('structured-data names that share a cache slot stay apart', () => {
    // same length, first and last character: the same slot of the name cache
    const lines = ['[kxz@1 pxq="1" pyq="2"]', '[kyz@1 pyq="3" pxq="4"]', '[kxz@1 pzq="5"]'].map((sd) => `<14>1 2024-01-01T00:00:00Z h a 1 m ${sd} msg`);
    for (let round = 0; round < 3; round++) {
      for (const line of lines) {
        expect(next.parseLine(line, NOW), line).toEqual(ref.parseLine(line, NOW));
        expect(JSON.stringify(next.parseLine(line, NOW))).toBe(JSON.stringify(ref.parseLine(line, NOW)));
      }
    }
    expect(next.parseLine(lines[1]!, NOW).metadata).toEqual({ hostname: 'h', msgid: 'm', structured_data: { 'kyz@1': { pyq: '3', pxq: '4' } } });
  });
});

