// Small helpers: option parsing, command templates with {placeholders}, child processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';

import { UsageError } from '../common/errors.js';
import { unknownOptionText } from '../common/cli-args.js';

export { UsageError };

export interface ParsedArgs {
  values: Map<string, string>;
  flags: Set<string>;
  positional: string[];
}

/** --name value / --name=value / --flag. `known` lists value options; `flags` boolean ones. */
export function parseArgs(argv: readonly string[], known: readonly string[], flags: readonly string[]): ParsedArgs {
  const out: ParsedArgs = { values: new Map(), flags: new Set(), positional: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('--')) {
      out.positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (flags.includes(name)) {
      out.flags.add(name);
      continue;
    }
    if (!known.includes(name)) throw new UsageError(unknownOptionText(`--${name}`, [...known, ...flags]));
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    out.values.set(name, value);
  }
  return out;
}

export function intOption(p: ParsedArgs, name: string, min = 0): number | undefined {
  const v = p.values.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min} (got ${JSON.stringify(v)})`);
  return n;
}

/** Quote a value for a POSIX shell. */
export function shellQuote(v: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/** Replace {name} placeholders with shell-quoted values. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (name in values ? shellQuote(values[name] as string) : whole));
}

export function templateHas(template: string, name: string): boolean {
  return template.includes(`{${name}}`);
}

export interface Spawned {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL the whole process group. */
  kill(signal?: NodeJS.Signals): void;
}

/** Every process group spawnShell started that has not exited (killed when the runner exits early). */
const live = new Set<Spawned>();

/** SIGKILLs every process group still running (the runner is about to exit). */
export function killAllSpawned(): void {
  for (const s of live) s.kill('SIGKILL');
}

/** Runs a shell command line in its own process group (so kill reaches the agent behind the shell). */
export function spawnShell(command: string, env: Record<string, string> = {}): Spawned {
  const child = spawn(command, { shell: true, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const spawned: Spawned = {
    child,
    output: () => out,
    exited,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        try {
          child.kill(signal);
        } catch {
          // already gone
        }
      }
    },
  };
  live.add(spawned);
  void exited.then(() => live.delete(spawned));
  return spawned;
}

/** Runs a command to completion (or kills it after timeoutMs). */
export async function runShell(command: string, timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string; timedOut: boolean }> {
  const s = spawnShell(command);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    s.kill('SIGKILL');
  }, timeoutMs);
  const r = await s.exited;
  clearTimeout(timer);
  return { ...r, output: s.output(), timedOut };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A random token of the contract's shape (base64url, 43 chars). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Resolves with the value, or `fallback` after ms. */
export async function within<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const r = await Promise.race([p, new Promise<F>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]);
  clearTimeout(timer);
  return r;
}

export function lastLines(text: string, n = 5): string {
  return text.trim().split('\n').slice(-n).join(' | ');
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost: the hosts plain ws:// may reach (DECISIONS K3). */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/**
 * The server URL the suite may use, or a message: wss:// anywhere, ws:// only to a loopback
 * host (seed 2) — the suite sends real enrollment tokens, which ws:// would carry in clear.
 */
export function checkTargetUrl(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `--url must be a ws:// or wss:// URL (got ${url})`;
  }
  if (u.protocol === 'wss:') return null;
  if (u.protocol !== 'ws:') return `--url must be a ws:// or wss:// URL (got ${url})`;
  if (!isLoopbackHostname(u.hostname)) {
    return `--url ${url} is unencrypted ws:// to a non-loopback host: ws:// is allowed only to loopback (127.0.0.0/8, ::1, localhost); use wss:// (NODE_EXTRA_CA_CERTS=FILE for a private CA)`;
  }
  return null;
}
