// What a probe is to the registry: a name, validators for its args and output, and a run function.

import { PROBES, type ProbeName, type ProbeTypes, type Validator } from '@cortex/agent-protocol';
import type { CommandOptions, CommandRunner, ToolOutput } from './command.js';

/** What a probe's run function returns; the registry adds duration_ms. */
export interface ProbeRunResult<O = unknown> {
  output: O;
  /** The tool's exit code for command probes; null (or absent) for probes that run in-process. */
  exit_code?: number | null;
  /** The tool's stderr (cut to 4 KiB) when it wrote any; null otherwise. */
  stderr?: string | null;
}

/** Settings the probes read; the registry owns them (some change live). */
export interface ProbeSettings {
  /** Absolute directories or files file.tail may read (after symlinks are resolved). */
  readonly allowedTailPaths: readonly string[];
  /** Root of procfs (default /proc); tests point it at a recorded tree. */
  readonly procRoot: string;
  /** os-release files tried in order (default /etc/os-release, /usr/lib/os-release). */
  readonly osReleasePaths: readonly string[];
  /** Where uid → user names come from (default /etc/passwd). */
  readonly passwdPath: string;
  /** Executables (a name looked up on PATH, or a path). */
  readonly commands: { readonly systemctl: string; readonly journalctl: string };
  /** proc.top's CPU sampling window (default 200 ms). */
  readonly procTopSampleMs: number;
  /** Kernel clock ticks per second for /proc/<pid>/stat times (USER_HZ; 100 on Linux x86/arm). */
  readonly clockTicks: number;
  /** Environment of probe children (default: the agent's). */
  readonly env: NodeJS.ProcessEnv;
}

/** Passed to a probe's run function for one invocation. */
export interface ProbeContext {
  readonly probe: string;
  /** Aborted when the probe times out or the request is abandoned; long work must stop. */
  readonly signal: AbortSignal;
  readonly settings: ProbeSettings;
  /** The registry's command runner (spawn without a shell, or a test's fake). */
  readonly runner: CommandRunner;
  /** Runs a tool with the invocation's signal; every failure becomes ProbeExecutionFailedError. */
  runTool(command: string, args: readonly string[], options?: Omit<CommandOptions, 'signal'>, okExitCodes?: readonly number[]): Promise<ToolOutput>;
  /** Waits ms, rejecting when the signal aborts. */
  sleep(ms: number): Promise<void>;
}

export interface ProbeDefinition<A = unknown, O = unknown> {
  readonly name: string;
  readonly validateArgs: Validator<A>;
  readonly validateOutput: Validator<O>;
  run(args: A, ctx: ProbeContext): Promise<ProbeRunResult<O>>;
}

/** A registry probe of the contract: validators and types come from the generated package. */
export function defineProbe<N extends ProbeName>(
  name: N,
  run: (args: ProbeTypes[N]['args'], ctx: ProbeContext) => Promise<ProbeRunResult<ProbeTypes[N]['output']>>,
): ProbeDefinition<ProbeTypes[N]['args'], ProbeTypes[N]['output']> {
  const info = PROBES.find((p) => p.name === name);
  if (!info) throw new Error(`probe ${name} is not in the contract (contract/probes/probes.json)`);
  return {
    name,
    validateArgs: info.validateArgs as Validator<ProbeTypes[N]['args']>,
    validateOutput: info.validateOutput as Validator<ProbeTypes[N]['output']>,
    run,
  };
}
