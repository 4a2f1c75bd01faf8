// exec.systemctl_status and journal.tail: recorded-output parsing, exact argument arrays,
// missing tools, and the real spawn path through fake executables on PATH.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProbeExecutionFailedError, validateExecSystemctlStatusOutput, validateJournalTailOutput } from '@cortex/agent-protocol';
import { createProbeRegistry, spawnCommand, CommandNotFoundError } from '../../../agent/probes/index.js';
import { parseSystemctlShow, parseSystemdTimestamp, systemctlArgs } from '../../../agent/probes/systemctl-status.probe.js';
import { journalctlArgs, parseJournalJson, realtimeToIso } from '../../../agent/probes/journal-tail.probe.js';
import { FIXTURES, fakeRunner, fixture, rpcError } from './helpers.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(os.tmpdir(), 'cortex-probe-cmd-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('exec.systemctl_status: parsing recorded systemctl show output', () => {
  it('a running unit', () => {
    const out = parseSystemctlShow(fixture('systemctl-show-running.txt'));
    expect(out).toEqual({ active: true, active_state: 'active', substate: 'running', load_state: 'loaded', main_pid: 812, since: '2026-05-16T19:42:11.000Z' });
    expect(validateExecSystemctlStatusOutput(out)).toBe(true);
  });

  it('a unit that does not exist (systemctl show still exits 0)', () => {
    const out = parseSystemctlShow(fixture('systemctl-show-not-found.txt'));
    expect(out).toEqual({ active: false, active_state: 'inactive', substate: 'dead', load_state: 'not-found', main_pid: null, since: null });
    expect(validateExecSystemctlStatusOutput(out)).toBe(true);
  });

  it('a failed unit', () => {
    const out = parseSystemctlShow(fixture('systemctl-show-failed.txt'));
    expect(out).toMatchObject({ active: false, active_state: 'failed', substate: 'failed', main_pid: null, since: '2026-05-15T08:00:01.000Z' });
  });

  it('the seed example output still validates', () => {
    expect(validateExecSystemctlStatusOutput({ active: true, substate: 'running' })).toBe(true);
  });

  it('timestamps: UTC text, @unix, fractions, unset, other zones', () => {
    expect(parseSystemdTimestamp('Sat 2026-05-16 19:42:11 UTC')).toBe('2026-05-16T19:42:11.000Z');
    expect(parseSystemdTimestamp('2026-05-16 19:42:11.123456 UTC')).toBe('2026-05-16T19:42:11.123Z');
    expect(parseSystemdTimestamp('@1778960531')).toBe('2026-05-16T19:42:11.000Z');
    expect(parseSystemdTimestamp('@1778960531.5')).toBe('2026-05-16T19:42:11.500Z');
    for (const v of ['', 'n/a', '0', '@0', undefined, 'Sat 2026-05-16 21:42:11 CEST', 'garbage']) expect(parseSystemdTimestamp(v)).toBeNull();
  });

  it('output without ActiveState/SubState is an error', () => {
    expect(() => parseSystemctlShow('Foo=bar\n')).toThrow(/unexpected systemctl show output/);
  });

  it('runs `systemctl show --property=... --no-pager -- <unit>` with TZ=UTC, and answers exit_code 0', async () => {
    const { runner, calls } = fakeRunner(() => ({ stdout: fixture('systemctl-show-running.txt') }));
    const r = createProbeRegistry({ commandRunner: runner });
    const res = await r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'nginx.service' }, timeout_ms: 5000 });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.command).toBe('systemctl');
    expect(calls[0]!.args).toEqual(['show', '--property=ActiveState,SubState,LoadState,MainPID,ActiveEnterTimestamp', '--no-pager', '--', 'nginx.service']);
    expect(calls[0]!.args).toEqual(systemctlArgs('nginx.service'));
    expect(calls[0]!.env?.['TZ']).toBe('UTC');
    expect(res).toMatchObject({ output: { active: true, substate: 'running', main_pid: 812 }, exit_code: 0, stderr: null });
  });

  it('unparseable output is -32011 with the tool\'s stderr or the reason', async () => {
    const { runner } = fakeRunner(() => ({ stdout: 'nothing useful\n' }));
    const r = createProbeRegistry({ commandRunner: runner });
    const err = await rpcError(r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'nginx.service' }, timeout_ms: 5000 }));
    expect(err.code).toBe(-32011);
    expect(err.data.stderr).toMatch(/unexpected systemctl show output/);
    expect(err.data.exit_code).toBe(0);
  });
});

describe('journal.tail: parsing recorded journalctl --output=json', () => {
  it('entries oldest first with ts (µs), message (binary decoded), priority, identifier, pid', () => {
    const parsed = parseJournalJson(fixture('journalctl-nginx.jsonl'));
    expect(parsed.skipped).toBe(0);
    expect(parsed.truncated).toBe(false);
    expect(parsed.entries).toEqual([
      { ts: '2026-05-16T19:42:11.501234Z', message: 'Starting nginx.service - A high performance web server and a reverse proxy server...', priority: 6, identifier: 'systemd', pid: 1 },
      { ts: '2026-05-16T19:42:11.541200Z', message: 'nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)', priority: 3, identifier: 'nginx', pid: 812 },
      { ts: '2026-05-16T19:42:11.541705Z', message: 'binary \uFFFD msg', priority: 6, identifier: 'nginx', pid: 812 },
      { ts: '2026-05-16T19:42:11.542001Z', message: "nginx.service: Failed with result 'exit-code'.", priority: 3, identifier: 'systemd', pid: 1 },
      { ts: '2026-05-16T19:42:11.542688Z', message: '', identifier: 'systemd', pid: 1 },
    ]);
    expect(validateJournalTailOutput({ unit: 'nginx.service', entries: parsed.entries, truncated: false })).toBe(true);
  });

  it('skips lines that are not JSON objects with a timestamp; cuts long messages; keeps the newest within the budget', () => {
    const long = 'm'.repeat(70_000);
    const text = ['not json', '[1,2]', '{"MESSAGE":"no ts"}', JSON.stringify({ __REALTIME_TIMESTAMP: '1000000', MESSAGE: long }), ''].join('\n');
    const p = parseJournalJson(text);
    expect(p.skipped).toBe(3);
    expect(p.entries).toHaveLength(1);
    expect(p.entries[0]!.message.length).toBe(65536);
    expect(p.entries[0]!.ts).toBe('1970-01-01T00:00:01.000000Z');
    expect(p.truncated).toBe(true);

    const many = Array.from({ length: 10 }, (_, i) => JSON.stringify({ __REALTIME_TIMESTAMP: String(1_000_000 * (i + 1)), MESSAGE: `msg${i} ${'x'.repeat(100)}` })).join('\n');
    const cut = parseJournalJson(many, 600);
    expect(cut.truncated).toBe(true);
    expect(cut.entries.length).toBeGreaterThan(0);
    expect(cut.entries.length).toBeLessThan(10);
    expect(cut.entries.at(-1)!.message.startsWith('msg9')).toBe(true);
  });

  it('realtimeToIso keeps microseconds and refuses junk', () => {
    expect(realtimeToIso('1778960531501234')).toBe('2026-05-16T19:42:11.501234Z');
    expect(realtimeToIso('')).toBeNull();
    expect(realtimeToIso('-1')).toBeNull();
    expect(realtimeToIso('12ab')).toBeNull();
  });

  it('runs `journalctl -u <unit> -n <lines> --output=json --no-pager` (default 100 lines)', async () => {
    const { runner, calls } = fakeRunner(() => ({ stdout: fixture('journalctl-nginx.jsonl') }));
    const r = createProbeRegistry({ commandRunner: runner });
    const res = await r.invoke({ probe: 'journal.tail', args: { unit: 'nginx.service', lines: 5 }, timeout_ms: 5000 });
    await r.invoke({ probe: 'journal.tail', args: { unit: 'sshd' }, timeout_ms: 5000 });
    expect(calls.map((c) => [c.command, ...c.args])).toEqual([
      ['journalctl', '-u', 'nginx.service', '-n', '5', '--output=json', '--no-pager'],
      ['journalctl', '-u', 'sshd', '-n', '100', '--output=json', '--no-pager'],
    ]);
    expect(calls[0]!.args).toEqual(journalctlArgs('nginx.service', 5));
    expect(res.exit_code).toBe(0);
    expect((res.output as { entries: unknown[] }).entries).toHaveLength(5);
  });

  it('output that is not JSON at all is -32011', async () => {
    const { runner } = fakeRunner(() => ({ stdout: '-- No entries --\n' }));
    const r = createProbeRegistry({ commandRunner: runner });
    const err = await rpcError(r.invoke({ probe: 'journal.tail', args: { unit: 'nginx.service' }, timeout_ms: 5000 }));
    expect(err.code).toBe(-32011);
    expect(err.data.stderr).toMatch(/not JSON/);
  });

  it('no entries (unknown unit) is an empty list', async () => {
    const { runner } = fakeRunner(() => ({ stdout: '' }));
    const r = createProbeRegistry({ commandRunner: runner });
    const res = await r.invoke({ probe: 'journal.tail', args: { unit: 'nope.service' }, timeout_ms: 5000 });
    expect(res.output).toEqual({ unit: 'nope.service', entries: [], truncated: false });
  });
});

describe('missing tools: -32011 with a clear stderr', () => {
  it('systemctl and journalctl not on PATH (real spawn, empty PATH)', async () => {
    const empty = join(dir, 'empty-bin');
    mkdirSync(empty);
    const r = createProbeRegistry({ env: { PATH: empty } });
    const e1 = await rpcError(r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'nginx.service' }, timeout_ms: 5000 }));
    expect(e1).toBeInstanceOf(ProbeExecutionFailedError);
    expect(e1.toJSON()).toEqual({ code: -32011, message: 'ProbeExecutionFailed', data: { stderr: 'systemctl not found on this host', exit_code: null, probe: 'exec.systemctl_status' } });
    const e2 = await rpcError(r.invoke({ probe: 'journal.tail', args: { unit: 'nginx.service' }, timeout_ms: 5000 }));
    expect(e2.data).toEqual({ stderr: 'journalctl not found on this host', exit_code: null, probe: 'journal.tail' });
  });

  it('a configured path that does not exist', async () => {
    const r = createProbeRegistry({ commands: { systemctl: join(dir, 'no', 'systemctl') } });
    const err = await rpcError(r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'nginx.service' }, timeout_ms: 5000 }));
    expect(err.data.stderr).toBe('systemctl not found on this host');
  });

  it('spawnCommand rejects with CommandNotFoundError', async () => {
    await expect(spawnCommand(join(dir, 'nope'), [], { signal: new AbortController().signal })).rejects.toBeInstanceOf(CommandNotFoundError);
  });
});

describe('fake executables on PATH (the real spawn path)', () => {
  function fakeTool(name: string, body: string): string {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const file = join(bin, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
    return bin;
  }

  it('systemctl receives its arguments verbatim (no shell) and its output is parsed', async () => {
    const argvFile = join(dir, 'argv');
    const bin = fakeTool('systemctl', `printf '%s\\n' "$@" > "${argvFile}"; printf 'TZ=%s\\n' "$TZ" >> "${argvFile}"; cat "${join(FIXTURES, 'systemctl-show-running.txt')}"`);
    const r = createProbeRegistry({ env: { PATH: `${bin}:/usr/bin:/bin` } });
    const res = await r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'getty@tty1.service' }, timeout_ms: 5000 });
    expect(res).toMatchObject({ output: { active: true, substate: 'running' }, exit_code: 0, stderr: null });
    expect(readFileSync(argvFile, 'utf8').split('\n')).toEqual(['show', '--property=ActiveState,SubState,LoadState,MainPID,ActiveEnterTimestamp', '--no-pager', '--', 'getty@tty1.service', 'TZ=UTC', '']);
  });

  it('a failing systemctl: -32011 with its stderr (cut to 4 KiB) and exit code', async () => {
    const bin = fakeTool('systemctl', `echo "System has not been booted with systemd as init system (PID 1). Can't operate." >&2; head -c 20000 /dev/zero | tr '\\0' 'e' >&2; exit 1`);
    const r = createProbeRegistry({ env: { PATH: `${bin}:/usr/bin:/bin` } });
    const err = await rpcError(r.invoke({ probe: 'exec.systemctl_status', args: { unit: 'nginx.service' }, timeout_ms: 5000 }));
    expect(err.code).toBe(-32011);
    expect(err.data.exit_code).toBe(1);
    expect(err.data.stderr).toMatch(/^System has not been booted with systemd/);
    expect(err.data.stderr.length).toBeLessThanOrEqual(4096);
  });

  it('journalctl with recorded JSON', async () => {
    const bin = fakeTool('journalctl', `cat "${join(FIXTURES, 'journalctl-nginx.jsonl')}"`);
    const r = createProbeRegistry({ env: { PATH: `${bin}:/usr/bin:/bin` } });
    const res = await r.invoke({ probe: 'journal.tail', args: { unit: 'nginx.service', lines: 5 }, timeout_ms: 5000 });
    expect((res.output as { entries: unknown[] }).entries).toHaveLength(5);
    expect(validateJournalTailOutput(res.output)).toBe(true);
  });

  it('spawnCommand passes shell metacharacters literally and kills a child that floods stdout', async () => {
    const signal = new AbortController().signal;
    const res = await spawnCommand('printf', ['%s|', '$(reboot)', ';rm -rf /', '`id`'], { signal });
    expect(res.stdout.toString()).toBe('$(reboot)|;rm -rf /|`id`|');
    const flood = await spawnCommand('yes', [], { signal, maxStdoutBytes: 100_000 });
    expect(flood.stdoutTruncated).toBe(true);
    expect(flood.stdout.length).toBe(100_000);
    expect(flood.exitSignal).toBe('SIGKILL');
    await expect(spawnCommand('echo', ['a\u0000b'], { signal })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG_VALUE' });
  });
});
