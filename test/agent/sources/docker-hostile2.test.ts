// The docker source against an engine an operator's host really has: a clock that steps back
// while a container logs (NTP at boot, a VM resumed), and answers that do not end.

import { existsSync, unlinkSync } from 'node:fs';
import * as http from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { createSource, type DockerSource, type LogSourceRunner } from '../../../agent/sources/index.js';
import { MAX_ENGINE_ANSWER_BYTES } from '../../../agent/sources/docker.source.js';
import { FakeDocker } from './fake-docker.js';
import { capturingLogger, messages, openBuffer, tempDir, waitFor } from './helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let docker: FakeDocker;
let socket: string;
const runners: LogSourceRunner[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('cortex-dh2-'));
  buffer = openBuffer(dir);
  socket = join(dir, 'docker.sock');
  docker = new FakeDocker(socket);
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  await docker.close();
  buffer.close();
  cleanup();
});

function start(extra: Record<string, unknown> = {}, deps: Record<string, unknown> = {}): DockerSource {
  const r = createSource({ kind: 'docker', socket, ...extra }, { buffer, retryMinMs: 10, retryMaxMs: 40, restartMinMs: 20, restartMaxMs: 100, ...deps }) as DockerSource;
  runners.push(r);
  r.start();
  return r;
}

/** Steps the fake engine's clock (the timestamps of the next messages) by `ns`. */
function stepClock(ns: bigint): void {
  (docker as unknown as { clockNs: bigint }).clockNs += ns;
}

describe('docker: the clock steps back while a container logs', () => {
  it('lines after the step are read (not taken for lines read before), once each; a restart after them duplicates nothing', async () => {
    await docker.listen();
    const id = docker.add('web');
    docker.log(id, 'a1\n');
    docker.log(id, 'a2\n');
    const r = start({ path: 'web' });
    await waitFor(() => messages(buffer).length === 2, 10_000, 'a1, a2');
    stepClock(-5_000_000_000n); // 5 s back
    docker.log(id, 'b1\n');
    docker.log(id, 'b2\n', 2);
    docker.log(id, 'b3\n');
    await docker.flushed();
    await waitFor(() => messages(buffer).includes('b3'), 5000, 'b3');
    expect(messages(buffer)).toEqual(['a1', 'a2', 'b1', 'b2', 'b3']);
    expect(r.status().lines_skipped).toBe(0);

    // the agent restarts: what it read is skipped once by time (Docker's `since` is whole seconds)
    await r.stop();
    runners.splice(0);
    stepClock(10_000_000_000n);
    docker.log(id, 'c1\n');
    const r2 = start({ path: 'web' });
    await waitFor(() => messages(buffer).includes('c1'), 5000, 'c1');
    await docker.flushed();
    docker.log(id, 'c2\n');
    await waitFor(() => messages(buffer).includes('c2'), 5000, 'c2');
    expect(messages(buffer)).toEqual(['a1', 'a2', 'b1', 'b2', 'b3', 'c1', 'c2']);
    expect(r2.status().lines_skipped).toBeGreaterThan(0);
  });
});

describe('docker: whatever listens on the socket answers without end', () => {
  it('an answer over MAX_ENGINE_ANSWER_BYTES is an error in status and the log, retried; memory stays bounded', async () => {
    const sock = join(dir, 'endless.sock');
    if (existsSync(sock)) unlinkSync(sock);
    let listRequests = 0;
    let sent = 0;
    const chunk = Buffer.alloc(1 << 20, 0x20);
    const server = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      if (req.url?.startsWith('/events')) {
        res.flushHeaders();
        return; // an events stream that stays open
      }
      listRequests++;
      res.write('[');
      const more = (): void => {
        while (!res.destroyed && sent < 12 * MAX_ENGINE_ANSWER_BYTES) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', more);
            return;
          }
        }
      };
      more();
    });
    await new Promise<void>((resolve) => server.listen(sock, resolve));
    try {
      const { logged, logger } = capturingLogger();
      const r = createSource({ kind: 'docker', socket: sock }, { buffer, logger, restartMinMs: 50, restartMaxMs: 100 }) as DockerSource;
      runners.push(r);
      const rss0 = process.memoryUsage().rss;
      r.start();
      await waitFor(() => r.status().state === 'error', 30_000, 'error in status');
      expect(r.status().last_error).toContain(`GET /containers/json?all=1: the answer is larger than ${MAX_ENGINE_ANSWER_BYTES} bytes (is a Docker Engine listening at ${sock}?)`);
      expect(logged.some((l) => l.level === 'error' && l.msg.includes('the answer is larger than'))).toBe(true);
      expect(sent).toBeLessThan(10 * MAX_ENGINE_ANSWER_BYTES); // not read on to the end
      expect(process.memoryUsage().rss - rss0).toBeLessThan(8 * MAX_ENGINE_ANSWER_BYTES);
      await waitFor(() => listRequests >= 2, 10_000, 'retried');
      await r.stop();
      runners.splice(0);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
