// Running a probe's external command: no shell, an argument array, its own process group.
//
// The child is spawned with `detached: true`, which on Linux makes it the leader of a new
// session and process group (pgid = pid). On abort (probe timeout, session gone) the whole
// group is sent SIGKILL with `process.kill(-pid, 'SIGKILL')`, so grandchildren the tool
// started die with it. A child that moves itself to another group (setsid, daemonising)
// escapes this; none of the registry's tools do.

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { basename } from 'node:path';
import { ProbeExecutionFailedError } from '@cortex/agent-protocol';

/** How much of a child's stderr is kept in memory (what is sent is cut further, see truncateText). */
const STDERR_KEEP_BYTES = 64 * 1024;
/** Default cap on a child's stdout; beyond it the child is killed and the probe fails. */
export const DEFAULT_MAX_STDOUT_BYTES = 8 * 1024 * 1024;
/** stderr in a ProbeExecutionFailed error or a ProbeOutput is cut to this many characters. */
export const STDERR_LIMIT_CHARS = 4096;

export interface CommandOptions {
  /** Aborting kills the child's whole process group; the promise then rejects with the signal's reason. */
  signal: AbortSignal;
  /** Stop and kill the child when its stdout exceeds this (the result says stdoutTruncated). */
  maxStdoutBytes?: number;
  /** The child's environment (default: the agent's). */
  env?: NodeJS.ProcessEnv;
}

export interface CommandResult {
  /** Exit code, or null when the child was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the child, if any. */
  exitSignal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  /** stdout exceeded maxStdoutBytes: the child was killed and stdout holds the first bytes only. */
  stdoutTruncated: boolean;
}

/**
 * Runs `command` with `args` (never through a shell). Tests inject their own runner to replay
 * recorded tool output. Rejects with CommandNotFoundError when the executable does not exist.
 */
export type CommandRunner = (command: string, args: readonly string[], options: CommandOptions) => Promise<CommandResult>;

/** The executable is not on this host (ENOENT) or cannot be executed (EACCES). */
export class CommandNotFoundError extends Error {
  readonly command: string;
  readonly errno: string;
  constructor(command: string, errno: string) {
    super(errno === 'ENOENT' ? `${basename(command)} not found on this host` : `${basename(command)} cannot be executed on this host (${errno})`);
    this.name = 'CommandNotFoundError';
    this.command = command;
    this.errno = errno;
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

/** The default runner: child_process.spawn with detached:true, SIGKILL to the process group on abort. */
export const spawnCommand: CommandRunner = (command, args, options) =>
  new Promise<CommandResult>((resolve, reject) => {
    const { signal } = options;
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const maxStdout = options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
    let settled = false;
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stdoutTruncated = false;
    const stderr: Buffer[] = [];
    let stderrBytes = 0;

    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(command, [...args], {
        detached: true,
        shell: false,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: options.env ?? process.env,
        windowsHide: true,
      });
    } catch (err) {
      reject(err); // e.g. an argument with a NUL byte (the schemas refuse those first)
      return;
    }

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const onAbort = () => killGroup();
    signal.addEventListener('abort', onAbort, { once: true });

    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };

    child.stdout.on('data', (chunk: Buffer) => {
      if (stdoutTruncated) return;
      const room = maxStdout - stdoutBytes;
      if (chunk.length > room) {
        if (room > 0) stdout.push(chunk.subarray(0, room));
        stdoutBytes = maxStdout;
        stdoutTruncated = true;
        killGroup();
        return;
      }
      stdout.push(chunk);
      stdoutBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      const room = STDERR_KEEP_BYTES - stderrBytes;
      if (room <= 0) return;
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      stderr.push(part);
      stderrBytes += part.length;
    });

    child.on('error', (err: NodeJS.ErrnoException) => {
      finish(() => {
        if (err.code === 'ENOENT' || err.code === 'EACCES') reject(new CommandNotFoundError(command, err.code));
        else reject(err);
      });
    });
    child.on('close', (code, exitSignal) => {
      finish(() => {
        if (signal.aborted) reject(abortReason(signal));
        else resolve({ exitCode: code, exitSignal, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), stdoutTruncated });
      });
    });
  });

/** Cuts text to `max` characters, saying so. */
export function truncateText(text: string, max = STDERR_LIMIT_CHARS): string {
  if (text.length <= max) return text;
  const marker = `… [truncated, ${text.length} chars]`;
  return text.slice(0, Math.max(0, max - marker.length)) + marker;
}

/** stderr as sent: UTF-8 (invalid bytes replaced), trimmed, at most 4 KiB; null when empty. */
export function stderrText(stderr: Buffer): string | null {
  const text = stderr.toString('utf8').trim();
  return text === '' ? null : truncateText(text);
}

export interface ToolOutput {
  stdout: string;
  stderr: string | null;
  exitCode: number;
}

/**
 * Runs a tool for a probe and turns every failure into ProbeExecutionFailedError:
 * missing executable ("systemctl not found on this host", exit_code null), any other spawn
 * failure ("systemctl could not be run: …"), non-zero exit
 * (its stderr and exit_code), death by a signal, oversized output.
 */
export async function runTool(
  runner: CommandRunner,
  probe: string,
  command: string,
  args: readonly string[],
  options: CommandOptions,
  okExitCodes: readonly number[] = [0],
): Promise<ToolOutput> {
  let result: CommandResult;
  try {
    result = await runner(command, args, options);
  } catch (err) {
    if (err instanceof CommandNotFoundError) throw new ProbeExecutionFailedError({ stderr: err.message, exit_code: null, probe });
    // Aborted (timeout, session gone): the registry maps the signal's reason.
    if (options.signal.aborted) throw err;
    // Any other spawn failure (EMFILE, EAGAIN, E2BIG, a NUL byte in an argument): the probe's
    // tool could not be run, a failure of the probe, not an agent bug (-32011, not -32603).
    const why = err instanceof Error ? err.message : String(err);
    throw new ProbeExecutionFailedError({ stderr: truncateText(`${basename(command)} could not be run: ${why}`), exit_code: null, probe });
  }
  const name = basename(command);
  const stderr = stderrText(result.stderr);
  if (result.stdoutTruncated) {
    const limit = options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
    throw new ProbeExecutionFailedError({ stderr: truncateText(`${name} wrote more than ${limit} bytes to stdout; stopped`), exit_code: null, probe });
  }
  if (result.exitCode === null) {
    const why = `${name} was killed by ${result.exitSignal ?? 'a signal'}`;
    throw new ProbeExecutionFailedError({ stderr: truncateText(stderr ? `${why}: ${stderr}` : why), exit_code: null, probe });
  }
  if (!okExitCodes.includes(result.exitCode)) {
    throw new ProbeExecutionFailedError({ stderr: stderr ?? `${name} exited with code ${result.exitCode}`, exit_code: result.exitCode, probe });
  }
  return { stdout: result.stdout.toString('utf8'), stderr, exitCode: result.exitCode };
}
