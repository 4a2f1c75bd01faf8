// End to end with the compiled programs only (issue 6): the reference server
// (dist/server/cli.js serve) and the reference agent CLI (dist/agent/cli.js enroll/run)
// as child processes. The host's config (agent config --set) tails a file; lines appended
// across a rename rotation arrive in the server's `logs` table exactly once; status shows
// the source; one probe runs through the admin API (probe CLI) and its ProbeOutput is
// valid; SIGTERM stops the agent with final_seq and the server with a drain.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateFsDiskUsageOutput, validateProbeRequestResult, type AgentConfig } from '@cortex/agent-protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  AGENT_CLI,
  ROOT,
  SERVER_CLI,
  assertNoTokenLeaks,
  captured,
  cleanupTempDirs,
  cliSync,
  enroll,
  exitOf,
  issueAgent,
  openDbReadOnly,
  requireDist,
  startServer,
  tempDir,
  until,
  type ServerProc,
} from '../support/procs.js';

const children: ChildProcess[] = [];
let server: ServerProc | null = null;

beforeAll(() => requireDist());
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (server) await server.kill();
  cleanupTempDirs();
});

function messageCounts(db: string, hostId: string): Map<string, number> {
  const r = openDbReadOnly(db);
  try {
    const rows = r.prepare('SELECT message, COUNT(*) AS n FROM logs WHERE host_id = ? GROUP BY message').all(hostId) as { message: string; n: number }[];
    return new Map(rows.map((x) => [x.message, Number(x.n)]));
  } finally {
    r.close();
  }
}

interface StatusJson {
  state: string;
  acked_seq: number;
  next_seq: number;
  sources: { kind: string; path: string | null; name: string | null; position: { offset?: number } | null; last_error: string | null }[];
}

function agentStatus(stateDir: string): StatusJson {
  const r = cliSync(AGENT_CLI, ['status', '--state-dir', stateDir, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as StatusJson;
}

it('file source → reference agent → reference server: every line exactly once across a rename rotation; a probe through the admin API', async () => {
  const dir = tempDir('cortex-e2e-');
  const db = join(dir, 'server.db');
  const logPath = join(dir, 'app.log');
  const stateDir = join(dir, 'agent');
  writeFileSync(logPath, '');

  server = await startServer(db);
  const x = issueAgent(db, 'e2e');
  const config: AgentConfig = {
    heartbeat_interval_secs: 30,
    max_batch_entries: 1000,
    flush_interval_ms: 100,
    metrics_interval_secs: 60,
    probe_concurrency: 2,
    log_sources: [{ kind: 'file', path: logPath, labels: { env: 'e2e' } }],
  };
  const set = cliSync(SERVER_CLI, ['agent', 'config', x.host_id, '--set', JSON.stringify(config), '--db', db]);
  expect(set.code, set.stderr).toBe(0);

  await enroll(server.url, x, stateDir);
  const agent = spawn(process.execPath, [AGENT_CLI, 'run', '--state-dir', stateDir, '--allow-insecure', '--source-poll-ms', '50'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(agent);
  let agentErr = '';
  agent.stderr!.on('data', (d: Buffer) => (agentErr += d.toString()));
  agent.stdout!.on('data', (d: Buffer) => captured.push(d.toString()));
  const agentExit = exitOf(agent);

  // running, connected, and the configured file source is in status
  await until(
    'agent Active with the file source',
    () => {
      const s = agentStatus(stateDir);
      return s.state === 'Active' && s.sources.some((src) => src.kind === 'file' && src.path === logPath);
    },
    20_000,
    100,
  );

  // lines 1..150 with a rename rotation after 80 (a few lines still land in the renamed file)
  const line = (i: number) => `e2e line ${i}`;
  for (let i = 1; i <= 60; i++) appendFileSync(logPath, `${line(i)}\n`);
  await new Promise((r) => setTimeout(r, 150));
  for (let i = 61; i <= 80; i++) appendFileSync(logPath, `${line(i)}\n`);
  renameSync(logPath, `${logPath}.1`);
  for (let i = 81; i <= 85; i++) appendFileSync(`${logPath}.1`, `${line(i)}\n`); // the writer has not reopened yet
  for (let i = 86; i <= 150; i++) appendFileSync(logPath, `${line(i)}\n`);
  const N = 150;

  const counts = await until(
    'all lines in logs',
    () => {
      const c = messageCounts(db, x.host_id);
      return c.size >= N ? c : undefined;
    },
    30_000,
    100,
  );
  // settle a moment: nothing arrives twice later
  await new Promise((r) => setTimeout(r, 500));
  const final = messageCounts(db, x.host_id);
  expect(final.size).toBe(N);
  for (let i = 1; i <= N; i++) expect(final.get(line(i)), line(i)).toBe(1);
  expect(counts.size).toBe(N);

  // agent tail --json: the rows, with the source's labels in metadata
  const tail = cliSync(SERVER_CLI, ['agent', 'tail', x.host_id, '-n', '1000', '--json', '--db', db]);
  expect(tail.code, tail.stderr).toBe(0);
  const rows = JSON.parse(tail.stdout) as { message: string; source: string; metadata?: { labels?: Record<string, string> } | null }[];
  expect(rows).toHaveLength(N);
  expect(rows.map((r) => r.message).sort()).toEqual(Array.from({ length: N }, (_, i) => line(i + 1)).sort());
  for (const r of rows) {
    expect(r.source).toBe(`file:${logPath}`);
    expect(r.metadata?.labels).toEqual({ env: 'e2e' });
  }

  // status --json: per-source kind, path, position, last_error; everything acked
  const st = await until(
    'everything acked in status',
    () => {
      const s = agentStatus(stateDir);
      return s.acked_seq === s.next_seq - 1 && s.acked_seq >= N ? s : undefined;
    },
    10_000,
    100,
  );
  const src = st.sources.find((s) => s.kind === 'file' && s.path === logPath)!;
  expect(src).toBeTruthy();
  expect(src.last_error).toBeNull();
  expect(src.position?.offset).toBeGreaterThan(0);

  // one probe through the admin API
  const probe = cliSync(SERVER_CLI, ['probe', x.host_id, 'fs.disk_usage', '--args', '{"path":"/"}', '--url', server.http]);
  expect(probe.code, probe.stderr).toBe(0);
  const out = JSON.parse(probe.stdout) as { output: unknown };
  expect(validateProbeRequestResult(out)).toBe(true);
  expect(validateFsDiskUsageOutput(out.output)).toBe(true);
  // a probe the agent does not have: refused by the server from supported_probes (-32010)
  const unknown = cliSync(SERVER_CLI, ['probe', x.host_id, 'no.such_probe', '--url', server.http]);
  expect(unknown.code).toBe(1);
  expect(unknown.stdout).toContain('-32010');

  // clean stop: agent SIGTERM → close reason final_seq=<acked>; server SIGTERM → exit 0
  agent.kill('SIGTERM');
  expect(await agentExit, agentErr).toBe(0);
  const reason = await until(
    'disconnect recorded',
    () => {
      const r = openDbReadOnly(db);
      try {
        const row = r.prepare('SELECT last_disconnect_reason AS reason FROM agents WHERE host_id = ?').get(x.host_id) as { reason: string | null } | undefined;
        return row?.reason ?? undefined;
      } finally {
        r.close();
      }
    },
    10_000,
    100,
  );
  expect(reason).toBe(`1000 final_seq=${st.acked_seq}`);
  expect(await server.stop()).toBe(0);
  server = null;
  captured.push(agentErr);
  assertNoTokenLeaks();
}, 90_000);
