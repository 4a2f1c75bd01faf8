// In-process probes: real runs on this (Linux) machine validated with the generated output
// validators, and parsing of recorded /proc and os-release content.
import { createServer, type Server } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  validateFsDiskUsageOutput,
  validateNetListeningSocketsOutput,
  validateProcTopOutput,
  validateSysOsReleaseOutput,
  validateSysUptimeOutput,
  type FsDiskUsageOutput,
  type NetListeningSocketsOutput,
  type ProcTopOutput,
  type SysOsReleaseOutput,
  type SysUptimeOutput,
} from '@cortex/agent-protocol';
import { createProbeRegistry } from '../../../agent/probes/index.js';
import { diskUsageFromStatfs } from '../../../agent/probes/disk-usage.probe.js';
import { parseBtime, parseLoadavg, parseProcUptime } from '../../../agent/probes/uptime.probe.js';
import { osReleaseOutput, parseOsRelease } from '../../../agent/probes/os-release.probe.js';
import { parsePasswd, parseProcStat, parseProcStatus, rankTop } from '../../../agent/probes/proc-top.probe.js';
import { addressBytes, formatAddress, parseProcNet } from '../../../agent/probes/listening-sockets.probe.js';
import { FIXTURES, fixture, rpcError } from './helpers.js';

const linux = process.platform === 'linux';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(os.tmpdir(), 'cortex-host-probes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run<T>(probe: string, args: unknown = {}, options: Parameters<typeof createProbeRegistry>[0] = {}): Promise<{ output: T; duration_ms: number; exit_code?: number | null }> {
  const r = createProbeRegistry(options);
  const res = await r.invoke({ probe, args, timeout_ms: 10_000 });
  return res as { output: T; duration_ms: number };
}

describe.runIf(linux)('real runs on this machine', () => {
  it('fs.disk_usage of / and of the temp dir', async () => {
    for (const path of ['/', dir]) {
      const { output } = await run<FsDiskUsageOutput>('fs.disk_usage', { path });
      expect(validateFsDiskUsageOutput(output)).toBe(true);
      expect(output.path).toBe(path);
      expect(output.total_bytes).toBeGreaterThan(0);
      expect(output.used_bytes + output.free_bytes).toBeLessThanOrEqual(output.total_bytes);
    }
    const err = await rpcError(run('fs.disk_usage', { path: join(dir, 'missing') }));
    expect(err.code).toBe(-32011);
    expect(err.data).toMatchObject({ exit_code: null, probe: 'fs.disk_usage', stderr: expect.stringMatching(/ENOENT/) });
  });

  it('sys.uptime', async () => {
    const { output } = await run<SysUptimeOutput>('sys.uptime');
    expect(validateSysUptimeOutput(output)).toBe(true);
    expect(output.uptime_secs).toBeGreaterThan(0);
    const boot = Date.parse(output.boot_time);
    // boot_time + uptime ≈ now (btime has one-second resolution; allow for clock adjustments)
    expect(Math.abs(boot + output.uptime_secs * 1000 - Date.now())).toBeLessThan(120_000);
  });

  it('sys.os_release', async () => {
    const { output } = await run<SysOsReleaseOutput>('sys.os_release');
    expect(validateSysOsReleaseOutput(output)).toBe(true);
    expect(output.id.length).toBeGreaterThan(0);
    expect(['/etc/os-release', '/usr/lib/os-release']).toContain(output.source);
  });

  it('proc.top by cpu and by memory finds this process', async () => {
    // Keep this process busy for the whole sampling window so it ranks by CPU: busy slices of
    // ~5 ms with the event loop let through between them (one long loop would block the probe's
    // own /proc reads, so its first sample came after the loop and the window saw no CPU).
    let done = false;
    const byCpu = run<ProcTopOutput>('proc.top', { by: 'cpu', limit: 100 }).finally(() => (done = true));
    while (!done) {
      const slice = Date.now() + 5;
      while (Date.now() < slice) Math.sqrt(Math.random());
      await new Promise<void>((r) => setImmediate(r));
    }
    const { output } = await byCpu;
    expect(validateProcTopOutput(output)).toBe(true);
    expect(output.by).toBe('cpu');
    expect(output.sample_ms).toBeGreaterThanOrEqual(190);
    expect(output.processes.length).toBeGreaterThan(0);
    expect(output.processes.length).toBeLessThanOrEqual(100);
    const cpus = output.processes.map((p) => p.cpu_percent);
    expect(cpus).toEqual([...cpus].sort((a, b) => b - a));
    const me = output.processes.find((p) => p.pid === process.pid);
    expect(me).toBeDefined();
    expect(me!.cpu_percent).toBeGreaterThan(0);
    expect(me!.mem_rss_bytes).toBeGreaterThan(1024 * 1024);
    expect(me!.uid).toBe(process.getuid!());

    const mem = (await run<ProcTopOutput>('proc.top', { by: 'memory', limit: 3 })).output;
    expect(validateProcTopOutput(mem)).toBe(true);
    expect(mem.processes).toHaveLength(3);
    const rss = mem.processes.map((p) => p.mem_rss_bytes);
    expect(rss).toEqual([...rss].sort((a, b) => b - a));

    const dflt = (await run<ProcTopOutput>('proc.top', {})).output;
    expect(dflt.by).toBe('cpu');
    expect(dflt.processes.length).toBeLessThanOrEqual(10);
  });

  describe('net.listening_sockets', () => {
    let tcp: Server | undefined;
    let tcp6: Server | undefined;
    let udp: UdpSocket | undefined;
    afterEach(async () => {
      await Promise.all([tcp, tcp6].map((s) => (s ? new Promise((r) => s.close(r)) : undefined)));
      udp?.close();
      tcp = tcp6 = udp = undefined;
    });

    it('finds a TCP listener and a UDP socket opened by this process, with its pid', async () => {
      tcp = createServer();
      await new Promise<void>((r) => tcp!.listen(0, '127.0.0.1', r));
      const tcpPort = (tcp.address() as { port: number }).port;
      udp = createSocket('udp4');
      await new Promise<void>((r) => udp!.bind(0, '127.0.0.1', r));
      const udpPort = udp.address().port;
      let tcp6Port: number | null = null;
      try {
        tcp6 = createServer();
        await new Promise<void>((res, rej) => {
          tcp6!.once('error', rej);
          tcp6!.listen(0, '::1', res);
        });
        tcp6Port = (tcp6.address() as { port: number }).port;
      } catch {
        tcp6 = undefined; // no IPv6 loopback here
      }

      const { output } = await run<NetListeningSocketsOutput>('net.listening_sockets');
      expect(validateNetListeningSocketsOutput(output)).toBe(true);
      expect(output.truncated).toBe(false);
      expect(output.sockets).toContainEqual(expect.objectContaining({ protocol: 'tcp', local_address: '127.0.0.1', port: tcpPort, pid: process.pid, command: expect.any(String) }));
      expect(output.sockets).toContainEqual(expect.objectContaining({ protocol: 'udp', local_address: '127.0.0.1', port: udpPort, pid: process.pid }));
      if (tcp6Port !== null) expect(output.sockets).toContainEqual(expect.objectContaining({ protocol: 'tcp6', local_address: '::1', port: tcp6Port, pid: process.pid }));
    });
  });
});

describe('recorded /proc/net parsing', () => {
  it('tcp: LISTEN sockets only, addresses and ports decoded (little-endian host)', () => {
    expect(parseProcNet(fixture('proc-net-tcp.txt'), 'tcp', 'LE')).toEqual([
      { protocol: 'tcp', local_address: '0.0.0.0', port: 22, uid: 0, inode: 18213 },
      { protocol: 'tcp', local_address: '127.0.0.1', port: 3306, uid: 105, inode: 21455 },
      { protocol: 'tcp', local_address: '127.0.0.1', port: 631, uid: 0, inode: 19987 },
    ]);
  });

  it('tcp6: ::, ::1, IPv4-mapped and link-local in RFC 5952 form', () => {
    expect(parseProcNet(fixture('proc-net-tcp6.txt'), 'tcp6', 'LE').map((s) => [s.local_address, s.port, s.uid])).toEqual([
      ['::', 22, 0],
      ['::1', 631, 0],
      ['::ffff:127.0.0.1', 8080, 1000],
      ['fe80::5254:ff:5634:12fe', 443, 0],
    ]);
  });

  it('udp and udp6: unconnected sockets only', () => {
    expect(parseProcNet(fixture('proc-net-udp.txt'), 'udp', 'LE').map((s) => [s.local_address, s.port])).toEqual([
      ['127.0.0.53', 53],
      ['0.0.0.0', 68],
    ]);
    expect(parseProcNet(fixture('proc-net-udp6.txt'), 'udp6', 'LE').map((s) => [s.local_address, s.port])).toEqual([['::', 546]]);
  });

  it('big-endian hosts print words in network order', () => {
    expect(formatAddress(addressBytes('7F000001', 'BE')!)).toBe('127.0.0.1');
    expect(formatAddress(addressBytes('0100007F', 'LE')!)).toBe('127.0.0.1');
    expect(addressBytes('XYZ', 'LE')).toBeNull();
    expect(addressBytes('0100007F00', 'LE')).toBeNull();
  });

  it('formatAddress compresses the longest zero run only', () => {
    const hex = (h: string) => Buffer.from(h, 'hex');
    expect(formatAddress(hex('20010db8000000000001000000000001'))).toBe('2001:db8::1:0:0:1');
    expect(formatAddress(hex('20010db8000100000000000000000001'))).toBe('2001:db8:1::1');
    expect(formatAddress(hex('20010db8000100010001000100010001'))).toBe('2001:db8:1:1:1:1:1:1');
    expect(formatAddress(hex('20010db8000000010001000100010001'))).toBe('2001:db8:0:1:1:1:1:1');
  });

  it('a recorded /proc tree: pids found through /proc/<pid>/fd socket links, null when not visible', async () => {
    const proc = join(dir, 'proc');
    mkdirSync(join(proc, 'net'), { recursive: true });
    for (const p of ['tcp', 'tcp6', 'udp', 'udp6']) writeFileSync(join(proc, 'net', p), fixture(`proc-net-${p}.txt`));
    mkdirSync(join(proc, '812', 'fd'), { recursive: true });
    writeFileSync(join(proc, '812', 'comm'), 'sshd\n');
    symlinkSync('socket:[18213]', join(proc, '812', 'fd', '3'));
    symlinkSync('socket:[18215]', join(proc, '812', 'fd', '4'));
    symlinkSync('/dev/null', join(proc, '812', 'fd', '0'));
    mkdirSync(join(proc, '900', 'fd'), { recursive: true });
    writeFileSync(join(proc, '900', 'comm'), 'mysqld\n');
    symlinkSync('socket:[21455]', join(proc, '900', 'fd', '10'));
    const { output } = await run<NetListeningSocketsOutput>('net.listening_sockets', {}, { procRoot: proc });
    expect(validateNetListeningSocketsOutput(output)).toBe(true);
    // Fixtures are little-endian recordings; decode expectations depend on this host's byte order.
    if (os.endianness() === 'LE') {
      expect(output.sockets.slice(0, 3)).toEqual([
        { protocol: 'tcp', local_address: '0.0.0.0', port: 22, inode: 18213, uid: 0, pid: 812, command: 'sshd' },
        { protocol: 'tcp', local_address: '127.0.0.1', port: 631, inode: 19987, uid: 0, pid: null },
        { protocol: 'tcp', local_address: '127.0.0.1', port: 3306, inode: 21455, uid: 105, pid: 900, command: 'mysqld' },
      ]);
      expect(output.sockets.find((s) => s.protocol === 'tcp6' && s.port === 22)).toMatchObject({ pid: 812 });
      expect(output.sockets.map((s) => s.protocol)).toEqual(['tcp', 'tcp', 'tcp', 'tcp6', 'tcp6', 'tcp6', 'tcp6', 'udp', 'udp', 'udp6']);
    }
  });

  it('-32011 when there are no socket tables at all', async () => {
    mkdirSync(join(dir, 'empty-proc'));
    const err = await rpcError(run('net.listening_sockets', {}, { procRoot: join(dir, 'empty-proc') }));
    expect(err.code).toBe(-32011);
    expect(err.data.stderr).toMatch(/no \/proc\/net socket tables/);
  });
});

describe('recorded /proc/<pid> parsing (proc.top)', () => {
  it('parseProcStat takes comm between the first ( and the last ), spaces and parens included', () => {
    const stat = '4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 1000 0 0 0 150 50 0 0 20 0 3 0 123456 100000000 2500 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';
    expect(parseProcStat(stat)).toEqual({ pid: 4242, comm: 'my (odd) proc', state: 'S', ppid: 1, cpuTicks: 200, startTicks: 123456 });
    expect(parseProcStat('garbage')).toBeNull();
    expect(parseProcStat('0 (x) S')).toBeNull();
  });

  it('parseProcStatus reads VmRSS and the real uid; kernel threads have no VmRSS', () => {
    expect(parseProcStatus('Name:\tnginx\nUid:\t33\t33\t33\t33\nVmRSS:\t   10240 kB\n')).toEqual({ rssBytes: 10240 * 1024, uid: 33 });
    expect(parseProcStatus('Name:\tkworker/0:1\nUid:\t0\t0\t0\t0\n')).toEqual({ rssBytes: 0, uid: 0 });
  });

  it('parsePasswd and rankTop', () => {
    expect(parsePasswd('root:x:0:0:root:/root:/bin/bash\n# c\nwww-data:x:33:33::/var/www:/usr/sbin/nologin\nbad\n')).toEqual(new Map([[0, 'root'], [33, 'www-data']]));
    const c = (pid: number, cpu: number, rss: number) => ({ stat: { pid, comm: 'x', state: 'S', ppid: 1, cpuTicks: 0, startTicks: 0 }, cpuPercent: cpu, rssBytes: rss, uid: 0 });
    const all = [c(1, 5, 100), c(2, 50, 10), c(3, 5, 300), c(4, 0, 1000)];
    expect(rankTop(all, 'cpu', 3).map((x) => x.stat.pid)).toEqual([2, 3, 1]);
    expect(rankTop(all, 'memory', 2).map((x) => x.stat.pid)).toEqual([4, 3]);
  });

  it('a recorded /proc tree sampled twice: cpu% from the tick delta, a reused pid is not matched', async () => {
    const proc = join(dir, 'proc');
    const stat = (pid: number, comm: string, ticks: number, start: number) =>
      `${pid} (${comm}) R 1 ${pid} ${pid} 0 -1 0 0 0 0 0 ${ticks} 0 0 0 20 0 1 0 ${start} 1000 10 0`;
    const put = (pid: number, comm: string, ticks: number, start: number, rssKb: number, uid: number) => {
      mkdirSync(join(proc, String(pid)), { recursive: true });
      writeFileSync(join(proc, String(pid), 'stat'), stat(pid, comm, ticks, start));
      writeFileSync(join(proc, String(pid), 'status'), `Name:\t${comm}\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\nVmRSS:\t${rssKb} kB\n`);
    };
    put(10, 'busy', 1000, 5, 2048, 0);
    put(20, 'idle', 10, 6, 409600, 33);
    put(30, 'reused', 0, 7, 10, 0);
    mkdirSync(join(proc, 'self'));
    writeFileSync(join(dir, 'passwd'), 'root:x:0:0::/root:/bin/sh\nwww-data:x:33:33::/:/bin/false\n');
    const r = createProbeRegistry({ procRoot: proc, passwdPath: join(dir, 'passwd'), procTopSampleMs: 1000 });
    const pending = r.invoke({ probe: 'proc.top', args: { by: 'cpu', limit: 5 }, timeout_ms: 10_000 });
    await new Promise((res) => setTimeout(res, 300)); // the first sample (4 small files) is long done
    put(10, 'busy', 1000 + 50, 5, 2048, 0); // 50 ticks = 0.5 s of CPU in a ~1 s window ≈ 50 %
    put(30, 'reused', 500, 99, 10, 0); // same pid, another process
    const out = (await pending).output as ProcTopOutput;
    expect(validateProcTopOutput(out)).toBe(true);
    expect(out.total_processes).toBe(2);
    expect(out.processes.map((p) => p.pid)).toEqual([10, 20]);
    expect(out.processes[0]).toMatchObject({ command: 'busy', state: 'R', ppid: 1, mem_rss_bytes: 2048 * 1024, uid: 0, user: 'root' });
    expect(out.processes[0]!.cpu_percent).toBeGreaterThan(20);
    expect(out.processes[0]!.cpu_percent).toBeLessThanOrEqual(60);
    expect(out.processes[1]).toMatchObject({ command: 'idle', cpu_percent: 0, user: 'www-data', uid: 33 });
    const mem = (await r.invoke({ probe: 'proc.top', args: { by: 'memory', limit: 1 }, timeout_ms: 10_000 })).output as ProcTopOutput;
    expect(mem.processes.map((p) => p.pid)).toEqual([20]);
  });
});

describe('recorded os-release and uptime parsing', () => {
  it('Debian os-release', () => {
    const out = osReleaseOutput('/etc/os-release', parseOsRelease(fixture('os-release-debian.txt')));
    expect(out).toMatchObject({ id: 'debian', name: 'Debian GNU/Linux', pretty_name: 'Debian GNU/Linux 12 (bookworm)', version_id: '12', version_codename: 'bookworm', version: '12 (bookworm)' });
    expect(out.fields['HOME_URL']).toBe('https://www.debian.org/');
    expect(validateSysOsReleaseOutput(out)).toBe(true);
  });

  it('quoting, escapes, comments, defaults, ignored junk', () => {
    const fields = parseOsRelease(fixture('os-release-quirky.txt'));
    expect(fields).toEqual({
      NAME: 'Quirky Linux',
      ID_LIKE: 'rhel centos fedora',
      PRETTY_NAME: 'Quirky "Q" Linux $5 `x` \\ end',
      BUILD_ID: 'rolling',
      VARIANT: 'Server Edition',
    });
    const out = osReleaseOutput('/usr/lib/os-release', fields);
    expect(out).toMatchObject({ id: 'linux', name: 'Quirky Linux', id_like: ['rhel', 'centos', 'fedora'], build_id: 'rolling' });
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(validateSysOsReleaseOutput(out)).toBe(true);
    expect(osReleaseOutput('x', {})).toMatchObject({ id: 'linux', name: 'Linux', pretty_name: 'Linux' });
  });

  it('sys.os_release falls back to the second file, and fails clearly with none', async () => {
    const second = join(FIXTURES, 'os-release-debian.txt');
    const { output } = await run<SysOsReleaseOutput>('sys.os_release', {}, { osReleasePaths: [join(dir, 'missing'), second] });
    expect(output).toMatchObject({ source: second, id: 'debian' });
    const err = await rpcError(run('sys.os_release', {}, { osReleasePaths: [join(dir, 'a'), join(dir, 'b')] }));
    expect(err.code).toBe(-32011);
    expect(err.data.stderr).toMatch(/^no os-release file on this host/);
  });

  it('uptime sources', async () => {
    expect(parseProcUptime('2477.21 4631.52\n')).toBe(2477.21);
    expect(parseProcUptime('x')).toBeNull();
    expect(parseBtime('cpu  1 2 3\nbtime 1778960531\nprocesses 5\n')).toBe(1778960531);
    expect(parseLoadavg('0.52 0.58 0.59 2/345 6789\n')).toEqual({ one: 0.52, five: 0.58, fifteen: 0.59 });
    const proc = join(dir, 'proc');
    mkdirSync(proc);
    writeFileSync(join(proc, 'uptime'), '100.50 200.00\n');
    writeFileSync(join(proc, 'stat'), 'cpu 1 2 3\nbtime 1778960531\n');
    writeFileSync(join(proc, 'loadavg'), '1.00 2.00 3.00 1/2 3\n');
    const { output } = await run<SysUptimeOutput>('sys.uptime', {}, { procRoot: proc });
    expect(output).toEqual({ uptime_secs: 100.5, boot_time: '2026-05-16T19:42:11.000Z', load_average: { one: 1, five: 2, fifteen: 3 } });
  });

  it('disk usage arithmetic (df semantics, no inode figures → null)', () => {
    const out = diskUsageFromStatfs('/data', { bsize: 4096n, blocks: 1000n, bfree: 300n, bavail: 250n, files: 0n, ffree: 0n });
    expect(out).toEqual({ path: '/data', total_bytes: 4096000, used_bytes: 2867200, free_bytes: 1024000, used_percent: 73.68, inodes_total: null, inodes_used: null, inodes_free: null });
    expect(validateFsDiskUsageOutput(out)).toBe(true);
    expect(diskUsageFromStatfs('/', { bsize: 4096n, blocks: 0n, bfree: 0n, bavail: 0n, files: 10n, ffree: 4n })).toMatchObject({ used_percent: 0, inodes_used: 6 });
  });
});
