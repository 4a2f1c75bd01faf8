import { randomUUID } from 'node:crypto';
import { afterAll, afterEach } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type AgentOptions } from '../../../agent/agent.js';
import type { NewLogEntry } from '../../../agent/buffer/entry.js';
import { createCapturingLogger } from '../../../agent/log.js';
import { writeToken } from '../../../agent/token-store.js';

export const TOKEN = 'tok_' + 'A'.repeat(40);
export const ROTATED = 'rot_' + 'B'.repeat(40);

export const dirs: string[] = [];
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'cortex-agent-'));
  dirs.push(d);
  return d;
}
export function cleanupDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A self-signed certificate (openssl) for `name`, an IP address or a host name, in a temp folder. */
export function selfSignedCert(name = '127.0.0.1'): { cert: string; key: string; certFile: string } {
  const dir = tempDir();
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const san = /^[\d.]+$/.test(name) ? `IP:${name}` : `DNS:${name}`;
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', `/CN=${name}`, '-addext', `subjectAltName=${san}`], { stdio: 'ignore' });
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile };
}

export interface Harness {
  agent: Agent;
  dir: string;
  hostId: string;
  logs: ReturnType<typeof createCapturingLogger>;
}

export async function makeAgent(url: string, opts: Partial<AgentOptions> = {}, dir = tempDir()): Promise<Harness> {
  await writeToken(dir, TOKEN);
  const logs = createCapturingLogger('debug');
  const hostId = opts.hostId ?? randomUUID();
  const agent = new Agent({
    stateDir: dir,
    serverUrl: url,
    hostId,
    allowInsecure: true,
    logger: logs.logger,
    backoff: { baseMs: 20, capMs: 200, random: () => 0.5 },
    heartbeatIntervalMs: 60_000,
    metricsIntervalMs: 0,
    helloTimeoutMs: 2000,
    stopFlushMs: 500,
    ...opts,
  });
  return { agent, dir, hostId, logs };
}

export function entries(n: number, prefix = 'm', size = 0): NewLogEntry[] {
  const pad = size > 0 ? 'x'.repeat(size) : '';
  const ts = new Date().toISOString();
  return Array.from({ length: n }, (_, i) => ({ ts, severity: 'info' as const, message: `${prefix}${i}${pad}`, source: 'custom:test' }));
}

/**
 * The agents and fake servers a test file starts: each test's are stopped after it, and the
 * temporary state dirs are removed after the file. Call once at the top of the file.
 */
export function stopAfterEach(): { agents: Agent[]; servers: { close(): Promise<void> }[] } {
  const agents: Agent[] = [];
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const a of agents.splice(0)) await a.stop();
    for (const s of servers.splice(0)) await s.close();
  });
  afterAll(() => cleanupDirs());
  return { agents, servers };
}
