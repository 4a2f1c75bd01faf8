// The probes a simulated agent answers. Outputs are synthetic (no simulated host has a real
// disk) but valid against the probe output schemas of contract/probes/; args are checked
// with the generated args validators, as a real agent does.
import {
  InvalidParamsError,
  PROBES,
  ProbeUnavailableError,
  toIssues,
  type FsDiskUsageArgs,
  type FsDiskUsageOutput,
  type ProbeOutput,
  type SysOsReleaseOutput,
  type SysUptimeOutput,
} from '@cortex/agent-protocol';

export const FLEET_PROBES = ['sys.uptime', 'fs.disk_usage', 'sys.os_release'] as const;
export type FleetProbe = (typeof FLEET_PROBES)[number];

const GIB = 1024 ** 3;

/** The outputs: a function of the agent's start time and index, so answers differ per host. */
const OUTPUTS: Record<FleetProbe, (args: unknown, startedAt: number, index: number) => unknown> = {
  'sys.uptime': (_args, startedAt, index): SysUptimeOutput => {
    const uptime = (Date.now() - startedAt) / 1000 + index;
    return {
      uptime_secs: Math.round(uptime * 100) / 100,
      boot_time: new Date(Date.now() - uptime * 1000).toISOString(),
      load_average: { one: (index % 7) / 10, five: (index % 5) / 10, fifteen: (index % 3) / 10 },
    };
  },
  'fs.disk_usage': (args, _startedAt, index): FsDiskUsageOutput => {
    const total = 100 * GIB;
    const used = Math.round(total * ((index % 90) + 5) / 100);
    return {
      path: (args as FsDiskUsageArgs).path,
      total_bytes: total,
      used_bytes: used,
      free_bytes: total - used,
      used_percent: Math.round((used / total) * 10000) / 100,
      inodes_total: 6_553_600,
      inodes_used: 100_000 + index,
      inodes_free: 6_553_600 - 100_000 - index,
    };
  },
  'sys.os_release': (): SysOsReleaseOutput => ({
    source: '/etc/os-release',
    id: 'cortexfleet',
    name: 'Cortex fleet emulator',
    pretty_name: 'Cortex fleet emulator (simulated host)',
    version_id: '1',
    fields: { ID: 'cortexfleet', NAME: 'Cortex fleet emulator', VERSION_ID: '1' },
  }),
};

/**
 * Answers one probe.request: -32010 for a probe outside `supported`, -32602 when its args
 * fail the probe's args schema, else the ProbeOutput.
 */
export function runProbe(probe: string, args: unknown, supported: readonly string[], startedAt: number, index: number): ProbeOutput {
  const t0 = performance.now();
  const info = PROBES.find((p) => p.name === probe);
  const out = (OUTPUTS as Record<string, ((a: unknown, s: number, i: number) => unknown) | undefined>)[probe];
  if (!supported.includes(probe) || info === undefined || out === undefined) throw new ProbeUnavailableError({ probe });
  if (!info.validateArgs(args)) {
    throw new InvalidParamsError({ method: 'probe.request', errors: toIssues(info.validateArgs.errors).map((i) => ({ ...i, path: `/args${i.path}` })) });
  }
  const output = out(args, startedAt, index);
  return { output, exit_code: 0, stderr: null, duration_ms: Math.round(performance.now() - t0) };
}
