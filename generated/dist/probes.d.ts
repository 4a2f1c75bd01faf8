/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import type * as T from './types.js';
import type { Validator } from './runtime/peer.js';
import { type ValidationIssue } from './runtime/errors.js';
/**
 * Probes of the reference registry (schemas/probes/): args and output types by probe name.
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
/**
 * A JSON Schema (draft 2020-12) of the contract, as data.
 */
export type ProbeSchema = {
    readonly [keyword: string]: unknown;
};
export interface ProbeInfo {
    readonly name: ProbeName;
    readonly summary: string;
    readonly validateArgs: Validator;
    readonly validateOutput: Validator;
    /** The args schema (the same as schemas/probes/<name>.args.json): for a form or a catalog, without reading the package's files. */
    readonly argsSchema: ProbeSchema;
    /** The output schema (schemas/probes/<name>.output.json). */
    readonly outputSchema: ProbeSchema;
}
export declare const PROBES: readonly ProbeInfo[];
/**
 * The agent peer's outgoing check of a probe.request result (PeerOptions.checkOutgoingResult):
 * its `output` against the output schema of the probe named in the request's params, so an
 * invalid probe output fails at the agent. Probes outside this registry pass unchecked.
 */
export declare function checkProbeOutput(method: string, params: unknown, result: unknown): ValidationIssue[] | undefined;
