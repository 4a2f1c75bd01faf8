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
import { LABELS, LEFT, NOT_5424, WRITTEN, generated } from './rfc5424-corpus.js';

const NOW = Date.parse('2024-06-15T12:00:00.000Z');
const NOW_ISO = new Date(NOW).toISOString();
const SOURCE = 'file:/var/log/x.log';

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
