// Shared helpers for the probe tests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { RpcError, type Validator } from '@cortex/agent-protocol';
import type { CommandResult, CommandRunner, ProbeDefinition, ProbeRunResult, ProbeContext } from '../../../agent/probes/index.js';

export const FIXTURES = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures');

export function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

/** Awaits a rejection and returns it as an RpcError (fails the test otherwise). */
export async function rpcError(p: Promise<unknown>): Promise<RpcError<any>> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(RpcError);
    return err as RpcError<any>;
  }
  throw new Error('expected the promise to reject');
}

export interface RecordedCall {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv | undefined;
}

/** A command runner that replays canned results and records what it was asked to run. */
export type FakeResult = Partial<Omit<CommandResult, 'stdout' | 'stderr'>> & { stdout?: Buffer | string; stderr?: Buffer | string };

export function fakeRunner(respond: (command: string, args: readonly string[]) => FakeResult): {
  runner: CommandRunner;
  calls: RecordedCall[];
} {
  const calls: RecordedCall[] = [];
  const runner: CommandRunner = async (command, args, options) => {
    calls.push({ command, args: [...args], env: options.env });
    const r = respond(command, args);
    const buf = (v: Buffer | string | undefined) => (v === undefined ? Buffer.alloc(0) : Buffer.isBuffer(v) ? v : Buffer.from(v));
    return { exitCode: r.exitCode === undefined ? 0 : r.exitCode, exitSignal: r.exitSignal ?? null, stdout: buf(r.stdout), stderr: buf(r.stderr), stdoutTruncated: r.stdoutTruncated ?? false };
  };
  return { runner, calls };
}

/** A validator that accepts everything (for test-only probes). */
export const acceptAll = ((_v: unknown) => true) as Validator<any>;

/** A test-only probe. */
export function testProbe(name: string, run: (args: any, ctx: ProbeContext) => Promise<ProbeRunResult>, validators: Partial<Pick<ProbeDefinition, 'validateArgs' | 'validateOutput'>> = {}): ProbeDefinition<any, any> {
  return { name, validateArgs: validators.validateArgs ?? acceptAll, validateOutput: validators.validateOutput ?? acceptAll, run };
}

export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A process is gone: no /proc entry, or a zombie waiting to be reaped by its (new) parent. */
export function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

/** Process group id of a live process, from /proc/<pid>/stat field 5. */
export function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[2]);
}
