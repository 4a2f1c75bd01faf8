// Shared helpers of the conformance tests: build, run the compiled runner, spawn the
// compiled reference server on a temp database and issue hosts.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AGENT_CLI_BUNDLE, SERVER_CLI_BUNDLE } from '../support/cli-bundles.js';
import { serve } from '../server/spawn.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const RUNNER = join(ROOT, 'dist/conformance/cli.js');
// the compiled CLIs, bundled once per run (test/support/cli-bundles.ts)
export const SERVER_CLI = SERVER_CLI_BUNDLE;
export const AGENT_CLI = AGENT_CLI_BUNDLE;
export const MINIMAL_AGENT = join(ROOT, 'examples/minimal-agent/agent.mjs');

/** Builds the runner (incremental). The server and agent are built by `npm test` / `npm run build`. */
export function buildConformance(): void {
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-b', join(ROOT, 'conformance')], { cwd: ROOT, stdio: 'inherit' });
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the compiled runner to completion (asynchronously, so servers in this process keep serving). */
export function runConformance(args: string[], timeoutMs = 90_000): Promise<RunResult> {
  return new Promise((resolveP, reject) => {
    const child = spawn(process.execPath, [RUNNER, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`runner timed out; stdout so far:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolveP({ code, stdout, stderr });
    });
  });
}

export interface JsonReport {
  ok: boolean;
  error?: string;
  passed: number;
  failed: number;
  skipped: number;
  cases: { id: string; status: 'PASS' | 'FAIL' | 'SKIP'; expected: string; seen: string }[];
}

export function parseJson(r: RunResult): JsonReport {
  const lines = r.stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`--json must print one line; got:\n${r.stdout}\nstderr:\n${r.stderr}`);
  return JSON.parse(lines[0] as string) as JsonReport;
}

export function statusOf(report: JsonReport, id: string): string | undefined {
  return report.cases.find((c) => c.id === id)?.status;
}

/** "id: expected …; seen …" lines of the failed cases, for assertion messages. */
export function failures(report: JsonReport): string[] {
  return report.cases.filter((c) => c.status === 'FAIL').map((c) => `${c.id}: expected ${c.expected}; seen ${c.seen}`);
}

export interface Host {
  host_id: string;
  token: string;
}

export function issueHost(db: string, name: string): Host {
  const r = spawnSync(process.execPath, [SERVER_CLI, 'agent', 'issue', '--host', name, '--json', '--db', db], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`agent issue failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Host;
}

export interface ServeHandle {
  child: ChildProcess;
  url: string;
  httpUrl: string;
  dir: string;
  db: string;
  stop(): Promise<void>;
}

/** Spawns `serve` on 127.0.0.1:0 with a temp database and waits for its "listening" log line. */
export async function serveReference(args: string[]): Promise<ServeHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'cortex-conformance-test-'));
  const db = join(dir, 'cortex.db');
  // The runner sends many hellos with wrong tokens on purpose: the failed-hello throttle
  // (DECISIONS H7, tested in test/hostile/trust-edges.test.ts) is off for it.
  const s = await serve(['--db', db, '--failed-hellos-before-throttle', '0', ...args]);
  return {
    child: s.child,
    url: s.url,
    httpUrl: `http://127.0.0.1:${s.port}`,
    dir,
    db,
    async stop() {
      s.child.kill('SIGKILL');
      await s.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Does the reference server CLI know this admin command yet? (issue 4 lands it) */
export function serverHasCommand(...args: string[]): boolean {
  const r = spawnSync(process.execPath, [SERVER_CLI, ...args, '--help'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0;
}

export const REFERENCE_WITH_FAULTS = join(ROOT, 'test/conformance/fixtures/reference-server.mjs');
export const METRICS_COUNT = join(ROOT, 'test/conformance/fixtures/metrics-count.mjs');

export interface FaultyServeHandle extends ServeHandle {
  /** The file whose content injects storage faults ("break", "stall"). */
  faultFile: string;
  /** The command line that starts this server again (same database, port, settings). */
  restartCommand: string;
}

/**
 * Starts the compiled reference server through test/conformance/fixtures/reference-server.mjs
 * (the same settings, startServer and SIGTERM drain as `serve`, plus on-demand storage faults)
 * on a temp database and a free port; resolves once it listens.
 */
export async function serveWithFaults(config: Record<string, unknown>, queueEntries: number): Promise<FaultyServeHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'cortex-conformance-faulty-'));
  const db = join(dir, 'cortex.db');
  const faultFile = join(dir, 'storage-fault');
  const env = { CORTEX_TEST_CONFIG: JSON.stringify(config), CORTEX_TEST_QUEUE_ENTRIES: String(queueEntries) };
  const start = (listen: string) => spawn(process.execPath, [REFERENCE_WITH_FAULTS, faultFile, '--db', db, '--listen', listen], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const child = start('127.0.0.1:0');
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const url = await new Promise<string>((resolveP, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      for (const line of err.split('\n').slice(0, -1)) {
        if (!line.startsWith('{')) continue;
        const rec = JSON.parse(line) as { msg?: string; url?: string };
        if (rec.msg === 'listening' && rec.url) return resolveP(rec.url);
      }
    });
    void exited.then(() => reject(new Error(`reference-server.mjs exited before listening: ${err}`)));
  });
  child.stderr!.resume();
  const port = Number(new URL(url.replace(/^ws/, 'http')).port);
  const envPrefix = Object.entries(env).map(([k, v]) => `${k}=${shq(v)}`).join(' ');
  return {
    child,
    url,
    httpUrl: `http://127.0.0.1:${port}`,
    dir,
    db,
    faultFile,
    restartCommand: `${envPrefix} ${shq(process.execPath)} ${shq(REFERENCE_WITH_FAULTS)} ${shq(faultFile)} --db ${shq(db)} --listen 127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Quote for a POSIX shell. */
export function shq(v: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}
