/*
 * Generated from contract/ by codegen — do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import * as V from './validators.js';
export const PROBES = [
    { name: "exec.systemctl_status", summary: "State of one systemd unit (systemctl show).", validateArgs: V.validateExecSystemctlStatusArgs, validateOutput: V.validateExecSystemctlStatusOutput },
    { name: "fs.disk_usage", summary: "Space and inode usage of the filesystem holding a path.", validateArgs: V.validateFsDiskUsageArgs, validateOutput: V.validateFsDiskUsageOutput },
];
