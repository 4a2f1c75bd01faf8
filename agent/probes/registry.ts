// The agent's compiled-in probe registry (seed 4.6, 8; DESIGN 5.11).
//
//   const probes = createProbeRegistry({ allowedTailPaths: ['/var/log'], concurrency: config.probe_concurrency });
//   hello.capabilities.supported_probes = probes.names();
//   peer.onRequest('probe.request', (params, { signal }) => probes.invoke(params, { signal }));
//   on config.update: probes.setConcurrency(config.probe_concurrency);
//
// invoke() resolves with a ProbeOutput or rejects with an RpcError to send as is:
//   -32602 InvalidParamsError   params or args fail their schema (data.errors[].path, e.g. /args/unit),
//                               or file.tail's path is outside the allowed paths
//   -32010 ProbeUnavailableError the probe is not in this registry
//   -32011 ProbeExecutionFailedError the probe ran but reported failure (seed 5): its tool exited
//                               non-zero or was killed (data.stderr cut to 4 KiB, data.exit_code), its
//                               command is missing or cannot be executed ("systemctl not found on this
//                               host"), or the probe threw ProbeExecutionFailedError itself
//   -32012 ProbeTimeoutError    timeout_ms passed; the child's whole process group was SIGKILLed
//   -32603 InternalError        an agent bug (seed 5 "unhandled exception on the receiver"): the
//                               probe's handler threw something that is not an RpcError (a TypeError,
//                               a plain Error), or its output failed its own output schema;
//                               data { probe, reason: 'exception' | 'invalid_output', message (cut
//                               to 4 KiB) }, logged at error level (DECISIONS F8)
// Any other RpcError a probe throws is sent as it is.
// When the caller's own signal aborts (session closed), invoke rejects with that signal's reason
// and kills the child: nothing is to be sent then.
//
// Timing: timeout_ms counts from invoke(), so time spent waiting for a concurrency slot counts
// (the server's clock for the same request started when it sent it). duration_ms in the output
// is the probe's own run time, without the wait.

import { performance } from 'node:perf_hooks';
import {
  InternalError,
  InvalidParamsError,
  ProbeExecutionFailedError,
  ProbeTimeoutError,
  ProbeUnavailableError,
  RpcError,
  describeIssues,
  toIssues,
  validateProbeRequestParams,
  type ProbeName,
  type ProbeTypes,
  type ProbeOutput,
  type ProbeRequestParams,
} from '@cortex/agent-protocol';
import { isAbsolute } from 'node:path';
import { spawnCommand, runTool, truncateText, type CommandRunner } from './command.js';
import { FifoLimiter, type Release } from './limiter.js';
import { defineProbe, type ProbeContext, type ProbeDefinition, type ProbeSettings } from './types.js';
/**
 * A built-in probe whose module loads at its first run: name and validators come from the
 * generated catalogue, so an agent that never runs a probe holds none of their code (idle RSS,
 * issue 20; DECISIONS P17). The module's own definition runs the probe.
 */
function builtin<N extends ProbeName>(name: N, load: () => Promise<ProbeDefinition<ProbeTypes[N]['args'], ProbeTypes[N]['output']>>): ProbeDefinition<ProbeTypes[N]['args'], ProbeTypes[N]['output']> {
  let module: ReturnType<typeof load> | undefined;
  return defineProbe(name, async (args, ctx) => (await (module ??= load())).run(args, ctx));
}

/** The probes compiled into the agent, in contract order. */
export const BUILTIN_PROBES: readonly ProbeDefinition[] = [
  builtin('exec.systemctl_status', async () => (await import('./systemctl-status.probe.js')).systemctlStatusProbe),
  builtin('fs.disk_usage', async () => (await import('./disk-usage.probe.js')).diskUsageProbe),
  builtin('sys.uptime', async () => (await import('./uptime.probe.js')).uptimeProbe),
  builtin('sys.os_release', async () => (await import('./os-release.probe.js')).osReleaseProbe),
  builtin('proc.top', async () => (await import('./proc-top.probe.js')).procTopProbe),
  builtin('net.listening_sockets', async () => (await import('./listening-sockets.probe.js')).listeningSocketsProbe),
  builtin('journal.tail', async () => (await import('./journal-tail.probe.js')).journalTailProbe),
  builtin('file.tail', async () => (await import('./file-tail.probe.js')).fileTailProbe),
];

/** Default probe_concurrency (the seed's example config). */
export const DEFAULT_PROBE_CONCURRENCY = 4;
/** After a timeout, the slot is freed when the probe has settled, or after this long at most. */
export const DEFAULT_KILL_GRACE_MS = 2000;

/**
 * Probes that may wait for a concurrency slot. More are refused at once (-32011, not run): a
 * server sending 20,000 probe.requests with long timeouts kept them all queued, the agent at
 * 40-65 % of a core and 68 → 223 MB for up to the timeout (DECISIONS H57). A server that waits
 * for each answer never has more than a few in flight.
 */
export const MAX_PROBES_WAITING = 64;

export interface ProbeRegistryOptions {
  /** Absolute files or directories file.tail may read (default none: file.tail refuses every path). */
  allowedTailPaths?: readonly string[];
  /** probe_concurrency (default 4); change it live with setConcurrency. */
  concurrency?: number;
  /** Runs probe commands (default: spawn, no shell, own process group, SIGKILL to the group on abort). */
  commandRunner?: CommandRunner;
  /** procfs root (default /proc). */
  procRoot?: string;
  /** os-release files tried in order (default /etc/os-release, /usr/lib/os-release). */
  osReleasePaths?: readonly string[];
  /** passwd file for proc.top user names (default /etc/passwd). */
  passwdPath?: string;
  /** Executables, by name on PATH or path (default systemctl, journalctl). */
  commands?: { systemctl?: string; journalctl?: string };
  /** Environment for probe children (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** proc.top's CPU sampling window (default 200 ms). */
  procTopSampleMs?: number;
  /** USER_HZ for /proc/<pid>/stat times (default 100). */
  clockTicks?: number;
  /** Only these built-in probes (default all). */
  only?: readonly string[];
  /** More probes (tests, site-specific builds); names must not clash with the built-ins. */
  extraProbes?: readonly ProbeDefinition[];
  /** See DEFAULT_KILL_GRACE_MS. */
  killGraceMs?: number;
  /** See MAX_PROBES_WAITING. */
  maxWaiting?: number;
  /** Where a probe bug (-32603) is logged at error level (default: not logged here). */
  logger?: ProbeBugLogger;
}

/** The part of the agent's (pino) logger the registry uses. */
export interface ProbeBugLogger {
  error(fields: Record<string, unknown>, message: string): void;
}

export interface InvokeOptions {
  /** Abort when the request is abandoned (session closed): the child is killed, invoke rejects with the reason. */
  signal?: AbortSignal;
}

export interface ProbeRegistryStats {
  concurrency: number;
  running: number;
  waiting: number;
}

export interface ProbeRegistry {
  /** The registered probe names, exactly: capabilities.supported_probes. */
  names(): string[];
  has(name: string): boolean;
  /** Runs probe.request params; see the file comment for the errors. */
  invoke(params: ProbeRequestParams, options?: InvokeOptions): Promise<ProbeOutput>;
  /** probe_concurrency, live (config.update). Waiting requests start at once if the limit rises. */
  setConcurrency(n: number): void;
  /** file.tail's allowed paths, live. */
  setAllowedTailPaths(paths: readonly string[]): void;
  stats(): ProbeRegistryStats;
}

const TIMEOUT = Symbol('probe timeout');

function checkAllowedPaths(paths: readonly string[]): string[] {
  for (const p of paths) if (typeof p !== 'string' || !isAbsolute(p) || p.includes('\0')) throw new TypeError(`allowed tail path must be absolute: ${JSON.stringify(p)}`);
  return [...paths];
}

function withProbe(err: RpcError, probe: string): RpcError {
  const data = err.data;
  if (data !== null && typeof data === 'object' && !Array.isArray(data) && !('probe' in data) && (err.code === -32011 || err.code === -32010)) {
    (data as Record<string, unknown>)['probe'] = probe;
  }
  return err;
}

/** "TypeError: x is not a function", or what was thrown when it is no Error. */
function describeThrown(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`;
  try {
    return `a non-Error value: ${typeof err === 'string' ? err : JSON.stringify(err) ?? String(err)}`;
  } catch {
    return `a non-Error value: ${String(err)}`;
  }
}

export function createProbeRegistry(options: ProbeRegistryOptions = {}): ProbeRegistry {
  const probes = new Map<string, ProbeDefinition>();
  const only = options.only ? new Set(options.only) : null;
  if (only) for (const name of only) if (!BUILTIN_PROBES.some((p) => p.name === name)) throw new Error(`unknown built-in probe ${name}`);
  for (const p of BUILTIN_PROBES) if (!only || only.has(p.name)) probes.set(p.name, p);
  for (const p of options.extraProbes ?? []) {
    if (probes.has(p.name) || BUILTIN_PROBES.some((b) => b.name === p.name)) throw new Error(`probe ${p.name} is already registered`);
    probes.set(p.name, p);
  }

  const limiter = new FifoLimiter(options.concurrency ?? DEFAULT_PROBE_CONCURRENCY);
  const runner = options.commandRunner ?? spawnCommand;
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const maxWaiting = options.maxWaiting ?? MAX_PROBES_WAITING;
  let allowedTailPaths = checkAllowedPaths(options.allowedTailPaths ?? []);
  const fixed = {
    procRoot: options.procRoot ?? '/proc',
    osReleasePaths: [...(options.osReleasePaths ?? ['/etc/os-release', '/usr/lib/os-release'])],
    passwdPath: options.passwdPath ?? '/etc/passwd',
    commands: { systemctl: options.commands?.systemctl ?? 'systemctl', journalctl: options.commands?.journalctl ?? 'journalctl' },
    procTopSampleMs: options.procTopSampleMs ?? 200,
    clockTicks: options.clockTicks ?? 100,
    env: options.env ?? process.env,
  };
  const settings: ProbeSettings = {
    ...fixed,
    get allowedTailPaths() {
      return allowedTailPaths;
    },
  };

  const makeContext = (probe: string, signal: AbortSignal): ProbeContext => ({
    probe,
    signal,
    settings,
    runner,
    runTool: (command, args, opts = {}, okExitCodes) => runTool(runner, probe, command, args, { ...opts, signal }, okExitCodes),
    sleep: (ms) =>
      new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(signal.reason);
        const t = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        const onAbort = () => {
          clearTimeout(t);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }),
  });

  /** -32603 for a bug in a probe (not a failure of what it probes), logged at error level. */
  function probeBug(probe: string, reason: 'exception' | 'invalid_output', text: string, err?: unknown): InternalError {
    const message = truncateText(text);
    options.logger?.error({ probe, reason, err: message, ...(err instanceof Error && err.stack ? { stack: truncateText(err.stack) } : {}) }, 'probe bug: answered -32603 InternalError');
    return new InternalError({ probe, reason, message }, reason === 'invalid_output' ? 'InternalError: invalid probe output' : 'InternalError: probe failed unexpectedly');
  }

  async function invoke(params: ProbeRequestParams, invokeOptions: InvokeOptions = {}): Promise<ProbeOutput> {
    if (!validateProbeRequestParams(params)) {
      throw new InvalidParamsError({ method: 'probe.request', errors: toIssues(validateProbeRequestParams.errors) });
    }
    const { probe: name, args, timeout_ms: timeoutMs } = params;
    const def = probes.get(name);
    if (!def) throw new ProbeUnavailableError({ probe: name });
    if (!def.validateArgs(args)) {
      const issues = toIssues(def.validateArgs.errors).map((i) => ({ ...i, path: `/args${i.path}` }));
      throw new InvalidParamsError({ method: 'probe.request', errors: issues });
    }

    const outer = invokeOptions.signal;
    outer?.throwIfAborted();
    if (limiter.running >= limiter.limit && limiter.waiting >= maxWaiting) {
      throw new ProbeExecutionFailedError(
        { probe: name, exit_code: null, stderr: `not run: ${limiter.waiting} probes already wait for one of the ${limiter.limit} slots (probe_concurrency); the agent takes more once they finish` },
        'ProbeExecutionFailed',
      );
    }
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(TIMEOUT), timeoutMs);
    const onOuterAbort = () => ac.abort(outer!.reason);
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    const aborted = new Promise<never>((_, reject) => {
      ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true });
    });
    aborted.catch(() => undefined);

    const mapAbort = (reason: unknown): unknown => (reason === TIMEOUT ? new ProbeTimeoutError({ probe: name, timeout_ms: timeoutMs }) : reason);
    let release: Release | undefined;
    try {
      try {
        release = await limiter.acquire(ac.signal);
      } catch (reason) {
        throw mapAbort(reason);
      }
      const started = performance.now();
      const running = Promise.resolve().then(() => def.run(args, makeContext(name, ac.signal)));
      // Free the slot when the probe has really finished (its child is gone), but never hold it
      // longer than killGraceMs past an abort.
      const slot = release;
      running.then(slot, slot);
      ac.signal.addEventListener('abort', () => setTimeout(slot, killGraceMs).unref(), { once: true });

      let result;
      try {
        result = await Promise.race([running, aborted]);
      } catch (err) {
        if (ac.signal.aborted) throw mapAbort(ac.signal.reason);
        if (err instanceof RpcError) throw withProbe(err, name);
        throw probeBug(name, 'exception', `probe ${name} threw ${describeThrown(err)}`, err);
      }
      const duration = Math.max(0, Math.round(performance.now() - started));
      if (!def.validateOutput(result.output)) {
        const why = describeIssues(toIssues(def.validateOutput.errors));
        throw probeBug(name, 'invalid_output', `probe ${name} produced output that does not match its schema: ${why}`);
      }
      const out: ProbeOutput = { output: result.output, exit_code: result.exit_code ?? null, stderr: result.stderr ?? null, duration_ms: duration };
      return out;
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    }
  }

  return {
    names: () => [...probes.keys()],
    has: (name) => probes.has(name),
    invoke,
    setConcurrency: (n) => limiter.setLimit(n),
    setAllowedTailPaths: (paths) => {
      allowedTailPaths = checkAllowedPaths(paths);
    },
    stats: () => ({ concurrency: limiter.limit, running: limiter.running, waiting: limiter.waiting }),
  };
}
