// The docker source's per-container logs request has a bounded wait until its answer begins, as
// the /events request and the Engine API's one-shot requests have (DECISIONS D35): an engine that
// accepted the logs request and never answered it (a hung dockerd, a proxy) left the container
// `reading` for good, with no error in status and no retry. Once the answer has begun there is no
// bound: a followed log may rightly say nothing for hours.
//
// The engine is test/agent/sources/fake-docker.ts, reached through a gate (a unix-socket relay)
// that holds chosen requests (logs, inspect): accepted, read, never answered.

import * as net from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DurableBuffer } from '../../agent/buffer/buffer.js';
import { createSource, type DockerSource } from '../../agent/sources/index.js';
import { FakeDocker } from './sources/fake-docker.js';
import { capturingLogger, messages, openBuffer, sleep, tempDir, waitFor } from './sources/helpers.js';

/**
 * A relay in front of the fake engine: every connection is passed through, except the requests
 * chosen by hold(), which are read and never answered.
 */
class Gate {
  /** The requests held, as their request lines. */
  readonly held: string[] = [];
  private readonly holds: { re: RegExp; left: number }[] = [];
  private readonly conns = new Set<net.Socket>();
  private server: net.Server | null = null;

  constructor(
    readonly socketPath: string,
    private readonly engineSocket: string,
  ) {}

  async listen(): Promise<void> {
    const server = net.createServer((client) => {
      this.track(client);
      client.once('data', (head: Buffer) => {
        const line = head.toString('latin1').split('\r\n', 1)[0]!;
        const h = this.holds.find((x) => x.left > 0 && x.re.test(line));
        if (h !== undefined) {
          h.left--;
          this.held.push(line);
          client.resume(); // read on, answer nothing
          return;
        }
        const up = net.connect(this.engineSocket);
        this.track(up);
        up.on('close', () => client.destroy());
        client.on('close', () => up.destroy());
        up.write(head);
        client.pipe(up);
        up.pipe(client);
      });
    });
    await new Promise<void>((resolve) => server.listen(this.socketPath, resolve));
    this.server = server;
  }

  /** The next `times` requests whose request line matches are not answered. */
  hold(re: RegExp, times = 1): void {
    this.holds.push({ re, left: times });
  }

  async close(): Promise<void> {
    for (const s of this.conns) s.destroy();
    const s = this.server;
    this.server = null;
    if (s !== null) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private track(s: net.Socket): void {
    s.on('error', () => undefined);
    this.conns.add(s);
    s.on('close', () => this.conns.delete(s));
  }
}

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let docker: FakeDocker;
let gate: Gate;
const runners: DockerSource[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('cortex-dk-answer-'));
  buffer = openBuffer(dir);
  docker = new FakeDocker(join(dir, 'docker.sock'));
  await docker.listen();
  gate = new Gate(join(dir, 'gate.sock'), docker.socketPath);
  await gate.listen();
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  await gate.close();
  await docker.close();
  buffer.close();
  cleanup();
});

const ANSWER_MS = 300;
const LOGS = /^GET \/containers\/[^/]+\/logs\?/;
const INSPECT = /^GET \/containers\/[^/]+\/json /;

function start(deps: Record<string, unknown> = {}): DockerSource {
  const r = createSource(
    { kind: 'docker', socket: gate.socketPath },
    { buffer, retryMinMs: 10, retryMaxMs: 40, restartMinMs: 100, restartMaxMs: 200, dockerAnswerTimeoutMs: ANSWER_MS, ...deps },
  ) as DockerSource;
  runners.push(r);
  r.start();
  return r;
}

const logsRequests = () => docker.requests.filter((q) => q.includes('/logs?'));
const noAnswer = (name: string) =>
  `logs of ${name}: no answer within ${ANSWER_MS} ms (is the Docker Engine at ${gate.socketPath} hung? \`docker logs ${name}\` should answer at once)`;

describe('docker: a logs request the engine never answers', () => {
  it('the first logs request is not answered: an error in status and the log, then the second request read, each line once', async () => {
    const id = docker.add('web');
    docker.log(id, 'a1\n');
    docker.log(id, 'a2\n');
    gate.hold(LOGS);
    const { logged, logger } = capturingLogger();
    const r = start({ logger });

    await waitFor(() => r.status().containers.some((c) => c.name === 'web' && c.state === 'error'), 5000, 'the unanswered request in status');
    expect(gate.held).toHaveLength(1);
    expect(gate.held[0]).toMatch(/since=0 HTTP\/1\.1$/);
    const web = r.status().containers.find((c) => c.name === 'web')!;
    expect(web.last_error).toMatch(new RegExp(`^${escape(noAnswer('web'))}; retried after \\d+ ms$`));
    expect(r.status().last_error).toBe(web.last_error);
    expect(logged.some((l) => l.level === 'warn' && l.msg.startsWith(`docker: ${noAnswer('web')}; retrying in `))).toBe(true);

    // asked again: answered this time, read from the start (nothing was stored), each line once
    await waitFor(() => messages(buffer).length >= 2, 5000, 'the second request read');
    expect(logsRequests()).toHaveLength(1); // the held one never reached the engine
    docker.log(id, 'a3\n');
    await waitFor(() => messages(buffer).includes('a3'), 5000, 'a live line');
    expect(messages(buffer)).toEqual(['a1', 'a2', 'a3']);
    const after = r.status().containers.find((c) => c.name === 'web')!;
    expect(after.state).toBe('reading');
    expect(after.last_error).toBeNull();
    expect(r.status().last_error).toBeNull();
    expect(logged.some((l) => l.level === 'info' && l.msg === 'docker: logs of web readable again')).toBe(true);
  });

  it('a request again after a cut stream, not answered: the next one resumes from the stored position (nothing lost, nothing read twice)', async () => {
    const id = docker.add('api');
    docker.log(id, 'b1\n');
    const r = start();
    await waitFor(() => messages(buffer).includes('b1'), 5000, 'b1');
    docker.log(id, 'b2\n');
    await waitFor(() => messages(buffer).includes('b2'), 5000, 'b2');
    const stored = r.status().containers.find((c) => c.name === 'api')!.position;
    expect(stored).not.toBeNull();

    gate.hold(LOGS);
    docker.cutLogs(id);
    docker.log(id, 'b3\n'); // written while the agent waits for an answer
    await waitFor(() => gate.held.length === 1, 5000, 'the request again, held');
    expect(gate.held[0]).not.toMatch(/since=0 /); // from the stored position
    await waitFor(() => r.status().containers.some((c) => c.name === 'api' && c.last_error?.startsWith(noAnswer('api')) === true), 5000, 'the error in status');
    await waitFor(() => messages(buffer).includes('b3'), 5000, 'b3 read by the next request');
    docker.log(id, 'b4\n');
    await waitFor(() => messages(buffer).includes('b4'), 5000, 'b4');
    expect(messages(buffer)).toEqual(['b1', 'b2', 'b3', 'b4']);
    expect(r.status().lines_skipped).toBeGreaterThan(0); // b1, b2 sent again by Docker's whole-second `since`, and skipped
  });

  it('once the answer has begun there is no bound: a followed log silent for several times the wait is not cut', async () => {
    const id = docker.add('quiet');
    docker.log(id, 'q1\n');
    const r = start();
    await waitFor(() => messages(buffer).includes('q1'), 5000, 'q1');
    await sleep(4 * ANSWER_MS); // the absence of a cut: nothing to await
    docker.log(id, 'q2\n');
    await waitFor(() => messages(buffer).includes('q2'), 5000, 'q2');
    expect(logsRequests()).toHaveLength(1);
    expect(messages(buffer)).toEqual(['q1', 'q2']);
    expect(r.status().containers.find((c) => c.name === 'quiet')!.last_error).toBeNull();
  });

  it('an HTTP error answer is not also taken as no answer; stopped while waiting, nothing is said afterwards', async () => {
    const id = docker.add('none');
    docker.failLogs(id, { status: 501, message: 'configured logging driver does not support reading' });
    const { logged, logger } = capturingLogger();
    const r = start({ logger, restartMinMs: 4 * ANSWER_MS, restartMaxMs: 4 * ANSWER_MS });
    await waitFor(() => r.status().containers.some((c) => c.name === 'none' && c.state === 'error'), 5000, 'the 501 in status');
    await sleep(2 * ANSWER_MS); // past the wait, before the retry
    expect(r.status().containers.find((c) => c.name === 'none')!.last_error).toMatch(/^logs of none: HTTP 501: configured logging driver does not support reading; retried after \d+ ms$/);
    expect(logged.filter((l) => l.msg.includes('no answer within'))).toEqual([]);

    docker.failLogs(id, null);
    const other = docker.add('held');
    gate.hold(LOGS);
    docker.start(other);
    await waitFor(() => gate.held.length === 1, 5000, 'the logs request of held, held');
    await r.stop();
    await sleep(2 * ANSWER_MS);
    expect(logged.filter((l) => l.msg.includes('no answer within'))).toEqual([]);
    expect(r.status().state).toBe('stopped');
  });
});

describe('docker: the request asking whether a container still runs is not answered (found with the above)', () => {
  it('an error in status, the engine asked again, the container read on from its position (it was dropped: never read again, nothing said)', async () => {
    const id = docker.add('web');
    docker.log(id, 'c1\n');
    const { logged, logger } = capturingLogger();
    const r = start({ logger });
    await waitFor(() => messages(buffer).includes('c1'), 5000, 'c1');

    gate.hold(INSPECT); // the retry's question after the cut
    docker.cutLogs(id);
    docker.log(id, 'c2\n');
    await waitFor(() => gate.held.length === 1, 5000, 'the inspect held');
    expect(gate.held[0]).toContain(`/containers/${id}/json `);
    const hung = `Docker Engine unreachable at ${gate.socketPath}: GET /containers/${id}/json: no answer within ${ANSWER_MS} ms — is the Docker Engine at ${gate.socketPath} hung? (\`docker info\` should answer at once)`;
    await waitFor(() => r.status().last_error === hung, 5000, 'the unanswered inspect in status');
    expect(r.status().state).toBe('error');
    expect(logged.some((l) => l.level === 'error' && l.msg === `docker: ${hung}; retrying`)).toBe(true);

    await waitFor(() => messages(buffer).includes('c2'), 5000, 'c2 read after the engine was asked again');
    docker.log(id, 'c3\n');
    await waitFor(() => messages(buffer).includes('c3'), 5000, 'c3');
    expect(messages(buffer)).toEqual(['c1', 'c2', 'c3']);
    expect(r.status().last_error).toBeNull();
    expect(r.status().state).toBe('reading');
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
