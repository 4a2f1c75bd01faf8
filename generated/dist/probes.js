/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import * as V from './validators.js';
import { toIssues } from './runtime/errors.js';
export const PROBES = [
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
export function checkProbeOutput(method, params, result) {
    if (method !== 'probe.request')
        return undefined;
    const name = params?.probe;
    const probe = PROBES.find((p) => p.name === name);
    if (!probe)
        return undefined;
    const output = result?.output;
    if (probe.validateOutput(output))
        return undefined;
    return toIssues(probe.validateOutput.errors).map((i) => ({ ...i, path: `/output${i.path}` }));
}
