// Helpers for the operator-experience tests: the compiled CLIs run as child processes
// in a folder of the test's choosing (so a stray ./data/cortex.db would show).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { CLI, ROOT } from '../server/spawn.js';
import { openStorage } from '../../server/db/open.js';
import { AGENT_CLI_BUNDLE } from '../support/cli-bundles.js';
import { cliAsync } from '../support/scli-pool.js';

export { CLI, ROOT };
export const AGENT_CLI = AGENT_CLI_BUNDLE;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function tmp(prefix = 'cortex-opx-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function server(args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; input?: string } = {}): Run {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: options.cwd ?? ROOT, encoding: 'utf8', env: env as NodeJS.ProcessEnv, input: options.input ?? '', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `agent issue --host NAME --json` on a database it creates. */
export function issue(db: string, host: string, extra: string[] = []): { host_id: string; hostname: string; token: string } {
  const r = server(['agent', 'issue', '--host', host, '--json', '--db', db, ...extra]);
  if (r.code !== 0) throw new Error(`agent issue failed (${r.code}): ${r.stderr}`);
  return JSON.parse(r.stdout) as { host_id: string; hostname: string; token: string };
}

type AsyncOptions = { cwd?: string; env?: Record<string, string | undefined> };

/** Like server(), without blocking the event loop, through scli-pool (at most four at once): independent runs of a test overlap. */
export function serverRun(args: string[], options: AsyncOptions = {}): Promise<Run> {
  return cliAsync(args, options);
}

/** Like serverRun(), started at once (outside the pool): for a run whose duration is asserted, or one that waits on another. */
export function serverAsync(args: string[], options: AsyncOptions = {}): Promise<Run> {
  return cliAsync(args, { ...options, now: true });
}

/** Rows `line FROM` … `line TO` (seq FROM … TO) committed for a host through --db (the database opened for it and closed again). */
export async function commitLines(db: string, hostId: string, from: number, to: number): Promise<void> {
  const s = await openStorage(db);
  try {
    const now = new Date().toISOString();
    await s.ingest.commitBatch(hostId, Array.from({ length: to - from + 1 }, (_, i) => ({ seq: from + i, ts: now, severity: 'info', message: `line ${from + i}`, source: 'custom:t' })), now);
  } finally {
    await s.close();
  }
}

/** A compiled CLI running in the background: what it wrote so far, and its exit status. */
export function background(file: string, args: string[]): { child: ReturnType<typeof spawn>; out: () => string; err: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [file, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}
