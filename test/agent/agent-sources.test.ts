// What `status` lists of the sources: the manager's rows, each with its stored position, and the
// stored positions no source claims. The CLI runs the same pass again over a running agent's
// status.json, so a second pass must change nothing.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceStatusWithPositions } from '../../agent/agent-sources.js';
import type { SourcePositionRecord } from '../../agent/buffer/buffer.js';
import type { SourceStatus } from '../../agent/sources.js';

describe('sourceStatusWithPositions', () => {
  it('gives a source that did not start its stored position, lists each unclaimed position once, and a second pass (the CLI over status.json) changes nothing', () => {
    const rows: SourceStatus[] = [
      { kind: 'custom', path: 'gen', name: 'gen', position: null, last_error: 'cannot start: not allowed', paused: false },
      { kind: 'file', path: '/var/log/app.log', name: null, position: null, last_error: null, paused: false, key: 'file:/var/log/app.log' },
    ];
    const updatedAt = '2026-12-06T00:00:00.000Z';
    const positions: SourcePositionRecord[] = [
      { source: 'custom:gen', position: { run: 1, lines: 3 }, updatedAt },
      { source: 'file:/var/log/app.log', position: { offset: 10 }, updatedAt },
      { source: 'docker:web', position: { since: '2026-12-06T00:00:00Z' }, updatedAt },
      { source: 'journald:_SYSTEMD_UNIT=ssh.service', position: { cursor: 'c' }, updatedAt },
      { source: 'custom:old', position: { run: 2, lines: 1 }, updatedAt },
      { source: 'file:/var/log/old.log', position: { offset: 5 }, updatedAt },
    ];
    const first = sourceStatusWithPositions({ status: () => rows.map((r) => ({ ...r })), paused: false }, { sourcePositions: () => positions });
    expect(first[0]).toMatchObject({ kind: 'custom', path: 'gen', position: { run: 1, lines: 3 } });
    expect(first[1]).toMatchObject({ key: 'file:/var/log/app.log', position: { offset: 10 } });
    expect(first.slice(2).map((s) => [s.kind, s.path ?? s.name])).toEqual([
      ['docker', 'web'],
      ['journald', '_SYSTEMD_UNIT=ssh.service'],
      ['custom', 'old'],
      ['file', '/var/log/old.log'],
    ]);
    const second = sourceStatusWithPositions({ status: () => first.map((r) => ({ ...r })), paused: false }, { sourcePositions: () => positions });
    expect(second).toEqual(first);
  });

  // H42: 4,000 files of a glob deleted: `status` printed 4,018 lines for an hour, one
  // "not being read (stored position)" per file the glob keeps the position of (they may come back)
  it("a glob's positions of files gone from its folder are not listed as sources of their own; another folder's or name's are", () => {
    const dir = mkdtempSync(join(tmpdir(), 'cortex-claims-'));
    try {
      mkdirSync(join(dir, 'real'));
      symlinkSync(join(dir, 'real'), join(dir, 'link'));
      const glob: SourceStatus = { kind: 'file', path: join(dir, 'link', '*.log'), name: null, position: {}, last_error: null, paused: false, key: `file:${join(dir, 'link', '*.log')}`, files: [] };
      const updatedAt = '2026-12-06T00:00:00.000Z';
      const positions: SourcePositionRecord[] = [
        ...Array.from({ length: 50 }, (_, i) => ({ source: `file:${join(dir, 'real', `f${i}.log`)}`, position: { offset: i }, updatedAt })), // keys are real paths
        { source: `file:${join(dir, 'link', 'g.log')}`, position: { offset: 1 }, updatedAt },
        { source: `file:${join(dir, 'real', 'other.txt')}`, position: { offset: 2 }, updatedAt },
        { source: `file:${join(dir, 'real', 'sub', 'h.log')}`, position: { offset: 3 }, updatedAt },
      ];
      const shown = sourceStatusWithPositions({ status: () => [{ ...glob }], paused: false }, { sourcePositions: () => positions });
      expect(shown.map((s) => s.path)).toEqual([glob.path, join(dir, 'real', 'other.txt'), join(dir, 'real', 'sub', 'h.log')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
