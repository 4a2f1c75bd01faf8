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
    "sys.uptime": {
        args: T.SysUptimeArgs;
        output: T.SysUptimeOutput;
    };
    "sys.os_release": {
        args: T.SysOsReleaseArgs;
        output: T.SysOsReleaseOutput;
    };
    "proc.top": {
        args: T.ProcTopArgs;
        output: T.ProcTopOutput;
    };
    "net.listening_sockets": {
        args: T.NetListeningSocketsArgs;
        output: T.NetListeningSocketsOutput;
    };
    "journal.tail": {
        args: T.JournalTailArgs;
        output: T.JournalTailOutput;
    };
    "file.tail": {
        args: T.FileTailArgs;
        output: T.FileTailOutput;
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
