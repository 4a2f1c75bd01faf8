// Real processes for the fault, hostile and soak suites: the compiled server CLI, the
// compiled agent CLI and test/support/agent-runner.mjs (the agent library in its own
// process). Every byte they print is kept in `captured` so a suite can check that no
// token ever appears in any output.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { AGENT_CLI_BUNDLE, SERVER_CLI_BUNDLE } from './cli-bundles.js';
import { cliAsync } from './scli-pool.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// the compiled CLIs, bundled once per run (test/support/cli-bundles.ts)
export const SERVER_CLI = SERVER_CLI_BUNDLE;
export const AGENT_CLI = AGENT_CLI_BUNDLE;
export const AGENT_RUNNER = join(ROOT, 'test/support/agent-runner.mjs');
export const FULL = process.env['FAULTS_FULL'] === '1';

/** Everything every process printed (and anything else a test adds), for token checks. */
export const captured: string[] = [];
/** Every token a suite handled. */
export const tokens = new Set<string>();

export function requireDist(): void {
  for (const f of [SERVER_CLI, AGENT_CLI, join(ROOT, 'dist/agent/index.js')]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run the tests with vitest (its global setup, test/support/global-setup.ts, builds dist/ and bundles the CLIs)`);
  }
}

const dirs: string[] = [];
export function tempDir(prefix = 'cortex-faults-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}
export function cleanupTempDirs(): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** Throws naming the first token found in any captured output. */
export function assertNoTokenLeaks(extra: string[] = []): { tokens: number; bytes: number } {
  const all = [...captured, ...extra];
  let bytes = 0;
  for (const text of all) {
    bytes += text.length;
    for (const t of tokens) {
      if (t.length >= 16 && text.includes(t)) throw new Error(`a token appeared in captured output: …${text.slice(Math.max(0, text.indexOf(t) - 200), text.indexOf(t) + 40)}`);
    }
  }
  return { tokens: tokens.size, bytes };
}

/** `resultHasToken`: stdout is the command's result and carries a token by design (agent issue); not captured. */
export function cliSync(cli: string, args: string[], resultHasToken = false): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: ROOT, encoding: 'utf8' });
  captured.push(resultHasToken ? '' : (r.stdout ?? ''), r.stderr ?? '');
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface Issued {
  host_id: string;
  hostname: string;
  token: string;
}

/** What `agent issue --json` printed, its token remembered for the leak checks; throws if it failed. */
function issued(r: { code: number | null; stdout: string; stderr: string }, who: string[]): Issued {
  if (r.code !== 0) throw new Error(`agent issue ${who[0]} failed (${r.code}): ${r.stderr}`);
  const result = JSON.parse(r.stdout) as Issued;
  tokens.add(result.token);
  return result;
}

const issueArgs = (host: string | { hostId: string }) => (typeof host === 'string' ? ['--host', host] : ['--host-id', host.hostId]);

export function issueAgent(db: string, host: string): Issued {
  const who = issueArgs(host);
  return issued(cliSync(SERVER_CLI, ['agent', 'issue', ...who, '--json', '--db', db], true), who);
}

export function reissueAgent(db: string, hostId: string): Issued {
  const who = issueArgs({ hostId });
  return issued(cliSync(SERVER_CLI, ['agent', 'issue', ...who, '--json', '--db', db], true), who);
}

/**
 * issueAgent (`host`) or reissueAgent (`{ hostId }`) without blocking the event loop, so the
 * test process's own servers and timers go on meanwhile (at most four CLI children at once:
 * support/scli-pool.ts). stdout carries the token by design: only stderr is captured.
 */
export async function issueAgentAsync(db: string, host: string | { hostId: string }): Promise<Issued> {
  const who = issueArgs(host);
  const r = await cliAsync(['agent', 'issue', ...who, '--json', '--db', db], { script: SERVER_CLI });
  captured.push(r.stderr);
  return issued(r, who);
}

/** Enrolls with the real CLI; the rotated token it writes is added to `tokens`. */
export async function enroll(url: string, issued: Issued, stateDir: string): Promise<void> {
  const child = spawn(process.execPath, [AGENT_CLI, 'enroll', '--server', url, `--token=${issued.token}`, '--host-id', issued.host_id, '--state-dir', stateDir, '--allow-insecure', '--json'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = collect(child);
  const code = await exitOf(child);
  if (code !== 0) throw new Error(`enroll failed (${code}): ${out.stderr()}`);
  rememberStateToken(stateDir);
}

export function rememberStateToken(stateDir: string): void {
  const p = join(stateDir, 'token');
  if (existsSync(p)) {
    const t = readFileSync(p, 'utf8').trim();
    if (t) tokens.add(t);
  }
}

export function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

function collect(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  child.once('exit', () => captured.push(out, err));
  return { stdout: () => out, stderr: () => err };
}

/** VmRSS of a process in bytes (Linux /proc), 0 when gone. */
/**
 * The next stderr line of `child` for which `pred` holds: a JSON record parsed, any other line as
 * `{ line }` (a preload's own words). Rejects after `timeoutMs`.
 */
export function nextStderrLine(child: ChildProcess, pred: (rec: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((res, rej) => {
    let buf = '';
    const timer = setTimeout(() => {
      child.stderr!.off('data', on);
      rej(new Error(`no such stderr line in ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        let rec: Record<string, unknown>;
        try {
          rec = line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : { line };
        } catch {
          rec = { line };
        }
        if (pred(rec)) {
          clearTimeout(timer);
          child.stderr!.off('data', on);
          res(rec);
          return;
        }
      }
    };
    child.stderr!.on('data', on);
  });
}

export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export interface ServerProc {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  http: string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first log record (from now on) matching pred. */
  waitForLog(pred: (rec: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>>;
  /** SIGTERM, then SIGKILL after `ms`. */
  stop(ms?: number): Promise<number | null>;
  kill(): Promise<void>;
}

/**
 * Spawns `serve` on 127.0.0.1 (port 0 unless given) and resolves once its "listening"
 * log line names the URL.
 */
export function startServer(db: string, args: string[] = [], opts: { port?: number; timeoutMs?: number; clockSkewMs?: number } = {}): Promise<ServerProc> {
  // clockSkewMs: the server runs as on a machine whose clock is that far ahead (behind when negative)
  const skew = opts.clockSkewMs === undefined ? [] : ['--import', resolve(ROOT, 'test/support/skewed-clock.mjs')];
  const child = spawn(process.execPath, [...skew, SERVER_CLI, 'serve', '--listen', `127.0.0.1:${opts.port ?? 0}`, '--db', db, ...args], {
    cwd: ROOT,
    ...(opts.clockSkewMs === undefined ? {} : { env: { ...process.env, CORTEX_TEST_CLOCK_SKEW_MS: String(opts.clockSkewMs) } }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = collect(child);
  const exited = exitOf(child);
  return new Promise((resolveP, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not report listening in time: ${out.stderr()}`));
    }, opts.timeoutMs ?? 15_000);
    let seen = 0;
    const onData = () => {
      const text = out.stderr();
      const lines = text.split('\n');
      for (; seen < lines.length - 1; seen++) {
        const line = lines[seen]!;
        if (!line.startsWith('{')) continue;
        let rec: { msg?: string; url?: string };
        try {
          rec = JSON.parse(line) as typeof rec;
        } catch {
          continue;
        }
        if (rec.msg === 'listening' && rec.url) {
          clearTimeout(timer);
          child.stderr!.off('data', onData);
          const port = Number(new URL(rec.url.replace(/^ws/, 'http')).port);
          resolveP({
            child,
            pid: child.pid!,
            port,
            url: rec.url,
            http: `http://127.0.0.1:${port}`,
            stderr: out.stderr,
            exited,
            waitForLog(pred, timeoutMs) {
              // JSON records only: a line that is not one (a preload's words) is never offered
              const parsed = (rec: Record<string, unknown>) => !(Object.keys(rec).length === 1 && typeof rec['line'] === 'string');
              return nextStderrLine(child, (rec) => parsed(rec) && pred(rec), timeoutMs);
            },
            async stop(ms = 15_000) {
              if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
              child.kill('SIGTERM');
              const t = setTimeout(() => child.kill('SIGKILL'), ms);
              const code = await exited;
              clearTimeout(t);
              return code;
            },
            async kill() {
              if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
              await exited;
            },
          });
          return;
        }
      }
    };
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited ${code} before listening: ${out.stderr()}`));
    });
  });
}

export interface RunnerEvent {
  ev: string;
  [k: string]: unknown;
}

export interface AgentProc {
  child: ChildProcess;
  stateDir: string;
  events: RunnerEvent[];
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves with the first event (past or future) matching pred; rejects after timeoutMs or on exit. */
  waitFor(pred: (e: RunnerEvent) => boolean, timeoutMs: number): Promise<RunnerEvent>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface RunnerOptions {
  stateDir: string;
  /** Default: what enroll wrote to agent.json / host_id. */
  serverUrl?: string;
  hostId?: string;
  total?: number;
  rate?: number;
  chunk?: number;
  pingWatchdogMs?: number;
  backoffBaseMs?: number;
  backoffCapMs?: number;
  heartbeatIntervalMs?: number;
  requestTimeoutMs?: number;
  window?: number;
  sources?: boolean;
  pollMs?: number;
  logLevel?: string;
  maxAhead?: number;
  metricsIntervalMs?: number;
}

export function startAgentRunner(options: RunnerOptions): AgentProc {
  const child = spawn(process.execPath, [AGENT_RUNNER, JSON.stringify(options)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = collect(child);
  const events: RunnerEvent[] = [];
  const waiters: { pred: (e: RunnerEvent) => boolean; resolve: (e: RunnerEvent) => void }[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString();
    const lines = partial.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      let e: RunnerEvent;
      try {
        e = JSON.parse(line) as RunnerEvent;
      } catch {
        continue;
      }
      events.push(e);
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (waiters[i]!.pred(e)) {
          waiters[i]!.resolve(e);
          waiters.splice(i, 1);
        }
      }
    }
  });
  const exited = exitOf(child);
  return {
    child,
    stateDir: options.stateDir,
    events,
    stderr: out.stderr,
    exited,
    waitFor(pred, timeoutMs) {
      const found = events.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolveP, reject) => {
        const timer = setTimeout(() => reject(new Error(`agent runner: event not seen in ${timeoutMs} ms; last events ${JSON.stringify(events.slice(-3))}; stderr tail ${out.stderr().slice(-1500)}`)), timeoutMs);
        waiters.push({
          pred,
          resolve: (e) => {
            clearTimeout(timer);
            resolveP(e);
          },
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`agent runner exited ${code} while waiting; stderr tail ${out.stderr().slice(-1500)}`));
        });
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Read-only view of the server database. */
export function openDbReadOnly(path: string): Database.Database {
  return new Database(path, { readonly: true, fileMustExist: true });
}

export interface ExactlyOnce {
  rows: number;
  distinct: number;
  duplicates: number;
  missing: number;
  maxSeq: number;
  /** Rows whose message is not `gen <seq>` (generator streams only). */
  mismatched: number;
}

/** Checks that host_id has exactly the seqs 1..n in logs (and, for generator streams, message "gen <seq>"). */
export function checkExactlyOnce(dbPath: string, hostId: string, n: number, generator = true): ExactlyOnce {
  const db = openDbReadOnly(dbPath);
  try {
    const rows = db.prepare('SELECT seq, message FROM logs WHERE host_id = ? ORDER BY seq').all(hostId) as { seq: number | bigint; message: string }[];
    const seen = new Set<number>();
    let duplicates = 0;
    let mismatched = 0;
    let maxSeq = 0;
    for (const r of rows) {
      const s = Number(r.seq);
      if (seen.has(s)) duplicates++;
      seen.add(s);
      maxSeq = Math.max(maxSeq, s);
      if (generator && r.message !== `gen ${s}`) mismatched++;
    }
    let missing = 0;
    for (let s = 1; s <= n; s++) if (!seen.has(s)) missing++;
    // messages must be unique too (the same line stored under two seqs is a duplicate)
    if (generator) duplicates = Math.max(duplicates, rows.length - new Set(rows.map((r) => r.message)).size);
    return { rows: rows.length, distinct: seen.size, duplicates, missing, maxSeq, mismatched };
  } finally {
    db.close();
  }
}

/** Bounded poll for a condition that has no event (e.g. a database row). */
/**
 * Asserts that every host has exactly the seqs 1..n (rows, no duplicates, none missing,
 * generator messages matching; plus `extra`), and returns the totals for the figures.
 */
export function expectExactlyOnce(dbPath: string, hostIds: readonly string[], n: number, extra: Partial<ExactlyOnce> = {}): { lost: number; duplicates: number } {
  let lost = 0;
  let duplicates = 0;
  for (const host of hostIds) {
    const r = checkExactlyOnce(dbPath, host, n);
    lost += r.missing;
    duplicates += r.duplicates;
    // mismatched 0: seq k carries `gen k`, so no seq was assigned twice
    expect(r, `host ${host}`).toMatchObject({ rows: n, distinct: n, duplicates: 0, missing: 0, mismatched: 0, ...extra });
  }
  return { lost, duplicates };
}

export async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const maxPolls = Math.ceil(timeoutMs / Math.max(1, everyMs)) + 10;
  for (let i = 0; i < maxPolls * 4; i++) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

export async function healthz(http: string): Promise<number> {
  try {
    const r = await fetch(`${http}/healthz`, { signal: AbortSignal.timeout(5000) });
    await r.text();
    return r.status;
  } catch {
    return 0;
  }
}

/** Random integer in [a, b]. */
export function randInt(a: number, b: number, random: () => number = Math.random): number {
  return a + Math.floor(random() * (b - a + 1));
}

/**
 * For a follower that must show only rows stored after it started, when its start cannot be
 * seen from outside (`agent tail -n 0 --follow`): stores rows one at a time (`store(seq)` from
 * `firstSeq`) until `shown()` has output. Returns the seq after the last one stored.
 */
export async function storeUntilShown(what: string, shown: () => string, firstSeq: number, store: (seq: number) => Promise<unknown>): Promise<number> {
  let next = firstSeq;
  await until(
    what,
    async () => {
      if (shown() !== '') return true;
      await store(next);
      next++;
      return false;
    },
    15_000,
    200,
  );
  return next;
}

/** Waits until the agent of `stateDir` (its `status --json`) runs a file source of `path`: a config it was given is in force. */
export async function untilFileSourceRuns(stateDir: string, path: string): Promise<void> {
  // `agent status` in a child without blocking this process (a server or a browser page it
  // drives goes on answering meanwhile); each costs ~0.4 s of CPU, hence every 250 ms
  await until(
    'the agent runs the new file source',
    async () => {
      const s = await cliAsync(['status', '--state-dir', stateDir, '--json'], { script: AGENT_CLI });
      return ((JSON.parse(s.stdout || '{}') as { sources?: { path: string | null }[] }).sources ?? []).some((x) => x.path === path);
    },
    10_000,
    250,
  );
}
