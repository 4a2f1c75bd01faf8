// SIGKILL safety of buffer.db: a child process appends (with source positions) and
// acks in a tight loop and is killed at a random moment, several rounds in a row on
// the same file. After every kill the file must be consistent: rows exactly the seqs
// (acked_seq, next_seq), the stored position matching the last committed entry, no
// seq assigned twice, and every surviving row written by the round that owns its seq.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { storedEntries, storedTotals } from '../support/buffer-rows.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { bundleChild } from './fixtures/bundle.js';
import { pause, randomInt, spawnNodeChild } from './fixtures/child.js';

let dir: string;
let script: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cortex-buffer-crash-'));
  script = await bundleChild(join(import.meta.dirname, 'fixtures', 'buffer-writer-child.ts'), dir, 'buffer-writer-child');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Row {
  seq: number;
  json: string;
}

describe('buffer.db under SIGKILL', () => {
  it('never reuses a seq, never leaves a gap, and keeps positions atomic with entries', async () => {
    const path = join(dir, 'buffer.db');
    const source = 'file:/var/log/test.log';
    const roundStart: number[] = []; // first seq each round may use (next_seq when it started)
    let nextSeq = 1;
    const rounds = 8;
    for (let round = 0; round < rounds; round++) {
      roundStart.push(nextSeq);
      const child = spawnNodeChild(script, [path, String(round)]);
      const ready = await child.ready;
      // the first append of this round continues exactly where the last commit ended
      expect(Number(ready.split(' ')[1])).toBe(nextSeq);
      await pause(randomInt(60));
      child.child.kill('SIGKILL');
      expect((await child.exited).signal).toBe('SIGKILL');

      // ---- check the file as the killed child left it -------------------------
      const db = new Database(path, { readonly: true });
      let meta: { next_seq: number; acked_seq: number; queue_depth: number; buffer_bytes: number };
      let rows: Row[];
      let position: { round: number; lastSeq: number };
      try {
        meta = db.prepare<[], typeof meta>('SELECT next_seq, acked_seq, queue_depth, buffer_bytes FROM meta').get()!;
        rows = storedEntries(db);
        const sum = storedTotals(db);
        expect(meta.buffer_bytes).toBe(sum.b);
        position = JSON.parse(
          db.prepare<[string], { position: string }>('SELECT position FROM source_positions WHERE source = ?').get(source)!.position,
        ) as typeof position;
      } finally {
        db.close();
      }
      expect(meta.next_seq).toBeGreaterThan(nextSeq); // the round committed something
      expect(meta.next_seq).toBeGreaterThan(meta.acked_seq);
      // rows are exactly (acked_seq, next_seq): gap-free, nothing beyond next_seq
      const expected = Array.from({ length: meta.next_seq - 1 - meta.acked_seq }, (_, i) => meta.acked_seq + 1 + i);
      expect(rows.map((r) => r.seq)).toEqual(expected);
      expect(meta.queue_depth).toBe(rows.length);
      // the position was committed with the last batch
      expect(position).toEqual({ round, lastSeq: meta.next_seq - 1 });
      // each row belongs to the round that owned its seq range: no seq was reused
      for (const row of rows) {
        const entry = JSON.parse(row.json) as { seq: number; message: string };
        expect(entry.seq).toBe(row.seq);
        const owner = roundStart.findLastIndex((start) => start <= row.seq);
        expect(entry.message.startsWith(`r${owner} `)).toBe(true);
      }
      nextSeq = meta.next_seq;
    }

    // the module agrees after all of it, and continues from there
    const b = DurableBuffer.open(path);
    try {
      expect(b.nextSeq).toBe(nextSeq);
      expect(b.append([{ ts: new Date().toISOString(), severity: 'info', message: 'after', source }]).firstSeq).toBe(nextSeq);
    } finally {
      b.close();
    }
  }, 60_000);
});
