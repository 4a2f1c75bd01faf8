// The custom source under commands and socket clients an operator's host really has: commands
// that leave a background process holding their output, close their stdout and keep running,
// write bytes that are not text; clients that send without end.

import * as net from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { createSource, type CustomCommandSource, type CustomSocketSource, type LogSourceRunner } from '../../../agent/sources/index.js';
import { alive, allEntries, capturingLogger, messages, openBuffer, sleep, tempDir, waitFor } from './helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
const runners: LogSourceRunner[] = [];
const killLater: number[] = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir('cortex-ch2-'));
  buffer = openBuffer(dir);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  for (const pid of killLater.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  buffer.close();
  cleanup();
});

function start<T extends LogSourceRunner>(cfg: Record<string, unknown>, deps: Record<string, unknown> = {}): T {
  const r = createSource({ kind: 'custom', ...cfg }, { buffer, retryMinMs: 10, retryMaxMs: 40, restartMinMs: 30, restartMaxMs: 60, ...deps }) as unknown as T;
  runners.push(r);
  r.start();
  return r;
}

describe('custom source: a command that leaves a process behind it', () => {
  it('stop() ends what the command started in the background holding its stdout, after the command itself ended', async () => {
    const pidFile = join(dir, 'bg.pid');
    const r = start<CustomCommandSource>({ path: 'bg', command: ['/bin/sh', '-c', `echo first; sleep 300 & echo $! > ${pidFile}; exit 0`] });
    await waitFor(() => messages(buffer).includes('first'), 10_000, 'first line');
    // the line may be stored before the shell has written the pid file
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 10_000, 'background pid');
    const bg = Number(readFileSync(pidFile, 'utf8'));
    killLater.push(bg);
    // the command exited; its background process holds the pipe, so the run goes on
    await waitFor(() => r.status().pid !== null && !alive(r.status().pid as number), 10_000, 'the command exited');
    expect(alive(bg)).toBe(true);
    expect(r.status()).toMatchObject({ runs: 1, state: 'reading' });
    await r.stop();
    runners.splice(0);
    await waitFor(() => !alive(bg), 5000, 'the background process ended');
  });

  it('a command that closes its stdout and runs on is said in status and the log', async () => {
    const { logged, logger } = capturingLogger();
    const r = start<CustomCommandSource>({ path: 'cl', command: ['/bin/sh', '-c', 'echo one; exec >&-; exec sleep 300'] }, { logger });
    await waitFor(() => messages(buffer).includes('one'), 10_000, 'one');
    await waitFor(() => r.status().last_error !== null, 5000, 'said in status');
    const pid = r.status().pid as number;
    killLater.push(pid);
    expect(r.status().last_error).toBe(
      `the command closed its stdout but keeps running (pid ${pid}): nothing more is read from it until it ends (it is restarted then); check that it writes its log lines to stdout`,
    );
    expect(logged.filter((l) => l.level === 'warn' && l.msg.includes('closed its stdout'))).toHaveLength(1);
    // when it ends it is restarted as any command, and the error goes with it
    process.kill(pid, 'SIGTERM');
    await waitFor(() => (r.status().runs as number) >= 2, 10_000, 'restarted');
  });

  it('a command that ends at once is not said to have closed its stdout', async () => {
    const { logged, logger } = capturingLogger();
    const r = start<CustomCommandSource>({ path: 'q', command: ['/bin/sh', '-c', 'echo quick'] }, { logger, restartMinMs: 1500, restartMaxMs: 1500 });
    await waitFor(() => r.status().restarts === 1, 10_000, 'exited');
    await sleep(1200); // past STDOUT_CLOSED_GRACE_MS
    expect(logged.filter((l) => l.msg.includes('closed its stdout'))).toEqual([]);
    expect(r.status().last_error).toBeNull();
  });

  it('bytes that are not text: NUL, invalid UTF-8, an encoded lone surrogate, CRLF, bare CR', async () => {
    const r = start<CustomCommandSource>({ path: 'b', command: ['/usr/bin/printf', 'a\\000b\\r\\n\\377\\376bad\\r\\n\\355\\240\\200lone\\n\\r\\n\\n\\rcr\\rmid\\n'] }, { restartMinMs: 60_000, restartMaxMs: 60_000 });
    await waitFor(() => r.status().restarts === 1, 10_000, 'ran');
    expect(messages(buffer)).toEqual(['a\ufffdb', '\ufffd\ufffdbad', '\ufffd\ufffd\ufffdlone', '\rcr\rmid']);
  });
});

describe('custom source: a socket client that sends without end', () => {
  it('100 MB without a newline: stored in parts of 65536 code points, each once, memory bounded', async () => {
    const sock = join(dir, 's.sock');
    const r = start<CustomSocketSource>({ path: 'sk', socket: sock });
    await waitFor(() => r.status().listening === true, 10_000, 'listening');
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const iv = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    await new Promise<void>((resolve, reject) => {
      const c = net.createConnection(sock, async () => {
        const chunk = Buffer.alloc(1 << 20, 0x61);
        for (let i = 0; i < 100; i++) if (!c.write(chunk)) await new Promise((d) => c.once('drain', d));
        c.end('\n');
      });
      c.on('error', reject);
      c.on('close', () => resolve());
    });
    await waitFor(() => r.status().lines_read === 1, 60_000, 'the line');
    clearInterval(iv);
    const es = allEntries(buffer);
    expect(es).toHaveLength(1600);
    expect(es.every((e, i) => e.message.length === 65536 && (e.metadata as { split: { part: number } }).split.part === i + 1)).toBe(true);
    expect(es.at(-1)!.metadata).toMatchObject({ split: { part: 1600, more: false } });
    expect(peak - rss0).toBeLessThan(200 * 1024 * 1024);
  }, 90_000); // 100 MB through the source: 33 s seen in a full run on a loaded machine
});
