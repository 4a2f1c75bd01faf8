/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import type * as T from './types.js';
import * as V from './validators.js';
import type { Validator } from './runtime/peer.js';
import { toIssues, type ValidationIssue } from './runtime/errors.js';

/**
 * Probes of the reference registry (schemas/probes/): args and output types by probe name.
 */
export interface ProbeTypes {
  "exec.systemctl_status": { args: T.ExecSystemctlStatusArgs; output: T.ExecSystemctlStatusOutput };
  "fs.disk_usage": { args: T.FsDiskUsageArgs; output: T.FsDiskUsageOutput };
  "sys.uptime": { args: T.SysUptimeArgs; output: T.SysUptimeOutput };
  "sys.os_release": { args: T.SysOsReleaseArgs; output: T.SysOsReleaseOutput };
  "proc.top": { args: T.ProcTopArgs; output: T.ProcTopOutput };
  "net.listening_sockets": { args: T.NetListeningSocketsArgs; output: T.NetListeningSocketsOutput };
  "journal.tail": { args: T.JournalTailArgs; output: T.JournalTailOutput };
  "file.tail": { args: T.FileTailArgs; output: T.FileTailOutput };
}

export type ProbeName = keyof ProbeTypes;

export interface ProbeInfo {
  readonly name: ProbeName;
  readonly summary: string;
  readonly validateArgs: Validator;
  readonly validateOutput: Validator;
}

export const PROBES: readonly ProbeInfo[] = [
  { name: "exec.systemctl_status", summary: "State of one systemd unit (systemctl show).", validateArgs: V.validateExecSystemctlStatusArgs, validateOutput: V.validateExecSystemctlStatusOutput },
  { name: "fs.disk_usage", summary: "Space and inode usage of the filesystem holding a path.", validateArgs: V.validateFsDiskUsageArgs, validateOutput: V.validateFsDiskUsageOutput },
  { name: "sys.uptime", summary: "Uptime, boot time and load averages of the host.", validateArgs: V.validateSysUptimeArgs, validateOutput: V.validateSysUptimeOutput },
  { name: "sys.os_release", summary: "The host's os-release(5) identification.", validateArgs: V.validateSysOsReleaseArgs, validateOutput: V.validateSysOsReleaseOutput },
  { name: "proc.top", summary: "Top N processes by CPU (sampled) or resident memory.", validateArgs: V.validateProcTopArgs, validateOutput: V.validateProcTopOutput },
  { name: "net.listening_sockets", summary: "Listening TCP and unconnected UDP sockets, with owning process when visible.", validateArgs: V.validateNetListeningSocketsArgs, validateOutput: V.validateNetListeningSocketsOutput },
  { name: "journal.tail", summary: "Last N journal entries of one systemd unit (journalctl).", validateArgs: V.validateJournalTailArgs, validateOutput: V.validateJournalTailOutput },
  { name: "file.tail", summary: "Last N lines of a file inside the agent's allowed paths.", validateArgs: V.validateFileTailArgs, validateOutput: V.validateFileTailOutput },
];

/**
 * The agent peer's outgoing check of a probe.request result (PeerOptions.checkOutgoingResult):
 * its `output` against the output schema of the probe named in the request's params, so an
 * invalid probe output fails at the agent. Probes outside this registry pass unchecked.
 */
export function checkProbeOutput(method: string, params: unknown, result: unknown): ValidationIssue[] | undefined {
  if (method !== 'probe.request') return undefined;
  const name = (params as { probe?: unknown } | null)?.probe;
  const probe = PROBES.find((p) => p.name === name);
  if (!probe) return undefined;
  const output = (result as { output?: unknown } | null)?.output;
  if (probe.validateOutput(output)) return undefined;
  return toIssues(probe.validateOutput.errors).map((i) => ({ ...i, path: `/output${i.path}` }));
}
