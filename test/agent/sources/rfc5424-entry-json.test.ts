// RFC 5424 file lines written as JSON text straight from the scan (DECISIONS P18): the text
// must be what the object path stores for the same line (parsedLineEntry → the buffer's
// JSON), byte for byte, a valid LogBatchEntry, with its UTF-8 length right; and the buffer
// and the storage guard must store it as they store the object.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateLogBatchEntry } from '@cortex/agent-protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { SerializedEntry, type BufferEntry } from '../../../agent/buffer/entry.js';
import { parsedLineEntry } from '../../../agent/sources/entry.js';
import { parseChunk } from '../../../agent/sources/file/parse.js';
import { entryJsonContext, parseLine, rfc5424EntryJson } from '../../../agent/sources/syslog-parse.js';

const NOW = Date.parse('2024-06-15T12:00:00.000Z');
const NOW_ISO = new Date(NOW).toISOString();
const SOURCE = 'file:/var/log/x.log';

/** Lines the JSON path writes itself. */
const WRITTEN = [
  '<134>1 2024-06-15T12:00:00.000Z web-0.example.com nginx 1000 ACCESS [req@32473 id="0" status="200"] GET /api/v1/items/0 HTTP/1.1 200 512 "-" "curl/8.5"',
  '<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - \uFEFF\'su root\' failed for lonvick on /dev/pts/8',
  '<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It\'s time to make the do-nuts.',
  '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"][examplePriority@32473 class="high"]',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="a\\"b\\]c\\\\d"] "quoted" and \\ backslash',
  '<14>1 2024-01-01T00:00:00Z h"x a\\b 1"2 m\\ [x@1 k=""][y@2] quotes and backslashes in the header tokens',
  '<0>1 - - - - - -',
  '<0>1 - - - - - - msg',
  '<13>1 2024-01-01T00:00:00Z h a 1 m -',
  '<14>1 2024-01-01T00:00:00Z hôte appé 1 m [x@1 k="é"] non-ASCII, no surrogate',
  '<14>1 2016-12-31T23:59:60.999+05:30 h a 1 m - leap second with offset',
  '<14>1 0050-02-28T00:00:00Z h a 1 m - two-digit year',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 a="1" b="2" c="3"][y@1 a="1"] the same name in two elements',
  `<14>1 2024-01-01T00:00:00Z h a 1 m - ${'x'.repeat(20_000)}`,
];

/** RFC 5424 lines left to the object path (which must still parse them as before). */
const LEFT = [
  '<14>1 2024-01-01T00:00:00Z h a 1 m - a\ttab',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - nul\u0000',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - emoji 😀',
  '<14>1 2024-01-01T00:00:00Z h a 1 m - lone \ud800 surrogate',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v" k="w"] duplicate name',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v"][x@1 k="w"] duplicate id',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 1="v" a="w"] an array-index name',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [7 a="w"] an array-index id',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [__proto__ __proto__="x" k="y"] __proto__',
  '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 a"b="v"] a quote in a name',
  '<14>1 2024-01-01T00:00:00Z a\\b=c a 1 m [i\\d k\\x="v"] a backslash in names',
  `<14>1 2024-01-01T00:00:00Z h a 1 m - ${'x'.repeat(22_000)}`,
];

/** Not RFC 5424 at all. */
const NOT_5424 = ['<13>Jun  5 22:14:15 mymachine sshd[1234]: Accepted publickey', '<13>1 - h a p m [broken x', '{"msg":"x"}', 'plain', ''];

function* generated(): Generator<string> {
  let seed = 11;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  for (let k = 0; k < 4000; k++) {
    const ts = pick(['-', `${pad(pick([0, 99, 1969, 2024, 9999]) + rnd(2), 4)}-${pad(1 + rnd(12), 2)}-${pad(1 + rnd(31), 2)}T${pad(rnd(24), 2)}:${pad(rnd(60), 2)}:${pad(rnd(61), 2)}${pick(['', '.5', '.123456'])}${pick(['Z', '+02:00', '-11:30'])}`]);
    const tok = () => pick(['-', 'host', 'a"q', 'b\\s', 'é', 'web-1.example.com']);
    const name = () => pick(['k', 'id@1', 'n\\x', '0', '__proto__', 'é', 'a"b']);
    const value = () => pick(['', 'v', 'a b', 'q\\"q', 'b\\]', 'bs\\\\', 'odd\\x', 'é', '😀', 'tab\t', '"']);
    const el = () => `[${name()}${pick(['', ` ${name()}="${value()}"`, ` ${name()}="${value()}" ${name()}="${value()}"`])}]`;
    const sd = pick(['-', el(), el() + el(), `[${name()} k=v]`]);
    const msg = pick(['', ' ', ' hello "world"', ' \uFEFFbom', ' back\\slash', ' tab\there', ' ünï', ` ${'y'.repeat(rnd(80))}`]);
    yield `<${rnd(192)}>${pick(['1', '12'])} ${ts} ${tok()} ${tok()} ${tok()} ${tok()} ${sd}${msg}`;
  }
}

const LABELS: (Record<string, string> | null)[] = [null, { env: 'prod', team: 'a' }, { '1': 'one', zone: 'é' }];

describe('rfc5424EntryJson (DECISIONS P18)', () => {
  it('writes the JSON text the object path stores, a valid LogBatchEntry, with its UTF-8 length', () => {
    let written = 0;
    for (const labels of LABELS) {
      const ctx = entryJsonContext(SOURCE, labels);
      expect(ctx).not.toBeNull();
      for (const line of [...WRITTEN, ...LEFT, ...NOT_5424, ...generated()]) {
        const j = rfc5424EntryJson(line, NOW, ctx!);
        if (j === null) continue;
        written++;
        const text = `{${j.rest}`;
        expect(text, line).toBe(JSON.stringify(parsedLineEntry(line, NOW, NOW_ISO, SOURCE, labels)));
        expect(j.bytes, line).toBe(Buffer.byteLength(j.rest, 'utf8'));
        const parsed: unknown = JSON.parse(text);
        expect(validateLogBatchEntry({ seq: 1, ...(parsed as object) }), line).toBe(true);
      }
    }
    expect(written).toBeGreaterThan(1000); // the generator reaches the JSON path often enough
  });

  it('writes the usual lines itself, and leaves the unusual ones (and non-5424 lines) to the object path', () => {
    const ctx = entryJsonContext(SOURCE, { env: 'prod' })!;
    for (const line of WRITTEN) expect(rfc5424EntryJson(line, NOW, ctx), line).toBeInstanceOf(SerializedEntry);
    for (const line of [...LEFT, ...NOT_5424]) expect(rfc5424EntryJson(line, NOW, ctx), line).toBeNull();
    // the object path still takes the lines left to it as RFC 5424
    for (const line of LEFT) expect(parseLine(line, NOW).format, line).toBe('rfc5424');
  });

  it('a source or labels JSON.stringify writes with a \\u escape: every entry takes the object path', () => {
    expect(entryJsonContext('file:/var/log/a\u0001b.log', null)).toBeNull();
    expect(entryJsonContext(SOURCE, { k: 'bell\u0007' })).toBeNull();
    expect(entryJsonContext(SOURCE, { k: 'v' })).toEqual({ sourceJson: ',"source":"file:/var/log/x.log"', labelsJson: ',"labels":{"k":"v"}', ascii: true });
    expect(entryJsonContext('file:/var/log/é.log', null)?.ascii).toBe(false);
  });

  it('keeps structured data named __proto__ (an assignment would drop it or set the prototype)', () => {
    const p = parseLine('<14>1 2024-01-01T00:00:00Z h a 1 m [__proto__ __proto__="x" k="y"][a b="c"] msg', NOW);
    expect(JSON.stringify(p.metadata)).toBe('{"hostname":"h","msgid":"m","structured_data":{"__proto__":{"__proto__":"x","k":"y"},"a":{"b":"c"}}}');
    expect(Object.getPrototypeOf((p.metadata as { structured_data: object }).structured_data)).toBe(Object.prototype);
  });
});

describe('the buffer stores a SerializedEntry as it stores the object', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cortex-p18-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('same texts, seqs, sizes and counters through parseChunk and append', () => {
    const lines = [...WRITTEN, ...LEFT, ...NOT_5424.filter((l) => l !== '')];
    const chunk = Buffer.from(lines.join('\n') + '\n');
    const o = { source: SOURCE, filter: null, labels: { env: 'prod' }, onFiltered() {}, onDegraded() {} } as const;
    const viaJson = parseChunk(chunk, chunk.length, false, 0, NOW, { ...o, labels: { ...o.labels } });
    // the lines as the file holds them (a lone surrogate is written as U+FFFD)
    const decoded = chunk.toString('utf8').split('\n').slice(0, -1);
    const ctx = entryJsonContext(SOURCE, o.labels)!;
    expect(viaJson.entries.filter((e) => e instanceof SerializedEntry).length).toBe(decoded.filter((l) => rfc5424EntryJson(l, NOW, ctx) !== null).length);
    expect(viaJson.entries.filter((e) => e instanceof SerializedEntry).length).toBeGreaterThanOrEqual(WRITTEN.length);
    const viaObjects: BufferEntry[] = decoded.map((l) => parsedLineEntry(l, NOW, NOW_ISO, SOURCE, o.labels));
    const a = DurableBuffer.open(join(dir, 'a.db'));
    const b = DurableBuffer.open(join(dir, 'b.db'));
    try {
      a.append(viaJson.entries);
      b.append(viaObjects);
      const ba = a.readBatch(1, 1000, 10_000_000)!;
      const bb = b.readBatch(1, 1000, 10_000_000)!;
      expect(ba.entries).toEqual(bb.entries);
      expect(ba.entries.length).toBe(lines.length);
      expect(ba.bytes).toBe(bb.bytes);
      expect(a.stats().bufferBytes).toBe(b.stats().bufferBytes);
      for (const t of ba.entries) expect(validateLogBatchEntry(JSON.parse(t))).toBe(true);
    } finally {
      a.close();
      b.close();
    }
    // read back from SQLite (not the in-memory tail): the same texts
    const a2 = DurableBuffer.open(join(dir, 'a.db'));
    const b2 = DurableBuffer.open(join(dir, 'b.db'));
    try {
      expect(a2.readBatch(1, 1000, 10_000_000)!.entries).toEqual(b2.readBatch(1, 1000, 10_000_000)!.entries);
    } finally {
      a2.close();
      b2.close();
    }
  });
});
