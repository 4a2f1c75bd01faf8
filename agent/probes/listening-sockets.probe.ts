// net.listening_sockets: /proc/net/tcp, tcp6, udp, udp6 (the agent's network namespace).
// TCP sockets in LISTEN (st 0A) and UDP sockets that are not connected (st 07). The owning
// process comes from matching the socket inode against the links in /proc/<pid>/fd
// ("socket:[inode]"); without privileges only the agent user's processes are visible, and the
// others get pid null.

import { readdir, readFile, readlink } from 'node:fs/promises';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { ProbeExecutionFailedError, type ListeningSocket, type NetListeningSocketsOutput } from '@cortex/agent-protocol';
import { defineProbe } from './types.js';

export type SocketProtocol = 'tcp' | 'tcp6' | 'udp' | 'udp6';
export const SOCKET_FILES: readonly SocketProtocol[] = ['tcp', 'tcp6', 'udp', 'udp6'];
export const MAX_SOCKETS = 4096;

const TCP_LISTEN = '0A';
const UDP_UNCONNECTED = '07';

/**
 * The kernel prints each 32-bit word of an address with %08X of its in-memory (network order)
 * value read as a host-order integer, so on little-endian hosts the bytes of each word appear
 * reversed. Returns the address bytes in network order.
 */
export function addressBytes(hex: string, hostEndianness: 'LE' | 'BE' = endianness()): Buffer | null {
  if (!/^[0-9A-Fa-f]+$/.test(hex) || (hex.length !== 8 && hex.length !== 32)) return null;
  const buf = Buffer.alloc(hex.length / 2);
  for (let i = 0; i < hex.length / 8; i++) {
    const word = parseInt(hex.slice(i * 8, i * 8 + 8), 16);
    if (hostEndianness === 'LE') buf.writeUInt32LE(word, i * 4);
    else buf.writeUInt32BE(word, i * 4);
  }
  return buf;
}

/** IPv4 dotted quad, or IPv6 in RFC 5952 form (IPv4-mapped addresses as ::ffff:a.b.c.d). */
export function formatAddress(bytes: Buffer): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const mapped = bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  if (mapped) return `::ffff:${[...bytes.subarray(12)].join('.')}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i));
  // Longest run of zero groups (length >= 2; the first such run on ties) becomes "::".
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

export interface ParsedSocket {
  protocol: SocketProtocol;
  local_address: string;
  port: number;
  inode: number;
  uid: number;
}

/** Listening / unconnected sockets of one /proc/net/<protocol> file. Malformed lines are skipped. */
export function parseProcNet(text: string, protocol: SocketProtocol, hostEndianness: 'LE' | 'BE' = endianness()): ParsedSocket[] {
  const wanted = protocol.startsWith('tcp') ? TCP_LISTEN : UDP_UNCONNECTED;
  const out: ParsedSocket[] = [];
  const lines = text.split('\n');
  for (const line of lines.slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const [local, , state] = [f[1]!, f[2]!, f[3]!];
    if (state.toUpperCase() !== wanted) continue;
    const colon = local.indexOf(':');
    if (colon < 0) continue;
    const bytes = addressBytes(local.slice(0, colon), hostEndianness);
    const port = parseInt(local.slice(colon + 1), 16);
    if (!bytes || !Number.isInteger(port) || port < 0 || port > 65535) continue;
    const uid = Number(f[7]);
    const inode = Number(f[9]);
    out.push({ protocol, local_address: formatAddress(bytes), port, uid: Number.isInteger(uid) ? uid : 0, inode: Number.isInteger(inode) ? inode : 0 });
  }
  return out;
}

/** socket inode → {pid, comm}, for the inodes asked for; stops once all are found. */
async function ownersOf(procRoot: string, inodes: Set<number>, signal: AbortSignal): Promise<Map<number, { pid: number; comm: string | null }>> {
  const owners = new Map<number, { pid: number; comm: string | null }>();
  if (inodes.size === 0) return owners;
  let names: string[];
  try {
    names = await readdir(procRoot);
  } catch {
    return owners;
  }
  for (const name of names) {
    if (!/^[1-9]\d*$/.test(name)) continue;
    signal.throwIfAborted();
    const fdDir = join(procRoot, name, 'fd');
    let fds: string[];
    try {
      fds = await readdir(fdDir);
    } catch {
      continue; // not ours to look at, or gone
    }
    const links = await Promise.all(fds.map((fd) => readlink(join(fdDir, fd)).catch(() => '')));
    let comm: string | null | undefined;
    for (const link of links) {
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (!m) continue;
      const inode = Number(m[1]);
      if (!inodes.has(inode) || owners.has(inode)) continue;
      if (comm === undefined) {
        try {
          comm = (await readFile(join(procRoot, name, 'comm'), 'utf8')).replace(/\n$/, '').slice(0, 64);
        } catch {
          comm = null;
        }
      }
      owners.set(inode, { pid: Number(name), comm });
    }
    if (owners.size === inodes.size) break;
  }
  return owners;
}

export const listeningSocketsProbe = defineProbe('net.listening_sockets', async (_args, ctx) => {
  const root = ctx.settings.procRoot;
  const parsed: ParsedSocket[] = [];
  let readable = 0;
  const problems: string[] = [];
  for (const protocol of SOCKET_FILES) {
    let text: string;
    try {
      text = await readFile(join(root, 'net', protocol), 'utf8');
    } catch (err) {
      problems.push(`${join(root, 'net', protocol)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      continue; // e.g. no IPv6 in this kernel
    }
    readable++;
    parsed.push(...parseProcNet(text, protocol));
  }
  if (readable === 0) throw new ProbeExecutionFailedError({ stderr: `no /proc/net socket tables on this host (${problems.join('; ')})`, exit_code: null, probe: ctx.probe });

  const order = (p: SocketProtocol) => SOCKET_FILES.indexOf(p);
  parsed.sort((a, b) => order(a.protocol) - order(b.protocol) || a.port - b.port || a.local_address.localeCompare(b.local_address));
  const truncated = parsed.length > MAX_SOCKETS;
  const kept = parsed.slice(0, MAX_SOCKETS);
  const owners = await ownersOf(root, new Set(kept.map((s) => s.inode).filter((i) => i > 0)), ctx.signal);
  const sockets: ListeningSocket[] = kept.map((s) => {
    const owner = owners.get(s.inode);
    const out: ListeningSocket = { protocol: s.protocol, local_address: s.local_address, port: s.port, inode: s.inode, uid: s.uid, pid: owner?.pid ?? null };
    if (owner?.comm) out.command = owner.comm;
    return out;
  });
  const output: NetListeningSocketsOutput = { sockets, truncated };
  return { output, exit_code: null, stderr: null };
});
