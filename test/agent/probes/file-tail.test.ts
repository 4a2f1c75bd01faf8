import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidParamsError, ProbeExecutionFailedError, validateFileTailOutput } from '@cortex/agent-protocol';
import { createProbeRegistry } from '../../../agent/probes/index.js';
import { readTailLines, isWithin } from '../../../agent/probes/file-tail.probe.js';
import { rpcError } from './helpers.js';

let dir: string;
let allowed: string;
let outside: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(os.tmpdir(), 'cortex-file-tail-')));
  allowed = join(dir, 'logs');
  outside = join(dir, 'secret');
  mkdirSync(allowed);
  mkdirSync(outside);
  writeFileSync(join(outside, 'shadow'), 'root:$6$secret:19000:0:99999:7:::\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function tail(path: string, lines?: number, allowedTailPaths: string[] = [allowed]) {
  const r = createProbeRegistry({ allowedTailPaths });
  return r.invoke({ probe: 'file.tail', args: lines === undefined ? { path } : { path, lines }, timeout_ms: 5000 });
}

async function refused(p: Promise<unknown>, message: RegExp) {
  const err = await rpcError(p);
  expect(err).toBeInstanceOf(InvalidParamsError);
  expect(err.data.errors).toEqual([{ path: '/args/path', message: expect.stringMatching(message), keyword: 'allowedPaths' }]);
  expect(JSON.stringify(err.toJSON())).not.toContain('secret:19000');
}

describe('file.tail: reading', () => {
  it('returns the last N lines, oldest first, and validates against the generated output validator', async () => {
    const file = join(allowed, 'app.log');
    writeFileSync(file, Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    const res = await tail(file, 3);
    expect(res.output).toEqual({ path: file, lines: ['line 498', 'line 499', 'line 500'], truncated: false, size_bytes: expect.any(Number) });
    expect(validateFileTailOutput(res.output)).toBe(true);
    expect(res.exit_code).toBeNull();
    const dflt = await tail(file);
    expect((dflt.output as { lines: string[] }).lines).toHaveLength(100);
    expect((dflt.output as { lines: string[] }).lines[0]).toBe('line 401');
  });

  it('a whole file shorter than N, a last line without newline, CRLF, empty lines, empty file', async () => {
    const f = join(allowed, 'a.log');
    writeFileSync(f, 'one\r\n\r\nthree\nfour (no newline)');
    expect((await tail(f, 10)).output).toMatchObject({ lines: ['one', '', 'three', 'four (no newline)'], truncated: false });
    writeFileSync(f, '');
    expect((await tail(f, 10)).output).toMatchObject({ lines: [], truncated: false, size_bytes: 0 });
    writeFileSync(f, '\n');
    expect((await tail(f, 10)).output).toMatchObject({ lines: [''], truncated: false });
  });

  it('invalid UTF-8 is replaced, not dropped', async () => {
    const f = join(allowed, 'bin.log');
    writeFileSync(f, Buffer.concat([Buffer.from('ok\nbad '), Buffer.from([0xff, 0xfe]), Buffer.from(' end\n')]));
    expect((await tail(f, 5)).output).toMatchObject({ lines: ['ok', 'bad \uFFFD\uFFFD end'] });
  });

  it('reads from the end only: a 20 MB file costs about one chunk for a few lines', async () => {
    const line = 'x'.repeat(99) + '\n';
    const chunk = line.repeat(10_000);
    const f = join(allowed, 'big.log');
    writeFileSync(f, chunk.repeat(20) + 'last\n');
    const fh = await open(f, 'r');
    let bytesRead = 0;
    const counting = { read: async (buf: Buffer, off: number, len: number, pos: number) => {
      const r = await fh.read(buf, off, len, pos);
      bytesRead += r.bytesRead;
      return r;
    } };
    try {
      const size = (await fh.stat()).size;
      const res = await readTailLines(counting as never, size, 10);
      expect(res.lines).toHaveLength(10);
      expect(res.lines.at(-1)).toBe('last');
      expect(bytesRead).toBeLessThanOrEqual(64 * 1024);
    } finally {
      await fh.close();
    }
  });

  it('stops at 512 KiB and says truncated; cuts lines over 65536 characters', async () => {
    const f = join(allowed, 'wide.log');
    writeFileSync(f, Array.from({ length: 1000 }, (_, i) => `${i} ${'y'.repeat(2000)}`).join('\n') + '\n');
    const res = (await tail(f, 1000)).output as { lines: string[]; truncated: boolean };
    expect(res.truncated).toBe(true);
    expect(res.lines.length).toBeGreaterThan(200);
    expect(res.lines.length).toBeLessThan(1000);
    expect(res.lines.at(-1)!.startsWith('999 ')).toBe(true);
    expect(res.lines.every((l) => /^\d+ y{2000}$/.test(l))).toBe(true); // no partial first line

    writeFileSync(f, 'short\n' + 'z'.repeat(100_000) + '\n');
    const long = (await tail(f, 2)).output as { lines: string[]; truncated: boolean };
    expect(long.lines).toEqual(['short', 'z'.repeat(65536)]);
    expect(long.truncated).toBe(true);
    expect(validateFileTailOutput(long)).toBe(true);
  });

  it('a file that shrinks while it is read is -32011 (the probe ran and failed), not an agent bug', async () => {
    const shrunk = { read: async () => ({ bytesRead: 0 }) };
    const err = await rpcError(readTailLines(shrunk as never, 100, 5));
    expect(err).toBeInstanceOf(ProbeExecutionFailedError);
    expect(err.data).toEqual({ stderr: 'the file shrank while it was read', exit_code: null });
  });

  it('exactly N lines found within the first chunks is not truncated; small chunks give the same answer', async () => {
    const f = join(allowed, 'n.log');
    const text = Array.from({ length: 50 }, (_, i) => `l${i}`).join('\n') + '\n';
    writeFileSync(f, text);
    const fh = await open(f, 'r');
    try {
      for (const chunkBytes of [1, 3, 7, 64, 1 << 16]) {
        expect(await readTailLines(fh, text.length, 5, { chunkBytes })).toEqual({ lines: ['l45', 'l46', 'l47', 'l48', 'l49'], truncated: false });
        expect(await readTailLines(fh, text.length, 50, { chunkBytes })).toEqual({ lines: text.trimEnd().split('\n'), truncated: false });
      }
    } finally {
      await fh.close();
    }
  });
});

describe('file.tail: allowed paths', () => {
  it('refuses a path outside the allowed paths without touching it (-32602 at /args/path)', async () => {
    await refused(tail(join(outside, 'shadow')), /outside the allowed paths/);
    await refused(tail('/etc/shadow'), /outside the allowed paths/);
    await refused(tail('/etc/passwd'), /outside the allowed paths/);
    await refused(tail(`${allowed}-sibling/x.log`), /outside the allowed paths/); // prefix of a name is not a parent
    await refused(tail(join(outside, 'does-not-exist')), /outside the allowed paths/); // no existence oracle
  });

  it('refuses everything when no allowed paths are configured', async () => {
    const f = join(allowed, 'a.log');
    writeFileSync(f, 'x\n');
    await refused(tail(f, 1, []), /no allowed paths configured/);
  });

  it('refuses a symlink inside an allowed directory that points outside (file and directory links)', async () => {
    symlinkSync(join(outside, 'shadow'), join(allowed, 'innocent.log'));
    await refused(tail(join(allowed, 'innocent.log')), /resolves \(through a symlink\) outside/);
    symlinkSync(outside, join(allowed, 'dirlink'));
    await refused(tail(join(allowed, 'dirlink', 'shadow')), /resolves \(through a symlink\) outside/);
    symlinkSync('../secret/shadow', join(allowed, 'relative.log'));
    await refused(tail(join(allowed, 'relative.log')), /resolves \(through a symlink\) outside/);
  });

  it('follows a symlink that stays inside the allowed paths, and reports the resolved path', async () => {
    mkdirSync(join(allowed, 'real'));
    writeFileSync(join(allowed, 'real', 'app.log'), 'a\nb\n');
    symlinkSync(join(allowed, 'real', 'app.log'), join(allowed, 'current.log'));
    const res = await tail(join(allowed, 'current.log'), 5);
    expect(res.output).toMatchObject({ path: join(allowed, 'real', 'app.log'), lines: ['a', 'b'] });
  });

  it('an allowed path that is itself a symlink works under both names', async () => {
    const link = join(dir, 'varlog');
    symlinkSync(allowed, link);
    writeFileSync(join(allowed, 'x.log'), 'x\n');
    expect((await tail(join(link, 'x.log'), 1, [link])).output).toMatchObject({ lines: ['x'] });
    expect((await tail(join(allowed, 'x.log'), 1, [link])).output).toMatchObject({ lines: ['x'] });
  });

  it('an allowed single file', async () => {
    const f = join(allowed, 'only.log');
    writeFileSync(f, 'only\n');
    writeFileSync(join(allowed, 'other.log'), 'other\n');
    expect((await tail(f, 1, [f])).output).toMatchObject({ lines: ['only'] });
    await refused(tail(join(allowed, 'other.log'), 1, [f]), /outside the allowed paths/);
  });

  it('-32011 for a missing file, a directory, a FIFO (without hanging)', async () => {
    const missing = await rpcError(tail(join(allowed, 'missing.log')));
    expect(missing).toBeInstanceOf(ProbeExecutionFailedError);
    expect(missing.data.stderr).toMatch(/ENOENT/);
    const d = await rpcError(tail(allowed));
    expect(d.code).toBe(-32011);
    expect(d.data.stderr).toMatch(/not a regular file/);
    const fifo = join(allowed, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const f = await rpcError(tail(fifo));
    expect(f.code).toBe(-32011);
    expect(f.data.stderr).toMatch(/not a regular file/);
  });

  it('setAllowedTailPaths applies live and refuses relative paths', async () => {
    const f = join(allowed, 'live.log');
    writeFileSync(f, 'live\n');
    const r = createProbeRegistry({ allowedTailPaths: [] });
    await refused(r.invoke({ probe: 'file.tail', args: { path: f }, timeout_ms: 5000 }), /no allowed paths/);
    r.setAllowedTailPaths([allowed]);
    await expect(r.invoke({ probe: 'file.tail', args: { path: f }, timeout_ms: 5000 })).resolves.toMatchObject({ output: { lines: ['live'] } });
    expect(() => r.setAllowedTailPaths(['var/log'])).toThrow(/absolute/);
    expect(() => createProbeRegistry({ allowedTailPaths: ['./logs'] })).toThrow(/absolute/);
  });

  it('isWithin', () => {
    expect(isWithin('/var/log/a', '/var/log')).toBe(true);
    expect(isWithin('/var/log', '/var/log')).toBe(true);
    expect(isWithin('/var/logs/a', '/var/log')).toBe(false);
    expect(isWithin('/etc/passwd', '/')).toBe(true);
  });
});
