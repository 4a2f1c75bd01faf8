// `cortex-agent enroll` into a state folder already in use: one enrolled as another host is
// refused unless --replace, one a running agent holds is refused; the token is not sent either
// way (DECISIONS I18).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '@cortex/agent-protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableBuffer } from '../../agent/buffer/buffer.js';
import { EnrollError, enroll } from '../../agent/enroll.js';
import { createCapturingLogger } from '../../agent/log.js';
import { RUN_LOCK_FILE } from '../../agent/run-lock.js';
import { ROTATED, TOKEN, cleanupDirs, tempDir } from './helpers/agent-harness.js';
import { FakeServer, rpcError } from './helpers/fake-server.js';
import { AGENT_CLI_BUNDLE } from '../support/cli-bundles.js';

const servers: FakeServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  cleanupDirs();
});

async function fake(): Promise<FakeServer> {
  const s = await FakeServer.start();
  s.rotatedToken = ROTATED;
  servers.push(s);
  return s;
}

/** The CLI, asynchronously (the fake server answers in this process). */
function cli(...args: string[]): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [AGENT_CLI_BUNDLE, 'enroll', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

const enrollInto = (s: FakeServer, dir: string, hostId: string, replace = false) =>
  enroll({ serverUrl: s.url, token: TOKEN, hostId, stateDir: dir, allowInsecure: true, caFile: null, logger: createCapturingLogger('debug').logger, replace });

/** The buffer's figures in `folder` (opened and closed again). */
function bufferIn(folder: string): ReturnType<DurableBuffer['stats']> {
  const b = DurableBuffer.open(join(folder, 'buffer.db'));
  try {
    return b.stats();
  } finally {
    b.close();
  }
}

/** `n` entries appended to the buffer in `folder`. */
function appendIn(folder: string, n: number, tag: string): void {
  const b = DurableBuffer.open(join(folder, 'buffer.db'));
  b.append(Array.from({ length: n }, (_, i) => ({ ts: '2026-12-05T10:00:00.000Z', severity: 'info' as const, message: `${tag} ${i}`, source: 'custom:t' })));
  b.close();
}

/** A folder enrolled as host X, with `unsent` entries in its buffer. */
async function enrolledAs(s: FakeServer, unsent: number): Promise<{ dir: string; x: string }> {
  const dir = tempDir();
  const x = randomUUID();
  await enrollInto(s, dir, x);
  if (unsent > 0) appendIn(dir, unsent, 'from x');
  return { dir, x };
}

describe('enroll into a state folder in use (DECISIONS I18)', () => {
  it("a folder enrolled as another host is refused, naming it and its unsent entries; nothing written, no hello", async () => {
    const s = await fake();
    const { dir, x } = await enrolledAs(s, 5);
    const hellos = s.sessions.length;
    const y = randomUUID();
    const refused = enrollInto(s, dir, y);
    await expect(refused).rejects.toThrow(EnrollError);
    await expect(refused).rejects.toMatchObject({ code: 'enrolled_as_other' });
    await expect(refused).rejects.toThrow(`is enrolled as host ${x} (5 log entries not yet sent): enrolling it as ${y} would send them`);
    expect(s.sessions.length).toBe(hellos);
    // with nothing unsent there is no "them" to send
    const empty = await enrolledAs(s, 0);
    await expect(enrollInto(s, empty.dir, y)).rejects.toThrow(`is enrolled as host ${empty.x}: enrolling it as ${y} would read the log files on from where ${empty.x} stopped`);
    expect(readFileSync(join(dir, 'host_id'), 'utf8').trim()).toBe(x);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    expect(bufferIn(dir).queueDepth).toBe(5);
  });

  it('--replace moves the other host\'s files aside and starts the folder afresh; the same host enrolls again as before', async () => {
    const s = await fake();
    const { dir, x } = await enrolledAs(s, 5);
    const y = randomUUID();
    const r = await enrollInto(s, dir, y, true);
    expect(r.replaced?.host_id).toBe(x);
    expect(r.replaced?.moved_to).toMatch(new RegExp(`/replaced-${x}-\\d{4}-`));
    expect(s.current!.hello).toMatchObject({ host_id: y, resume_from_seq: 0 });
    expect(readFileSync(join(dir, 'host_id'), 'utf8').trim()).toBe(y);
    expect(bufferIn(dir)).toMatchObject({ nextSeq: 1, queueDepth: 0 });
    const aside = r.replaced!.moved_to;
    expect(readdirSync(aside).sort()).toEqual(expect.arrayContaining(['buffer.db', 'host_id', 'token']));
    expect(readFileSync(join(aside, 'host_id'), 'utf8').trim()).toBe(x);
    expect(bufferIn(aside).queueDepth).toBe(5);
    // the same host again (a lost token: agent issue --host-id): no refusal, its buffer kept
    appendIn(dir, 1, 'from y');
    await enrollInto(s, dir, y);
    expect(bufferIn(dir).queueDepth).toBe(1);
  });

  it('--replace whose enrollment the server refuses puts the other host\'s files back', async () => {
    const s = await fake();
    const { dir, x } = await enrolledAs(s, 3);
    s.scriptNextHello(() => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed');
    });
    await expect(enrollInto(s, dir, randomUUID(), true)).rejects.toThrow(EnrollError);
    expect(readFileSync(join(dir, 'host_id'), 'utf8').trim()).toBe(x);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(ROTATED);
    expect(readdirSync(dir).filter((n) => n.startsWith('replaced-'))).toEqual([]);
    expect(bufferIn(dir).queueDepth).toBe(3);
  });

  it('a folder a running agent holds is refused, naming its pid; the CLI exits 1 (E_RUN_LOCK) and 2 for another host (E_STATE_DIR_ENROLLED)', async () => {
    const s = await fake();
    const { dir, x } = await enrolledAs(s, 0);
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, RUN_LOCK_FILE), JSON.stringify({ pid: other.pid, host: (await import('node:os')).hostname() }));
      const hellos = s.sessions.length;
      await expect(enrollInto(s, dir, x)).rejects.toMatchObject({ code: 'agent_running', message: expect.stringContaining(`a cortex-agent run (pid ${other.pid}) is using the state folder`) });
      expect(s.sessions.length).toBe(hellos);
      const running = await cli('--server', s.url, '--token', TOKEN, '--host-id', x, '--state-dir', dir, '--allow-insecure');
      expect(running.status).toBe(1);
      expect(running.stderr).toContain('error[E_RUN_LOCK]');
      expect(running.stderr).toContain('(the token was not sent and is still good)');
    } finally {
      other.kill();
    }
    const y = randomUUID();
    const r = await cli('--server', s.url, '--token', TOKEN, '--host-id', y, '--state-dir', dir, '--allow-insecure');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`error[E_STATE_DIR_ENROLLED]: the state folder ${dir} is enrolled as host ${x}`);
    expect(r.stderr).toContain('add --replace');
    expect(r.stderr).not.toContain(TOKEN);
    const replaced = await cli('--server', s.url, '--token', TOKEN, '--host-id', y, '--state-dir', dir, '--allow-insecure', '--replace');
    expect(replaced.status).toBe(0);
    expect(replaced.stderr).toContain(`note: the folder was enrolled as host ${x}: its files (buffer, token, positions) were moved to ${dir}/replaced-${x}-`);
    expect(existsSync(join(dir, 'token'))).toBe(true);
  });
});

describe("enroll keeps agent.json's own settings, and puts the file back when it fails (DECISIONS I22)", () => {
  const local = { buffer_hard_cap_bytes: 1024 ** 3, probe_file_tail_paths: ['/var/log', '/srv/app/logs'], from_a_newer_agent: { x: 1 } };
  const withLocal = (dir: string) => {
    const path = join(dir, 'agent.json');
    writeFileSync(path, JSON.stringify({ ...(JSON.parse(readFileSync(path, 'utf8')) as object), ...local }, null, 2));
    return readFileSync(path, 'utf8');
  };

  it('the same host enrolled again (a new token): the caps, file.tail paths and unknown keys stay; the server URLs are the new ones', async () => {
    const s = await fake();
    const { dir, x } = await enrolledAs(s, 0);
    withLocal(dir);
    const s2 = await fake();
    const r = await enroll({ serverUrl: s2.url, token: TOKEN, hostId: x, stateDir: dir, allowInsecure: true, caFile: null, logger: createCapturingLogger('debug').logger });
    expect(r.kept_settings).toEqual(['buffer_hard_cap_bytes', 'probe_file_tail_paths', 'from_a_newer_agent']);
    expect(JSON.parse(readFileSync(join(dir, 'agent.json'), 'utf8'))).toEqual({ server_url: s2.url, allow_insecure: true, ca_file: null, ...local });
    // and through the CLI, which says what it kept
    const again = await cli('--server', s.url, '--token', TOKEN, '--host-id', x, '--state-dir', dir, '--allow-insecure');
    expect(again.status).toBe(0);
    expect(again.stderr).toContain(`note: kept from ${dir}/agent.json: buffer_hard_cap_bytes, probe_file_tail_paths, from_a_newer_agent`);
    expect(JSON.parse(readFileSync(join(dir, 'agent.json'), 'utf8'))).toMatchObject({ server_url: s.url, ...local });
  });

  it('a failed enrollment (refused token, or a server not reached) leaves agent.json as it was', async () => {
    const s = await fake();
    const { dir, x } = await enrolledAs(s, 0);
    const text = withLocal(dir);
    s.scriptNextHello(() => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed');
    });
    const other = await fake();
    other.hello = () => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed'); // refused by every server: another one's refusal alone is passed over (F12)
    };
    await expect(
      enroll({ serverUrl: s.url, serverUrls: [s.url, other.url], token: TOKEN, hostId: x, stateDir: dir, allowInsecure: true, caFile: null, logger: createCapturingLogger('debug').logger }),
    ).rejects.toThrow(EnrollError);
    expect(readFileSync(join(dir, 'agent.json'), 'utf8')).toBe(text);
    await other.close();
    const typo = await cli('--server', other.url, '--token', TOKEN, '--host-id', x, '--state-dir', dir, '--allow-insecure');
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain('error[E_CONNECT]');
    expect(readFileSync(join(dir, 'agent.json'), 'utf8')).toBe(text);
  });

  it('a failed enrollment into a fresh folder leaves nothing behind (no buffer.db, no reserve, no folder); a successful one leaves buffer.db 0600 (H49)', async () => {
    const s = await fake();
    const parent = tempDir();
    const fresh = join(parent, 'state');
    s.scriptNextHello(() => {
      throw rpcError(ErrorCode.AuthFailed, 'AuthFailed');
    });
    await expect(enrollInto(s, fresh, randomUUID())).rejects.toThrow(EnrollError);
    expect(existsSync(fresh)).toBe(false);
    // a folder that was there stays, emptied of what enroll made
    mkdirSync(fresh);
    const unreachable = await fake();
    const url = unreachable.url;
    await unreachable.close();
    await expect(enroll({ serverUrl: url, token: TOKEN, hostId: randomUUID(), stateDir: fresh, allowInsecure: true, caFile: null, logger: createCapturingLogger('debug').logger })).rejects.toThrow(EnrollError);
    expect(readdirSync(fresh)).toEqual([]);
    const old = process.umask(0o022);
    try {
      await enrollInto(s, fresh, randomUUID());
    } finally {
      process.umask(old);
    }
    expect(statSync(join(fresh, 'buffer.db')).mode & 0o777).toBe(0o600);
  });

  it('an agent.json that is refused is written afresh, and enroll says why', async () => {
    const s = await fake();
    const { dir, x } = await enrolledAs(s, 0);
    writeFileSync(join(dir, 'agent.json'), JSON.stringify({ server_url: s.url, buffer_soft_cap_bytes: 2 * 1024 ** 3 }));
    const r = await cli('--server', s.url, '--token', TOKEN, '--host-id', x, '--state-dir', dir, '--allow-insecure');
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(
      `note: ${dir}/agent.json was written afresh: the one there was refused (buffer_soft_cap_bytes (2147483648) must not exceed buffer_hard_cap_bytes (536870912, the default)`,
    );
    expect(JSON.parse(readFileSync(join(dir, 'agent.json'), 'utf8'))).toEqual({ server_url: s.url, allow_insecure: true, ca_file: null });
  });
});
