import { describe, expect, it } from 'vitest';
import { mapLevel, parseLine, parseRfc3164, parseRfc5424 } from '../../../agent/sources/syslog-parse.js';

const NOW = Date.parse('2024-06-15T12:00:00.000Z');
const local = (y: number, mo: number, d: number, h: number, mi: number, s: number) => new Date(y, mo, d, h, mi, s).toISOString();

describe('RFC 5424', () => {
  it('parses the RFC example with structured data and BOM', () => {
    const p = parseLine(
      '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"] \uFEFFAn application event log entry...',
      NOW,
    );
    expect(p).toEqual({
      ts: '2003-10-11T22:14:15.003Z',
      severity: 'notice',
      facility: 'local4',
      app_name: 'evntslog',
      process_id: null,
      message: 'An application event log entry...',
      metadata: {
        hostname: 'mymachine.example.com',
        msgid: 'ID47',
        structured_data: {
          'exampleSDID@32473': { iut: '3', eventSource: 'Application', eventID: '1011' },
          'examplePriority@32473': { class: 'high' },
        },
      },
      format: 'rfc5424',
    });
  });

  it('converts offsets to UTC, truncates fractions to ms, keeps procid', () => {
    const p = parseRfc5424('<34>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It\'s time to make the do-nuts.', NOW)!;
    expect(p.ts).toBe('2003-08-24T12:14:15.000Z');
    expect(p.severity).toBe('crit');
    expect(p.facility).toBe('auth');
    expect(p.process_id).toBe('8710');
    expect(p.app_name).toBe('myproc');
    expect(p.metadata).toEqual({ hostname: '192.0.2.1' });
    expect(p.message).toBe("%% It's time to make the do-nuts.");
  });

  it('NILVALUE everywhere: read time, null fields, no message', () => {
    const p = parseRfc5424('<0>1 - - - - - -', NOW)!;
    expect(p).toMatchObject({ ts: '2024-06-15T12:00:00.000Z', severity: 'emerg', facility: 'kern', app_name: null, process_id: null, message: '', metadata: null });
  });

  it('SD escapes', () => {
    const p = parseRfc5424('<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="a\\"b\\]c\\\\d"] msg', NOW)!;
    expect(p.metadata).toMatchObject({ structured_data: { 'x@1': { k: 'a"b]c\\d' } } });
    expect(p.message).toBe('msg');
  });

  it('malformed lines fall through to plain', () => {
    for (const l of ['<192>1 2024-01-01T00:00:00Z h a 1 m - x', '<01>1 - - - - - -', '<1a>1 - - - - - -', '<>1 - -', '<13', '<13>1 2024-13-01T00:00:00Z h a p m - x', '<13>1 2024-02-30T00:00:00Z h a p m - x', '<13>1 - h a', '<13>1 - h a p m [broken x']) {
      const p = parseLine(l, NOW);
      expect(p.format, l).not.toBe('rfc5424');
    }
    expect(parseLine('<192>1 2024-01-01T00:00:00Z h a 1 m - x', NOW)).toMatchObject({ format: 'plain', severity: 'info', message: '<192>1 2024-01-01T00:00:00Z h a 1 m - x', ts: '2024-06-15T12:00:00.000Z' });
  });
});

describe('RFC 3164', () => {
  it('parses host, tag and pid in local time with the current year', () => {
    const p = parseLine('<13>Jun  5 22:14:15 mymachine sshd[1234]: Accepted publickey', NOW);
    expect(p).toEqual({
      ts: local(2024, 5, 5, 22, 14, 15),
      severity: 'notice',
      facility: 'user',
      app_name: 'sshd',
      process_id: '1234',
      message: 'Accepted publickey',
      metadata: { hostname: 'mymachine' },
      format: 'rfc3164',
    });
  });

  it('rolls back a year when the date would be more than a day ahead', () => {
    expect(parseRfc3164('<13>Dec 31 23:59:59 h su: x', NOW)!.ts).toBe(local(2023, 11, 31, 23, 59, 59));
    expect(parseRfc3164('<13>Jun 16 11:00:00 h su: x', NOW)!.ts).toBe(local(2024, 5, 16, 11, 0, 0));
  });

  it('tag without pid, missing hostname, no PRI (file format), RFC 3339 stamp', () => {
    expect(parseLine('<38>Oct 11 22:14:15 mymachine su: \'su root\' failed', NOW)).toMatchObject({ app_name: 'su', process_id: null, facility: 'auth', severity: 'info', metadata: { hostname: 'mymachine' }, message: "'su root' failed" });
    expect(parseLine('<38>Oct 11 22:14:15 cron[99]: job', NOW)).toMatchObject({ app_name: 'cron', process_id: '99', metadata: null, message: 'job' });
    expect(parseLine('Oct 11 22:14:15 host kernel: [ 1.0] usb', NOW)).toMatchObject({ format: 'rfc3164', facility: null, severity: 'info', app_name: 'kernel', message: '[ 1.0] usb' });
    expect(parseLine('2024-03-01T10:00:00.123456+01:00 host app[7]: hi', NOW)).toMatchObject({ ts: '2024-03-01T09:00:00.123Z', app_name: 'app', process_id: '7', message: 'hi' });
    expect(parseLine('<13>Oct 11 22:14:15 host no tag here', NOW)).toMatchObject({ format: 'rfc3164', app_name: null, message: 'no tag here', metadata: { hostname: 'host' } });
  });

  it('malformed 3164 stamps are plain', () => {
    expect(parseLine('Foo 11 22:14:15 host a: b', NOW).format).toBe('plain');
    expect(parseLine('<13>Oct 41 22:14:15 host a: b', NOW).format).toBe('plain');
    expect(parseLine('Hello world', NOW).format).toBe('plain');
  });
});

describe('JSON lines', () => {
  it('message field, level mapping, other fields in metadata, time', () => {
    expect(parseLine('{"level":50,"time":1718452800123,"msg":"boom","pid":3,"req":{"id":1}}', NOW)).toEqual({
      ts: '2024-06-15T12:00:00.123Z',
      severity: 'err',
      facility: null,
      app_name: null,
      process_id: null,
      message: 'boom',
      metadata: { level: 50, time: 1718452800123, pid: 3, req: { id: 1 } },
      format: 'json',
    });
    expect(parseLine('{"severity":"WARNING","message":"w"}', NOW)).toMatchObject({ severity: 'warning', message: 'w', ts: '2024-06-15T12:00:00.000Z' });
    expect(parseLine('{"log":"docker line\\n","stream":"stderr"}', NOW)).toMatchObject({ message: 'docker line', metadata: { stream: 'stderr' } });
    expect(parseLine('{"a":1}', NOW)).toMatchObject({ message: '{"a":1}', metadata: { a: 1 }, severity: 'info' });
    expect(parseLine('{"level":"chatty","msg":"x"}', NOW).severity).toBe('info');
    expect(parseLine('{not json', NOW).format).toBe('plain');
    expect(parseLine('{"timestamp":"2024-01-01T00:00:00+02:00","msg":"t"}', NOW).ts).toBe('2023-12-31T22:00:00.000Z');
  });
  it('mapLevel', () => {
    expect([mapLevel('fatal'), mapLevel('trace'), mapLevel(3), mapLevel('6'), mapLevel(40), mapLevel(99), mapLevel(null)]).toEqual(['crit', 'debug', 'err', 'info', 'warning', null, null]);
  });
});

describe('plain and BOM', () => {
  it('plain line keeps read time and info; BOM and CR removed', () => {
    expect(parseLine('\uFEFFjust text\r', NOW)).toEqual({ ts: '2024-06-15T12:00:00.000Z', severity: 'info', facility: null, app_name: null, process_id: null, message: 'just text', metadata: null, format: 'plain' });
    expect(parseLine('\uFEFF<13>1 - h a - - - m', NOW).format).toBe('rfc5424');
    expect(parseLine('', NOW).message).toBe('');
  });
});
