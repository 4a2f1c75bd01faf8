// RFC 5424 file lines written as JSON text from the file's bytes (DECISIONS P19): for every
// printable-ASCII line the string path (P18) writes, the bytes path writes the same text, byte
// for byte, reading nothing outside the line's bytes; every other line it leaves to the string
// path; and parseChunk stores the same entries as the object path either way.
import { validateLogBatchEntry } from '@cortex/agent-protocol';
import { describe, expect, it } from 'vitest';
import { SerializedEntry } from '../../../agent/buffer/entry.js';
import { parsedLineEntry } from '../../../agent/sources/entry.js';
import { parseChunk, type FileLineOptions } from '../../../agent/sources/file/parse.js';
import { entryBytesContext, rfc5424EntryBytes } from '../../../agent/sources/file/rfc5424-bytes.js';
import { entryJsonContext, rfc5424EntryJson } from '../../../agent/sources/syslog-parse.js';
import { LABELS, LEFT, NOT_5424, WRITTEN, generated } from './rfc5424-corpus.js';

const NOW = Date.parse('2024-06-15T12:00:00.000Z');
const NOW_ISO = new Date(NOW).toISOString();
const SOURCE = 'file:/var/log/x.log';
const PRINTABLE = /^[\x20-\x7e]*$/;

/** Lines around a line in the chunk: what the bytes path must not read (an SD, a quote, a space, no newline at the end). */
const BEFORE = '<14>1 2024-01-01T00:00:00Z h a 1 m [x@1 k="v"] before\n';
const AFTER = '[y@1 k="\\"] "tail';

function corpus(): string[] {
  return [...WRITTEN, ...LEFT, ...NOT_5424, ...generated(false), ...generated(true)];
}

describe('rfc5424EntryBytes (DECISIONS P19)', () => {
  it('writes the string path text for every printable-ASCII line the string path writes, and nothing for the others', () => {
    let written = 0;
    for (const labels of LABELS) {
      const ctx = entryJsonContext(SOURCE, labels)!;
      const bytes = entryBytesContext(ctx);
      if (!ctx.ascii) {
        expect(bytes).toBeNull(); // non-ASCII labels: every entry takes the string path
        continue;
      }
      expect(bytes).not.toBeNull();
      for (const line of corpus()) {
        // the line inside a chunk, with bytes before and after it that would change the result if read
        const chunk = Buffer.from(BEFORE + line + AFTER, 'utf8');
        const a = Buffer.byteLength(BEFORE), b = a + Buffer.byteLength(line);
        const j = rfc5424EntryBytes(chunk, a, b, NOW_ISO, bytes!);
        const viaString = rfc5424EntryJson(line, NOW, ctx);
        if (!PRINTABLE.test(line)) {
          expect(j, line).toBeNull();
          continue;
        }
        expect(j === null, line).toBe(viaString === null);
        if (j === null) continue;
        written++;
        expect(j.rest, line).toBe(viaString!.rest);
        expect(j.bytes, line).toBe(Buffer.byteLength(j.rest, 'utf8'));
        const text = `{${j.rest}`;
        expect(text, line).toBe(JSON.stringify(parsedLineEntry(line, NOW, NOW_ISO, SOURCE, labels)));
        expect(validateLogBatchEntry({ seq: 1, ...(JSON.parse(text) as object) }), line).toBe(true);
      }
    }
    expect(written).toBeGreaterThan(1500); // the ASCII generator reaches the bytes path often enough
  });

  it('a line past metadata_max_bytes / 3, or cut short at any byte, is left to the string path or read as what it is', () => {
    const ctx = entryJsonContext(SOURCE, null)!;
    const bytes = entryBytesContext(ctx)!;
    const long = Buffer.from(`<14>1 2024-01-01T00:00:00Z h a 1 m - ${'x'.repeat(22_000)}`);
    expect(rfc5424EntryBytes(long, 0, long.length, NOW_ISO, bytes)).toBeNull();
    const line = '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="App\\"x"][p@1 class="high"] msg';
    const buf = Buffer.from(line + line); // a cut line continues with the next line's bytes
    for (let cut = 0; cut <= line.length; cut++) {
      const j = rfc5424EntryBytes(buf, 0, cut, NOW_ISO, bytes);
      const viaString = rfc5424EntryJson(line.slice(0, cut), NOW, ctx);
      expect(j?.rest ?? null, `cut at ${cut}`).toBe(viaString?.rest ?? null);
    }
  });

  it('agrees with the string path on 20,000 printable-ASCII mutations of the usual lines (bytes replaced, inserted, deleted)', () => {
    const ctx = entryJsonContext(SOURCE, { env: 'prod' })!;
    const bytes = entryBytesContext(ctx)!;
    const seeds = WRITTEN.filter((l) => PRINTABLE.test(l) && l.length < 400);
    const alphabet = ' []"\\=-<>.:TZ+0123456789az@_';
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    let agreedWritten = 0;
    for (let k = 0; k < 20_000; k++) {
      let line = seeds[rnd(seeds.length)]!;
      for (let m = 1 + rnd(3); m > 0; m--) {
        const at = rnd(line.length + 1), c = alphabet[rnd(alphabet.length)]!;
        const op = rnd(3);
        line = op === 0 ? line.slice(0, at) + c + line.slice(at + 1) : op === 1 ? line.slice(0, at) + c + line.slice(at) : line.slice(0, at) + line.slice(at + 1);
      }
      const chunk = Buffer.from(BEFORE + line + AFTER);
      const a = BEFORE.length;
      const j = rfc5424EntryBytes(chunk, a, a + line.length, NOW_ISO, bytes);
      const viaString = rfc5424EntryJson(line, NOW, ctx);
      expect(j?.rest ?? null, line).toBe(viaString?.rest ?? null);
      if (j !== null) agreedWritten++;
    }
    expect(agreedWritten).toBeGreaterThan(5000);
  });

  it('parseChunk takes ASCII lines by bytes and stores what the object path stores; a filter or a non-ASCII line takes the string path', () => {
    const lines = [...WRITTEN, ...LEFT, ...NOT_5424.filter((l) => l !== ''), ...generated(true)];
    const chunk = Buffer.from(lines.join('\n') + '\n');
    const o: FileLineOptions = { source: SOURCE, filter: null, labels: { env: 'prod' }, onFiltered() {}, onDegraded() {} };
    const r = parseChunk(chunk, chunk.length, false, 0, NOW, o);
    const decoded = chunk.toString('utf8').split('\n').slice(0, -1).filter((l) => l !== '');
    expect(r.entries.length).toBe(decoded.length);
    const asText = (e: (typeof r.entries)[number]) => (e instanceof SerializedEntry ? `{${e.rest}` : JSON.stringify(e));
    decoded.forEach((l, k) => expect(asText(r.entries[k]!), l).toBe(JSON.stringify(parsedLineEntry(l, NOW, NOW_ISO, SOURCE, o.labels))));
    // a filter sees each line as text: the same entries
    const filtered = parseChunk(chunk, chunk.length, false, 0, NOW, { ...o, filter: /./ });
    expect(filtered.entries.map(asText)).toEqual(r.entries.map(asText));
  });
});
