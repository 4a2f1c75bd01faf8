/*
 * Generated from contract/ by codegen — do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import type * as T from './types.js';
import * as V from './validators.js';
import type { Validator } from './runtime/peer.js';

/**
 * Probes of the reference registry (contract/probes/): args and output types by probe name.
 */
export interface ProbeTypes {
  "exec.systemctl_status": { args: T.ExecSystemctlStatusArgs; output: T.ExecSystemctlStatusOutput };
  "fs.disk_usage": { args: T.FsDiskUsageArgs; output: T.FsDiskUsageOutput };
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
];
