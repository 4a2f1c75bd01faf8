// Every probe with valid, invalid and hostile args. Invalid args answer -32602 with the failing
// path (under /args) and nothing is run: the fake command runner records no call.
import { describe, expect, it } from 'vitest';
import { InvalidParamsError, PROBES } from '@cortex/agent-protocol';
import { createProbeRegistry } from '../../../agent/probes/index.js';
import { fakeRunner, fixture, rpcError } from './helpers.js';

const HOSTILE_STRINGS = [
  '--help',
  '-h',
  '-',
  '--unit=sshd',
  '../../etc/shadow',
  ';rm -rf /',
  '$(reboot)',
  '`reboot`',
  '| reboot',
  '&& reboot',
  'nginx.service; reboot',
  'nginx service',
  'a\nb',
  'nginx\u0000.service',
  '\u0000',
  '',
  'x'.repeat(257),
  'x'.repeat(100_000),
  '/etc/shadow',
  'MESSAGE=x',
  '*',
  'ngïnx.service',
];

const HOSTILE_PATHS = [
  '--help',
  '-',
  '../../etc/shadow',
  '/var/log/../../etc/shadow',
  '/..',
  '/var/log/..',
  './etc/shadow',
  'etc/shadow',
  ';rm -rf /',
  '$(reboot)',
  '~root/.ssh/id_rsa',
  '/var/log/x\u0000/etc/shadow',
  '\u0000/etc/shadow',
  '',
  '/' + 'a'.repeat(4096),
  '/' + 'a/'.repeat(50_000),
];

function registry() {
  const { runner, calls } = fakeRunner(() => ({ stdout: fixture('systemctl-show-running.txt') }));
  const r = createProbeRegistry({ commandRunner: runner, allowedTailPaths: ['/var/log'] });
  return { r, calls };
}

async function expectInvalid(probe: string, args: unknown, path: string) {
  const { r, calls } = registry();
  const err = await rpcError(r.invoke({ probe, args, timeout_ms: 2000 }));
  expect(err, `${probe} ${JSON.stringify(args).slice(0, 80)}`).toBeInstanceOf(InvalidParamsError);
  expect(err.code).toBe(-32602);
  expect(err.data.method).toBe('probe.request');
  expect(err.data.errors.map((e: { path: string }) => e.path)).toContain(path);
  expect(calls).toEqual([]);
}

describe('probe args: hostile unit names (exec.systemctl_status, journal.tail)', () => {
  for (const probe of ['exec.systemctl_status', 'journal.tail']) {
    it(`${probe} refuses every hostile unit with -32602 at /args/unit, running nothing`, async () => {
      for (const unit of HOSTILE_STRINGS) await expectInvalid(probe, { unit }, '/args/unit');
    });
    it(`${probe} refuses non-string units, missing units and unknown properties`, async () => {
      await expectInvalid(probe, { unit: 42 }, '/args/unit');
      await expectInvalid(probe, { unit: ['nginx.service'] }, '/args/unit');
      await expectInvalid(probe, {}, '/args/unit');
      await expectInvalid(probe, { unit: 'nginx.service', extra: '--help' }, '/args/extra');
      await expectInvalid(probe, null, '/args');
      await expectInvalid(probe, 'nginx.service', '/args');
    });
  }

  it('accepts real unit names (foo.service, template instances, slices, mounts)', async () => {
    for (const unit of ['nginx.service', 'nginx', 'getty@tty1.service', 'user-1000.slice', 'var-log.mount', 'systemd-journald.socket', 'dbus-:1.2-org.freedesktop.foo@0.service']) {
      const { r, calls } = registry();
      await r.invoke({ probe: 'exec.systemctl_status', args: { unit }, timeout_ms: 2000 });
      expect(calls).toHaveLength(1);
      expect(calls[0]!.args.at(-1)).toBe(unit);
      expect(calls[0]!.args.at(-2)).toBe('--');
    }
  });

  it('journal.tail: lines must be an integer in 1..1000', async () => {
    for (const lines of [0, -1, 1001, 1.5, '10', '--lines=1000000', null]) await expectInvalid('journal.tail', { unit: 'nginx.service', lines }, '/args/lines');
  });
});

describe('probe args: hostile paths (fs.disk_usage, file.tail)', () => {
  for (const probe of ['fs.disk_usage', 'file.tail']) {
    it(`${probe} refuses every hostile path with -32602 at /args/path`, async () => {
      for (const path of HOSTILE_PATHS) await expectInvalid(probe, { path }, '/args/path');
    });
    it(`${probe} refuses non-string paths, missing paths and unknown properties`, async () => {
      await expectInvalid(probe, { path: 1 }, '/args/path');
      await expectInvalid(probe, {}, '/args/path');
      await expectInvalid(probe, { path: '/var/log', follow: true }, '/args/follow');
      await expectInvalid(probe, [], '/args');
    });
  }

  it('fs.disk_usage passes shell metacharacters literally (no shell): /tmp/$(reboot) is just a missing path', async () => {
    const { r } = registry();
    const err = await rpcError(r.invoke({ probe: 'fs.disk_usage', args: { path: '/tmp/$(reboot)' }, timeout_ms: 2000 }));
    expect(err.code).toBe(-32011);
    expect(err.data.stderr).toMatch(/ENOENT/);
    expect(err.data.stderr).toContain('/tmp/$(reboot)');
  });

  it('file.tail: lines must be an integer in 1..1000', async () => {
    for (const lines of [0, 1001, 2.5, '5']) await expectInvalid('file.tail', { path: '/var/log/syslog', lines }, '/args/lines');
  });
});

describe('probe args: probes without args and proc.top', () => {
  for (const probe of ['sys.uptime', 'sys.os_release', 'net.listening_sockets']) {
    it(`${probe} takes {} only`, async () => {
      await expectInvalid(probe, { '--help': true }, '/args/--help');
      await expectInvalid(probe, { path: '../../etc/shadow' }, '/args/path');
      await expectInvalid(probe, null, '/args');
      await expectInvalid(probe, [], '/args');
      await expectInvalid(probe, '$(reboot)', '/args');
    });
  }

  it('proc.top: by is cpu or memory, limit 1..100', async () => {
    for (const by of ['--help', 'cpu; reboot', '$(reboot)', 'CPU', '', 1]) await expectInvalid('proc.top', { by }, '/args/by');
    for (const limit of [0, 101, -5, 1.5, '10', 1e9]) await expectInvalid('proc.top', { limit }, '/args/limit');
    await expectInvalid('proc.top', { by: 'cpu', sort: 'x' }, '/args/sort');
  });

  it('every contract probe is covered by these tables', () => {
    const covered = ['exec.systemctl_status', 'journal.tail', 'fs.disk_usage', 'file.tail', 'sys.uptime', 'sys.os_release', 'net.listening_sockets', 'proc.top'];
    // the tables name only contract probes (a probe added by an extension brings its own tests)
    expect(PROBES.map((p) => p.name)).toEqual(expect.arrayContaining(covered));
  });
});
