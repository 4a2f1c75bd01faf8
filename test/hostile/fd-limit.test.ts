// Issue 18: hitting the file-descriptor limit is logged, and the server keeps running
// (DECISIONS H10). The server runs under `prlimit --nofile=256`; without prlimit the case says
// it did not run.
import { spawn, spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { makeTempDir } from '../server/helpers.js';
import { CLI, ROOT, requireServerCli } from '../server/spawn.js';

beforeAll(() => requireServerCli(), 60_000);

it('reaching the descriptor limit is logged with the remedy; the server still answers once descriptors are free', async () => {
  if (spawnSync('prlimit', ['--version']).status !== 0) {
    console.warn('fd-limit: prlimit not available; not run');
    return;
  }
  const db = join(makeTempDir(), 'c.db');
  const child = spawn('prlimit', ['--nofile=256', process.execPath, CLI, 'serve', '--listen', '127.0.0.1:0', '--db', db], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"url":"ws:\/\/127\.0\.0\.1:(\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 400; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      sockets.push(s);
    }
    const end = Date.now() + 10_000;
    while (!err.includes('file-descriptor limit') && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(err).toContain('file-descriptor limit is reached');
    expect(err).toContain('LimitNOFILE');
    for (const s of sockets) s.destroy();
    sockets.length = 0;
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status).catch(() => 0);
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect(child.exitCode).toBeNull();
  } finally {
    for (const s of sockets) s.destroy();
    child.kill('SIGKILL');
  }
}, 60_000);
