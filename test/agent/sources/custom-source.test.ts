import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { BufferStorageError } from '../../../agent/buffer/errors.js';
import { commandAllowed, socketAllowed } from '../../../agent/sources/custom.source.js';
import {
  createSource,
  createSourceManager,
  MAX_SOCKET_CLIENTS,
  sinkFromBuffer,
  type CustomCommandSource,
  type CustomSocketSource,
  type LogSourceRunner,
  type SourceLogger,
  type SourceSink,
} from '../../../agent/sources/index.js';
import { alive, allEntries, messages, openBuffer, sleep, tempDir, waitFor } from './helpers.js';
import { sourceLines } from '../../../agent/cli-main.js';

const script = fileURLToPath(new URL('./fixtures/custom-cmd.mjs', import.meta.url));

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];
const logged: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
const logger: SourceLogger = {
  info: (obj, msg) => logged.push({ level: 'info', obj: obj as Record<string, unknown>, msg: msg ?? '' }),
  warn: (obj, msg) => logged.push({ level: 'warn', obj: obj as Record<string, unknown>, msg: msg ?? '' }),
  error: (obj, msg) => logged.push({ level: 'error', obj: obj as Record<string, unknown>, msg: msg ?? '' }),
};

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-cu-'));
  buffer = openBuffer(dir);
  logged.length = 0;
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  buffer.close();
  cleanup();
});

function start<T extends LogSourceRunner>(cfg: Record<string, unknown>, deps: Record<string, unknown> = {}): T {
  const r = createSource({ kind: 'custom', ...cfg }, { buffer, logger, retryMinMs: 10, retryMaxMs: 40, restartMinMs: 30, restartMaxMs: 60, ...deps }) as unknown as T;
  runners.push(r);
  r.start();
  return r;
}


function connectAndWrite(path: string, pieces: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(path, async () => {
      for (const p of pieces) {
        s.write(p);
        await sleep(15);
      }
      s.end();
    });
    s.on('error', reject);
    s.on('close', () => resolve());
  });
}

describe('custom source: command', () => {
  it('stdout lines are entries (parsed), stderr is logged, the command is restarted with backoff when it exits', async () => {
    const state = join(dir, 'state');
    const r = start<CustomCommandSource>({ path: 'gen', command: [process.execPath, script, state, 'restart'], labels: { team: 'a' } });
    await waitFor(() => messages(buffer).includes('run2 partial'), 10_000, 'two runs');
    const ms = messages(buffer);
    expect(ms.slice(0, 5)).toEqual(['run1 line0', 'run1 line1', 'run1 line2', 'run1 rfc5424', 'run1 partial']);
    expect(ms.slice(5, 10)).toEqual(['run2 line0', 'run2 line1', 'run2 line2', 'run2 rfc5424', 'run2 partial']);
    const es = allEntries(buffer);
    expect(es[0]).toMatchObject({ source: 'custom:gen', severity: 'info', metadata: { labels: { team: 'a' } } });
    expect(es[3]).toMatchObject({ severity: 'err', facility: 'user', app_name: 'app', process_id: '7', ts: '2024-06-15T12:00:00.000Z' });
    expect(logged.some((l) => l.level === 'warn' && l.obj.stderr === 'run1 complaint')).toBe(true);
    expect(logged.some((l) => l.level === 'error' && /exited with code 3: run1 complaint/.test(l.msg))).toBe(true);
    const st = r.status();
    expect(st.runs).toBeGreaterThanOrEqual(2);
    expect(st).toMatchObject({ kind: 'custom', key: 'custom:gen', resumable: false });
    expect(st.position).toMatchObject({ lines: expect.any(Number) as number, run: expect.any(Number) as number });
    expect(buffer.getSourcePosition('custom:gen')).toEqual(st.position);
  });

  it('a command that keeps failing the same way is logged when it starts failing, then every 10 minutes with a count; its stderr at most 10 lines a minute (DECISIONS D26)', async () => {
    let now = Date.parse('2026-12-05T12:00:00Z');
    const runs = (): number => Number(r.status().runs);
    const r = start<CustomCommandSource>({ path: 'denied', command: ['/bin/sh', '-c', 'echo "dmesg: read kernel buffer failed: Operation not permitted" >&2; exit 1'] }, { clock: () => now });
    await waitFor(() => runs() >= 25, 10_000, '25 runs');
    const errors = () => logged.filter((l) => l.level === 'error');
    const stderr = () => logged.filter((l) => l.msg === 'custom: command stderr');
    expect(errors()).toHaveLength(1);
    expect(errors()[0]!.msg).toMatch(/^custom: command exited with code 1: dmesg: read kernel buffer failed: Operation not permitted; restarting in \d+ ms$/);
    expect(logged.filter((l) => l.msg.startsWith('custom: started'))).toHaveLength(1);
    expect(stderr()).toHaveLength(10);
    expect(r.status().last_error).toMatch(/Operation not permitted; restarting in/); // status always says it
    now += 10 * 60_000;
    const before = runs();
    await waitFor(() => errors().length === 2 && runs() > before + 1, 10_000, 'the 10-minute repeat');
    expect(errors()[1]!.msg).toMatch(/ \(the same \d+ more times since it was last logged\)$/);
    expect(errors()[1]!.obj['repeated']).toBeGreaterThanOrEqual(23);
    // 24 runs had ended (and written their line) when the clock moved; the 25th's line may come after
    expect(logged.find((l) => /more stderr lines of the command not logged \(more than 10 a minute\)$/.test(l.msg))?.obj['lines']).toBeGreaterThanOrEqual(14);
    expect(errors()).toHaveLength(2);
  });

  it('a command that ends at once with code 0 (dmesg without --follow) is said once, not at each restart', async () => {
    const r = start<CustomCommandSource>({ path: 'once', command: ['/bin/sh', '-c', 'echo one line'] });
    await waitFor(() => Number(r.status().runs) >= 10 && messages(buffer).length >= 10, 10_000, '10 runs, their lines read');
    expect(logged.filter((l) => l.msg === 'custom: command exited with code 0; restarting')).toHaveLength(1);
    expect(logged.filter((l) => l.msg.startsWith('custom: started'))).toHaveLength(1);
  });

  it('a missing command: clear error in status, retried; other sources unaffected', async () => {
    const f = join(dir, 'f.log');
    writeFileSync(f, 'file line\n');
    const m = createSourceManager({ buffer, pollMs: 20, restartMinMs: 20, restartMaxMs: 40 });
    m.apply([{ kind: 'custom', path: 'nope', command: [join(dir, 'no-such-program'), '--x'] }, { kind: 'file', path: f }]);
    await waitFor(() => messages(buffer).includes('file line'), 5000);
    await waitFor(() => /command not found/.test(m.status()[0]!.last_error ?? ''), 5000);
    await m.close();
  });

  it('stop() kills the command', async () => {
    const r = start<CustomCommandSource>({ path: 'fv', command: [process.execPath, script, join(dir, 's'), 'forever'] });
    await waitFor(() => messages(buffer).length === 1, 5000);
    const pid = Number(messages(buffer)[0]!.split(' ')[1]);
    expect(alive(pid)).toBe(true);
    await r.stop();
    await waitFor(() => !alive(pid), 5000, 'child gone');
  });

  it('back-pressure: a failing buffer pauses stdout; every line arrives once it recovers, in order; filter', async () => {
    const real = sinkFromBuffer(buffer);
    let failing = true;
    let failures = 0;
    const sink: SourceSink = {
      position: real.position,
      append: (e, pos) => {
        if (failing) {
          failures++;
          throw new BufferStorageError('disk_full', 'append', 'buffer.db', 'SQLITE_FULL');
        }
        return real.append(e, pos);
      },
    };
    const r = start<CustomCommandSource>({ path: 'many', command: [process.execPath, script, join(dir, 's'), 'many', '20000'], filter: '^m\\d*[02468]$' }, { sink, buffer: undefined });
    await waitFor(() => failures >= 3, 5000);
    expect(r.status()).toMatchObject({ state: 'retrying' });
    expect(r.status().last_error).toMatch(/disk/);
    failing = false;
    await waitFor(() => messages(buffer).length === 10_000, 10_000);
    expect(messages(buffer)).toEqual(Array.from({ length: 10_000 }, (_, i) => `m${i * 2}`));
    expect(r.status()).toMatchObject({ last_error: null, lines_filtered: 10_000, runs: 1 });
  });

  it('pause()/resume(): nothing is committed while paused', async () => {
    const r = start<CustomCommandSource>({ path: 'pz', command: [process.execPath, script, join(dir, 's'), 'restart'] });
    r.pause();
    await sleep(300);
    expect(messages(buffer)).toEqual([]);
    r.resume();
    await waitFor(() => messages(buffer).length >= 5, 5000);
  });
});

describe('custom source: socket', () => {
  it('lines written by clients are entries; pieces, several clients, a partial last line at close', async () => {
    const path = join(dir, 'app.sock');
    const r = start<CustomSocketSource>({ path: 'app', socket: path, labels: { via: 'sock' } });
    await waitFor(() => r.status().listening === true, 5000);
    await connectAndWrite(path, ['hel', 'lo 1\nsecond', ' line\r\n<14>Jun 15 12:00:00 web1 nginx[12]: third\n', 'no newline at close']);
    await Promise.all([connectAndWrite(path, ['a1\n', 'a2\n']), connectAndWrite(path, ['b1\n'])]);
    await waitFor(() => messages(buffer).length === 7, 5000);
    const ms = messages(buffer);
    expect(ms.slice(0, 4)).toEqual(['hello 1', 'second line', 'third', 'no newline at close']);
    expect(ms.slice(4).sort()).toEqual(['a1', 'a2', 'b1']);
    expect(allEntries(buffer)[2]).toMatchObject({ source: 'custom:app', app_name: 'nginx', process_id: '12', metadata: { hostname: 'web1', labels: { via: 'sock' } } });
    expect(r.status()).toMatchObject({ connections: 3, last_error: null, position: { connections: 3, lines: 7 } });
  });

  it('at most 256 clients at once: more are closed as they connect, said once; clients that stay are read; a place that frees is taken (DECISIONS D27)', async () => {
    const path = join(dir, 'many.sock');
    const r = start<CustomSocketSource>({ path: 'many', socket: path });
    await waitFor(() => r.status().listening === true, 5000);
    const open = (): Promise<{ s: net.Socket; closed: Promise<void> }> =>
      new Promise((resolve, reject) => {
        const s = net.createConnection(path, () => resolve({ s, closed: new Promise<void>((c) => s.once('close', () => c())) }));
        s.once('error', reject);
      });
    const clients: { s: net.Socket; closed: Promise<void> }[] = [];
    for (let i = 0; i < MAX_SOCKET_CLIENTS + 20; i++) clients.push(await open());
    await waitFor(() => r.status().refused_connections === 20, 5000);
    expect(r.status()).toMatchObject({ clients: MAX_SOCKET_CLIENTS, connections: MAX_SOCKET_CLIENTS });
    expect(sourceLines(r.status())[0]).toMatch(/^ {2}custom many: reading, 0 lines read, 20 clients refused \(at most 256 at once\) position=/);
    // The ones over the cap were closed by the agent.
    await Promise.all(clients.slice(MAX_SOCKET_CLIENTS).map((c) => c.closed));
    clients[0]!.s.write('from the first\n');
    await waitFor(() => messages(buffer).includes('from the first'), 5000);
    // One place frees: the next client is read.
    clients[1]!.s.end();
    await clients[1]!.closed;
    await waitFor(() => r.status().clients === MAX_SOCKET_CLIENTS - 1, 5000);
    await connectAndWrite(path, ['from a newcomer\n']);
    await waitFor(() => messages(buffer).includes('from a newcomer'), 5000);
    const told = logged.filter((l) => l.msg.startsWith(`custom: ${MAX_SOCKET_CLIENTS} clients are connected`));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 'warn', obj: { socket: path, max_clients: MAX_SOCKET_CLIENTS, refused_connections: 1 } });
    for (const c of clients) c.s.destroy();
  });

  it('a stale socket file is replaced; a regular file at the path is an error in status', async () => {
    const stale = join(dir, 'stale.sock');
    // a process that listened there and died without removing its socket file (a crashed agent)
    spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(stale)}, () => process.exit(0))`]);
    expect(lstatSync(stale).isSocket()).toBe(true);
    await expect(connectAndWrite(stale, ['x\n'])).rejects.toThrow(/ECONNREFUSED/);
    const r = start<CustomSocketSource>({ path: 's', socket: stale });
    await waitFor(() => r.status().listening === true, 5000);
    await connectAndWrite(stale, ['ok\n']);
    await waitFor(() => messages(buffer).length === 1, 5000);

    const file = join(dir, 'plain-file');
    writeFileSync(file, 'not a socket');
    const bad = start<CustomSocketSource>({ path: 'b', socket: file });
    await waitFor(() => /not a socket/.test(bad.status().last_error ?? ''), 5000);
    expect(bad.status().state).toBe('error');
  });
});

describe('custom source: config', () => {
  it('without command or socket it is the in-process source (agent.ingest): no error', () => {
    const r = start({ path: 'lib' });
    expect(r.status()).toMatchObject({ kind: 'custom', key: 'custom:lib', state: 'idle', last_error: null });
  });

  it('refuses ambiguous or malformed configs', () => {
    expect(() => createSource({ kind: 'custom', path: 'x', command: ['/bin/true'], socket: '/tmp/x.sock' }, { buffer })).toThrow(/either/);
    expect(() => createSource({ kind: 'custom', path: 'x', command: '/bin/sh -c "rm -rf /"' }, { buffer })).toThrow(/array/);
    expect(() => createSource({ kind: 'custom', path: 'x', command: [] }, { buffer })).toThrow(/array/);
    expect(() => createSource({ kind: 'custom', path: 'x', socket: 'rel.sock' }, { buffer })).toThrow(/absolute/);
    expect(() => createSource({ kind: 'custom', command: ['/bin/true'] }, { buffer })).toThrow(/needs `path`/);
    expect(() => createSource({ kind: 'custom', path: 'has space', command: ['/bin/true'] }, { buffer })).toThrow(/name/);
    expect(() => createSource({ kind: 'custom', path: 'x', socket: '/tmp/x.sock', socket_mode: 'rw' }, { buffer })).toThrow(/socket_mode/);
  });

  it("runs and listens only where the host's lists allow, when it is given them (H37)", () => {
    const allowed = ['/usr/bin/dmesg', ['/usr/bin/journalctl', '-f']];
    expect(commandAllowed(['/usr/bin/dmesg', '--follow'], allowed)).toBe(true);
    expect(commandAllowed(['/usr/bin/journalctl', '-f'], allowed)).toBe(true);
    expect(commandAllowed(['/usr/bin/journalctl', '-f', '-u', 'x'], allowed)).toBe(false);
    expect(commandAllowed(['/usr/bin/journalctl'], allowed)).toBe(false);
    expect(commandAllowed(['dmesg'], allowed)).toBe(false);
    expect(commandAllowed(['/bin/sh', '-c', '/usr/bin/dmesg'], allowed)).toBe(false);
    expect(commandAllowed(['/usr/bin/dmesg'], [])).toBe(false);
    const dirs = ['/run/cortex', '/srv/app.sock'];
    expect(socketAllowed('/run/cortex/app.sock', dirs)).toBe(true);
    expect(socketAllowed('/run/cortex/sub/app.sock', dirs)).toBe(true);
    expect(socketAllowed('/run/cortex/..hidden.sock', dirs)).toBe(true);
    expect(socketAllowed('/srv/app.sock', dirs)).toBe(true);
    expect(socketAllowed('/run/cortex/../docker.sock', dirs)).toBe(false);
    expect(socketAllowed('/run/cortex2/app.sock', dirs)).toBe(false);
    expect(socketAllowed('/srv/app.sock2', dirs)).toBe(false);
    // a symlink inside an allowed folder does not lead the socket out of it
    const allowedDir = join(dir, 'allowed');
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(allowedDir);
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(allowedDir, 'link'));
    expect(socketAllowed(join(allowedDir, 'app.sock'), [allowedDir])).toBe(true);
    expect(socketAllowed(join(allowedDir, 'link', 'docker.sock'), [allowedDir])).toBe(false);
    expect(socketAllowed(join(allowedDir, 'link', 'docker.sock'), [elsewhere])).toBe(true);
    // given the lists, a config outside them is refused before anything runs; without them (a library caller's own configs) no limit
    expect(() => createSource({ kind: 'custom', path: 'x', command: ['/bin/true'] }, { buffer, customCommands: ['/usr/bin/dmesg'] })).toThrow(/the command \["\/bin\/true"\] is not allowed on this host/);
    expect(() => createSource({ kind: 'custom', path: 'x', socket: '/tmp/x.sock' }, { buffer, customSocketPaths: [] })).toThrow(/the socket \/tmp\/x\.sock is not allowed on this host/);
    expect(createSource({ kind: 'custom', path: 'x', command: ['/bin/true'] }, { buffer, customCommands: ['/bin/true'] }).status()).toMatchObject({ key: 'custom:x' });
  });
});
