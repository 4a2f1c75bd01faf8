// exec.systemctl_status: `systemctl show --property=... -- <unit>` parsed as key=value lines.
// The unit name cannot start with '-' (schema), and `--` ends option parsing anyway.
// TZ=UTC makes systemd print timestamps as "Thu 2026-05-16 19:42:11 UTC" on every version.

import { ProbeExecutionFailedError, type ExecSystemctlStatusOutput } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

export const SYSTEMCTL_PROPERTIES = ['ActiveState', 'SubState', 'LoadState', 'MainPID', 'ActiveEnterTimestamp'] as const;

export function systemctlArgs(unit: string): string[] {
  return ['show', `--property=${SYSTEMCTL_PROPERTIES.join(',')}`, '--no-pager', '--', unit];
}

/** `Key=Value` lines (systemctl show) to a map; the value is everything after the first '='. */
export function parseKeyValueLines(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

const MONTHLESS = /^(?:[A-Za-z]{3} )?(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))? (UTC|GMT)$/;

/**
 * A systemd timestamp as ISO 8601 UTC, or null when unset ("", "n/a", "0") or in a time zone
 * other than UTC (the probe runs systemctl with TZ=UTC, so that does not happen in practice).
 */
export function parseSystemdTimestamp(value: string | undefined): string | null {
  if (value === undefined) return null;
  const v = value.trim();
  if (v === '' || v === 'n/a' || v === '0') return null;
  const unix = /^@(\d+)(?:\.(\d{1,6}))?$/.exec(v);
  if (unix) {
    const secs = Number(unix[1]);
    if (secs === 0) return null;
    const ms = unix[2] ? Number(unix[2].padEnd(6, '0').slice(0, 3)) : 0;
    return new Date(secs * 1000 + ms).toISOString();
  }
  const m = MONTHLESS.exec(v);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac] = m;
  const ms = frac ? Number(frac.padEnd(6, '0').slice(0, 3)) : 0;
  const t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** systemctl show output → the probe's output. Throws ProbeExecutionFailedError when ActiveState or SubState is missing. */
export function parseSystemctlShow(stdout: string): ExecSystemctlStatusOutput {
  const kv = parseKeyValueLines(stdout);
  const activeState = kv.get('ActiveState');
  const subState = kv.get('SubState');
  if (activeState === undefined || subState === undefined) {
    // The tool's answer, not the agent, is at fault: the probe ran and failed (-32011).
    const why = `unexpected systemctl show output (no ActiveState/SubState): ${JSON.stringify(stdout.slice(0, 200))}`;
    throw new ProbeExecutionFailedError({ stderr: why, exit_code: null }, `ProbeExecutionFailed: ${why}`);
  }
  const out: ExecSystemctlStatusOutput = { active: activeState === 'active', active_state: activeState, substate: subState };
  const load = kv.get('LoadState');
  if (load !== undefined) out.load_state = load;
  const pidText = kv.get('MainPID');
  if (pidText !== undefined) {
    const pid = /^\d+$/.test(pidText) ? Number(pidText) : 0;
    out.main_pid = pid > 0 ? pid : null;
  }
  if (kv.has('ActiveEnterTimestamp')) out.since = parseSystemdTimestamp(kv.get('ActiveEnterTimestamp'));
  return out;
}

export const systemctlStatusProbe = defineProbe('exec.systemctl_status', async (args, ctx) => {
  const env = { ...ctx.settings.env, TZ: 'UTC', LC_ALL: 'C', SYSTEMD_COLORS: '0', SYSTEMD_PAGER: '' };
  const res = await ctx.runTool(ctx.settings.commands.systemctl, systemctlArgs(args.unit), { env, maxStdoutBytes: 64 * 1024 });
  let output: ExecSystemctlStatusOutput;
  try {
    output = parseSystemctlShow(res.stdout);
  } catch (err) {
    // Anything else thrown here is a bug in the parser: the registry answers it -32603.
    if (!(err instanceof ProbeExecutionFailedError)) throw err;
    throw new ProbeExecutionFailedError({ stderr: res.stderr ?? err.data?.stderr ?? err.message, exit_code: res.exitCode, probe: ctx.probe });
  }
  return { output, exit_code: res.exitCode, stderr: res.stderr };
});
