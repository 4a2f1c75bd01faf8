// The docker source against an engine that answers what its API does not document (a JSON
// `null`, a list of nulls, a string where an object belongs) and against containers whose
// logs cannot be read (HTTP 501 for `--log-driver none`): nothing of it may end the agent;
// it is an error in status, retried with backoff, logged rate-limited.

import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { validateLogBatchEntry } from '@cortex/agent-protocol';
import type { DurableBuffer } from '../../../agent/buffer/buffer.js';
import { createSource, type DockerSource, type LogSourceRunner } from '../../../agent/sources/index.js';
import { STABLE_STREAM_MS } from '../../../agent/sources/docker.source.js';
import { FakeDocker } from './fake-docker.js';
import { allEntries, capturingLogger, messages, openBuffer, tempDir, waitFor, type Logged } from './helpers.js';

let dir: string;
let cleanup: () => void;
let buffer: DurableBuffer;
let docker: FakeDocker;
let socket: string;
const runners: LogSourceRunner[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = tempDir('cortex-dkr-'));
  buffer = openBuffer(dir);
  socket = join(dir, 'docker.sock');
  docker = new FakeDocker(socket);
  await docker.listen();
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop();
  await docker.close();
  buffer.close();
  cleanup();
});


function start(deps: Record<string, unknown> = {}): { r: DockerSource; logged: Logged[] } {
  const { logged, logger } = capturingLogger();
  const r = createSource({ kind: 'docker', socket }, { buffer, logger, retryMinMs: 10, retryMaxMs: 40, restartMinMs: 20, restartMaxMs: 100, ...deps }) as DockerSource;
  runners.push(r);
  r.start();
  return { r, logged };
}

const logsRequests = () => docker.requests.filter((q) => q.includes('/logs?'));

describe('docker: engine answers of the wrong shape are errors in status, never a crash (fix item 1)', () => {
  it('events stream lines that are not a JSON object (null, a list, a string, a number, not JSON, Actor not an object) are ignored, counted and logged once; events after them still work', async () => {
    const a = docker.add('a');
    docker.log(a, 'first\n');
    const { r, logged } = start();
    await waitFor(() => messages(buffer).includes('first'), 5000, 'first line');
    for (const raw of ['null', '[]', '"start"', '42', 'not json {', '{"Type":"container","Action":"start","Actor":null}', '{"Type":"container","Action":"start","Actor":"x","id":7}', '{"Type":"container","Action":"start","Actor":{"ID":"zz","Attributes":null}}']) {
      docker.writeEvent(raw);
    }
    // an event after them is still acted on
    const b = docker.add('b', { running: false });
    docker.log(b, 'second\n');
    docker.start(b);
    await waitFor(() => messages(buffer).includes('second'), 5000, 'container started after the odd events');
    expect(r.status()).toMatchObject({ state: 'reading', last_error: null, events_malformed: 5 });
    const said = logged.filter((l) => l.msg.includes('events stream line'));
    expect(said).toHaveLength(1); // at most once a minute
    expect(said[0]!.msg).toBe('docker: an events stream line is null, not a JSON object: ignored (said at most once a minute)');
    expect(said[0]!.obj).toMatchObject({ events_malformed: 1, excerpt: 'null' });
  });

  it('an events stream line without end is dropped at 1 MiB, counted, and the next event is read', async () => {
    const { r } = start();
    await waitFor(() => r.status().state === 'waiting', 5000, 'connected');
    docker.writeEvent('x'.repeat(3 * 1024 * 1024));
    const b = docker.add('b', { running: false });
    docker.log(b, 'after the long line\n');
    docker.start(b);
    await waitFor(() => messages(buffer).includes('after the long line'), 5000, 'event after the long line');
    expect(r.status().events_malformed).toBe(1);
  });

  for (const [what, path, body, error] of [
    ['GET /containers/json answering [null]', '/containers/json', '[null]', 'GET /containers/json: element 0 is null, not a JSON object'],
    ['GET /containers/json answering a list of strings', '/containers/json', '["abc"]', 'GET /containers/json: element 0 is a string, not a JSON object'],
    ['GET /containers/json answering a container without Id', '/containers/json', '[{"Names":["/a"]}]', 'GET /containers/json: element 0 is a container without an Id'],
    ['GET /containers/json answering null', '/containers/json', 'null', 'GET /containers/json?all=1: the answer is null, not a JSON list'],
    ['GET /containers/json answering an object', '/containers/json', '{}', 'GET /containers/json?all=1: the answer is an object, not a JSON list'],
    ['GET /containers/{id}/json answering null', '/json', 'null', 'the answer is null, not a JSON object'],
    ['GET /containers/{id}/json answering a string', '/json', '"web"', 'the answer is a string, not a JSON object'],
    ['GET /containers/{id}/json answering an object without Name', '/json', '{"Id":"x","Config":"tty"}', 'the answer has no container name (Name)'],
  ] as const) {
    it(`${what}: an error in status, retried with backoff; the containers are read once the engine answers as it should`, async () => {
      const id = docker.add('web');
      docker.log(id, 'hello\n');
      let odd = true;
      docker.answer = (p) => (odd && (path === '/json' ? p.startsWith('/containers/') && p.endsWith('/json') && p !== '/containers/json' : p.startsWith(path)) ? { status: 200, body } : undefined);
      const { r, logged } = start();
      await waitFor(() => (r.status().last_error ?? '').includes(error), 5000, `error ${error}`);
      expect(r.status().state).toBe('error');
      expect(r.status().last_error).toMatch(/^Docker Engine unreachable at .*docker\.sock: /);
      // retried (backoff 20..100 ms): asked again, logged once
      // reconnected with a growing backoff (20, 40, 80, 100 ms), also when the listing worked and the inspect did not
      const connects = () => docker.requestTimes.filter((_, i) => docker.requests[i]!.startsWith('GET /events'));
      await waitFor(() => connects().length >= 5, 5000, 'reconnections');
      const t = connects();
      expect(t[3]! - t[2]!).toBeGreaterThanOrEqual(75);
      expect(t[4]! - t[3]!).toBeGreaterThanOrEqual(95);
      expect(logged.filter((l) => l.level === 'error' && l.msg.includes(error))).toHaveLength(1);
      expect(logged.filter((l) => l.msg === 'docker: engine reachable again').length).toBeLessThanOrEqual(1);
      odd = false;
      await waitFor(() => messages(buffer).includes('hello'), 5000, 'read once the engine answers well');
      expect(r.status()).toMatchObject({ state: 'reading', last_error: null });
    });
  }

  it('the check after a cut stream answering null, or a State without Running (onStreamEnd): an error in status, then the container is read on', async () => {
    const id = docker.add('web');
    docker.log(id, 'one\n');
    const { r, logged } = start();
    await waitFor(() => messages(buffer).includes('one'), 5000, 'first line');
    const errorSaid = (text: string) => logged.some((l) => l.level === 'error' && l.msg.includes(text));
    let odd: string | null = 'null';
    docker.answer = (p) => (odd !== null && p === `/containers/${id}/json` ? { status: 200, body: odd } : undefined);
    docker.cutLogs(id);
    await waitFor(() => errorSaid(`GET /containers/${id}/json: the answer is null, not a JSON object`), 5000, 'null said');
    odd = null;
    docker.log(id, 'two\n');
    await waitFor(() => messages(buffer).includes('two'), 5000, 'read on');
    // a State that is not an object with Running: the same (follow does not need State; the check does)
    odd = JSON.stringify({ Id: id, Name: '/web', State: 'running' });
    docker.cutLogs(id);
    await waitFor(() => errorSaid(`GET /containers/${id}/json: the answer has no State.Running`), 5000, 'State said');
    odd = null;
    docker.log(id, 'three\n');
    await waitFor(() => messages(buffer).includes('three'), 5000, 'read on again');
    expect(messages(buffer)).toEqual(['one', 'two', 'three']);
    await waitFor(() => r.status().last_error === null, 5000, 'no error');
  });

  it('an HTTP error whose body is JSON null is said, not a crash', async () => {
    docker.answer = (p) => (p.startsWith('/containers/json') ? { status: 500, body: 'null' } : undefined);
    const { r } = start();
    await waitFor(() => (r.status().last_error ?? '').includes('GET /containers/json?all=1: HTTP 500: null'), 5000, 'error in status');
  });
});

describe('docker: a container whose logs cannot be read (HTTP 501, --log-driver none) (fix item 3)', () => {
  it('is retried with a growing backoff, logged once, shown in status; read once its logs can be; a stream that lasted resets the backoff', async () => {
    let now = Date.now();
    const id = docker.add('nolog');
    docker.failLogs(id, { status: 501, message: 'configured logging driver does not support reading' });
    const ok = docker.add('fine');
    docker.log(ok, 'fine line\n');
    const { r, logged } = start({ clock: () => now });
    const failing = () => logsRequests().filter((q) => q.includes(id));
    await waitFor(() => failing().length >= 6, 10_000, 'six logs requests');
    // backoff 20, 40, 80, 100, 100 ms (restartMinMs 20, restartMaxMs 100): each request at least that long after the one before
    const times = docker.requests.map((q, i) => [q, docker.requestTimes[i]!] as const).filter(([q]) => q.includes('/logs?') && q.includes(id)).map(([, t]) => t);
    const gaps = times.slice(1, 6).map((t, i) => t - times[i]!);
    expect(gaps[2]).toBeGreaterThanOrEqual(75);
    expect(gaps[3]).toBeGreaterThanOrEqual(95);
    expect(gaps[4]).toBeGreaterThanOrEqual(95);
    // logged once (then every 10 minutes with a count), not at every retry
    const said = logged.filter((l) => l.msg.includes('HTTP 501'));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ level: 'warn', obj: { source: 'docker:nolog', retry_ms: 20 } });
    expect(said[0]!.msg).toBe('docker: logs of nolog: HTTP 501: configured logging driver does not support reading; retrying in 20 ms, less often while it fails');
    // status: the container in error with what the engine said; the source's last_error has it; the other container reads
    const st = r.status();
    expect(st.last_error).toMatch(/^logs of nolog: HTTP 501: configured logging driver does not support reading; retried after \d+ ms$/);
    expect(st.state).toBe('reading');
    expect(st.containers.find((c) => c.name === 'nolog')).toMatchObject({ state: 'error', last_error: expect.stringContaining('HTTP 501') });
    expect(st.containers.find((c) => c.name === 'fine')).toMatchObject({ state: 'reading', last_error: null });
    expect(messages(buffer)).toEqual(['fine line']);
    // "following" said once, not at each retry
    expect(logged.filter((l) => l.obj.source === 'docker:nolog' && l.msg === 'docker: following container logs')).toHaveLength(1);

    // its logs become readable: read, the error gone
    docker.failLogs(id, null);
    docker.log(id, 'readable now\n');
    await waitFor(() => messages(buffer).includes('readable now'), 5000, 'read once readable');
    await waitFor(() => r.status().last_error === null, 5000, 'error gone');
    expect(r.status().containers.find((c) => c.name === 'nolog')).toMatchObject({ state: 'reading', last_error: null });
    expect(logged.filter((l) => l.msg === 'docker: logs of nolog readable again')).toHaveLength(1);

    // a stream that lasted STABLE_STREAM_MS, then cut: retried after the first delay again, not 100 ms
    now += STABLE_STREAM_MS + 1;
    docker.failLogs(id, { status: 501, message: 'configured logging driver does not support reading' });
    docker.cutLogs(id);
    const ofNolog = () => logged.filter((l) => l.level === 'warn' && l.obj.source === 'docker:nolog');
    await waitFor(() => ofNolog().length >= 2, 5000, 'cut logged');
    expect(ofNolog()[1]!.msg).toMatch(/^docker: logs of nolog: /);
    expect(ofNolog()[1]!.obj).toMatchObject({ retry_ms: 20 });
    // and the 501 again is news (a new error since the last one logged)
    await waitFor(() => logged.filter((l) => l.msg.includes('HTTP 501')).length === 2, 5000, '501 said again');
    expect(logged.filter((l) => l.msg.includes('HTTP 501'))[1]!.obj).toMatchObject({ retry_ms: 40 });
    expect(allEntries(buffer).every((e) => validateLogBatchEntry(e))).toBe(true);
  });

  it('a container that stops while its logs fail is no longer retried, and shows stopped', async () => {
    const id = docker.add('nolog');
    docker.failLogs(id, { status: 501, message: 'configured logging driver does not support reading' });
    const { r } = start();
    await waitFor(() => logsRequests().length >= 2, 5000, 'two logs requests');
    docker.stop(id);
    await waitFor(() => r.status().containers[0]?.state === 'stopped', 5000, 'stopped');
    const n = logsRequests().length;
    await new Promise((res) => setTimeout(res, 300));
    expect(logsRequests().length).toBeLessThanOrEqual(n + 1); // at most the one in flight
    expect(r.status()).toMatchObject({ state: 'waiting', last_error: null });
  });
});
