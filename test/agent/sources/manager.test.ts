// agent/sources/manager.ts: BasicSourceManager drives every Source through one interface.
import { describe, expect, it } from 'vitest';
import { BasicSourceManager, type Source, type SourceFactory, type SourceReport, type SourceSink } from '../../../agent/sources/index.js';

const sink: SourceSink = { append: () => ({ firstSeq: 1, lastSeq: 0, count: 0 }) as never, position: () => null };

function fakeFactory(kind: Source['kind'], calls: string[], report: Partial<SourceReport> = {}): SourceFactory {
  return {
    kind,
    start(cfg) {
      const name = `${kind}:${cfg.path ?? cfg.filter ?? ''}`;
      calls.push(`start ${name}`);
      return {
        kind,
        key: `${kind}:x`,
        start: () => undefined,
        pause: () => calls.push(`pause ${name}`),
        resume: () => calls.push(`resume ${name}`),
        stop: () => void calls.push(`stop ${name}`),
        status: () => ({ position: { at: 1 }, last_error: null, ...report }),
      };
    },
  };
}

describe('BasicSourceManager', () => {
  it('kinds: custom always, then each factory kind once', () => {
    const m = new BasicSourceManager(sink, [fakeFactory('file', []), fakeFactory('custom', [])]);
    expect(m.kinds).toEqual(['custom', 'file']);
  });

  it('a kind without a factory is listed with a clear error; custom without one is agent.ingest()', () => {
    const m = new BasicSourceManager(sink, []);
    m.apply([{ kind: 'docker' }, { kind: 'custom', path: 'app' }]);
    const [docker, custom] = m.status();
    expect(docker!.last_error).toBe('source kind "docker" is not implemented in this agent build (supported: custom)');
    expect(custom!.last_error).toBeNull();
  });

  it('a factory that throws: the source is listed with "cannot start: …"', () => {
    const m = new BasicSourceManager(sink, [{ kind: 'file', start: () => { throw new Error('bad filter'); } }]);
    m.apply([{ kind: 'file', path: '/x' }]);
    expect(m.status()[0]!.last_error).toBe('cannot start: bad filter');
  });

  it('pause/resume reach every source (and a source started while paused starts paused); status passes counters through', async () => {
    const calls: string[] = [];
    const m = new BasicSourceManager(sink, [fakeFactory('file', calls, { state: 'reading', lines_read: 7 })]);
    m.apply([{ kind: 'file', path: '/a' }]);
    m.pause('disk full');
    m.pause('again'); // already paused: nothing more
    m.apply([{ kind: 'file', path: '/a' }, { kind: 'file', path: '/b' }]);
    expect(calls).toEqual(['start file:/a', 'pause file:/a', 'start file:/b', 'pause file:/b']);
    expect(m.paused).toBe(true);
    expect(m.status()[0]).toMatchObject({ kind: 'file', path: '/a', name: null, position: { at: 1 }, paused: true, state: 'reading', lines_read: 7 });
    m.resume();
    expect(calls.slice(4)).toEqual(['resume file:/a', 'resume file:/b']);
    await m.close();
    expect(calls.slice(6).sort()).toEqual(['stop file:/a', 'stop file:/b']);
    m.apply([{ kind: 'file', path: '/c' }]); // closed: nothing starts
    expect(calls).not.toContain('start file:/c');
  });

  it("status passes on the counters `cortex-agent status` prints: lines_degraded, refused_connections, entries_too_large", () => {
    const m = new BasicSourceManager(sink, [
      fakeFactory('file', [], { lines_degraded: 2 } as Partial<SourceReport>),
      fakeFactory('custom', [], { refused_connections: 3 } as Partial<SourceReport>),
      fakeFactory('journald', [], { entries_too_large: 4 } as Partial<SourceReport>),
    ]);
    m.apply([{ kind: 'file', path: '/a' }, { kind: 'custom', path: 'app' }, { kind: 'journald' }]);
    const rows = m.status() as unknown as Record<string, unknown>[];
    expect(rows.map((r) => [r['lines_degraded'], r['refused_connections'], r['entries_too_large']])).toEqual([
      [2, undefined, undefined],
      [undefined, 3, undefined],
      [undefined, undefined, 4],
    ]);
  });

  it('a source whose status throws is shown with the failure', () => {
    const m = new BasicSourceManager(sink, [{
      kind: 'journald',
      start: () => ({ kind: 'journald', key: 'journald', start() {}, pause() {}, resume() {}, stop() {}, status: () => { throw new Error('boom'); } }),
    }]);
    m.apply([{ kind: 'journald' }]);
    expect(m.status()[0]).toMatchObject({ position: null, last_error: 'status failed: boom' });
  });
});
