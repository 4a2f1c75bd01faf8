/*
 * Generated from contract/ by codegen — do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import type * as T from './types.js';
import type { Validator } from './runtime/peer.js';
/**
 * Probes of the reference registry (contract/probes/): args and output types by probe name.
 */
export interface ProbeTypes {
    "exec.systemctl_status": {
        args: T.ExecSystemctlStatusArgs;
        output: T.ExecSystemctlStatusOutput;
    };
    "fs.disk_usage": {
        args: T.FsDiskUsageArgs;
        output: T.FsDiskUsageOutput;
    };
}
export type ProbeName = keyof ProbeTypes;
export interface ProbeInfo {
    readonly name: ProbeName;
    readonly summary: string;
    readonly validateArgs: Validator;
    readonly validateOutput: Validator;
}
export declare const PROBES: readonly ProbeInfo[];
