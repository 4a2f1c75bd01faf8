// Issue 18, "one bad input must not stop a source" (agent side): a JSON log line nested
// 6,000 levels deep used to make buffer.append overflow the stack in JSON.stringify; the
// file source then retried the same offset forever. Lone surrogates and NUL from any
// source are made storable before they are buffered (DECISIONS H2, H3).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS } from '@cortex/agent-protocol';
import type { DurableBuffer } from '../../agent/buffer/buffer.js';
import { createSource, type LogSourceRunner } from '../../agent/sources/index.js';
import { allEntries, openBuffer, tempDir, waitFor } from '../agent/sources/helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-poison-'));
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  buffer.close();
  cleanup();
});

const deepLine = (levels: number) => `{"msg":"deep","x":${'{"a":'.repeat(levels - 2)}{}${'}'.repeat(levels - 2)}}`;

describe('file source with a poison line', () => {
  it('a 6,000-level JSON line becomes a plain message with a marker; the lines after it are read; status counts it', async () => {
    const p = join(dir, 'app.log');
    const deep = deepLine(6000);
    expect(deep.length).toBeGreaterThan(35_000);
    writeFileSync(p, `before\n${deep}\nafter\n{"msg":"ok","k":{"v":1}}\n`);
    const r = createSource({ kind: 'file', path: p }, { buffer, pollMs: 20 });
    runners.push(r);
    r.start();
    await waitFor(() => allEntries(buffer).length === 4, 10_000, 'four entries');
    const es = allEntries(buffer);
    expect(es.map((e) => e.message)).toEqual(['before', deep, 'after', 'ok']);
    expect(es[1]!.metadata).toEqual({ cortex_metadata_dropped: 'depth' });
    expect(es[3]!.metadata).toEqual({ k: { v: 1 } });
    const st = r.status();
    expect(st.lines_degraded).toBe(1);
    expect(st.last_error).toContain('metadata_max_depth');
    expect(st.state).not.toBe('error');
  });

  it('metadata past metadata_max_bytes is dropped with a size marker', async () => {
    const p = join(dir, 'big.log');
    // 2 bytes per code point: past metadata_max_bytes, yet short of the 65,536-code-point line split.
    writeFileSync(p, `{"msg":"big","blob":"${'é'.repeat(LIMITS.metadata_max_bytes / 2 + 1)}"}\n`);
    const r = createSource({ kind: 'file', path: p }, { buffer, pollMs: 20 });
    runners.push(r);
    r.start();
    await waitFor(() => allEntries(buffer).length === 1, 10_000, 'one entry');
    expect(allEntries(buffer)[0]!.metadata).toEqual({ cortex_metadata_dropped: 'size' });
  });
});

describe('buffer.append guards every source', () => {
  it('an entry whose metadata is too deep is stored with a marker instead of failing the append', () => {
    let meta: Record<string, unknown> = {};
    const root = meta;
    for (let i = 0; i < 6000; i++) {
      const next = {};
      meta['a'] = next;
      meta = next;
    }
    const r = buffer.append([{ ts: new Date().toISOString(), severity: 'info', message: 'm', source: 'custom:x', metadata: root }]);
    expect(r.count).toBe(1);
    expect(r.degraded).toEqual({ metadata: 1, chars: 0 });
    expect(allEntries(buffer)[0]!.metadata).toEqual({ cortex_metadata_dropped: 'depth' });
  });

  it('lone surrogates and NUL in text become U+FFFD and are counted', () => {
    const r = buffer.append([{ ts: new Date().toISOString(), severity: 'info', message: 'a\ud800b\u0000', app_name: '\udc00', source: 'custom:x' }]);
    expect(r.degraded).toEqual({ metadata: 0, chars: 3 });
    const e = allEntries(buffer)[0]!;
    expect(e.message).toBe('a\ufffdb\ufffd');
    expect(e.app_name).toBe('\ufffd');
  });
});
