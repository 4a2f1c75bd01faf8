// Client addresses behind a trusted reverse proxy, and the per-address upgrade limit
// (DESIGN.md 5.8).
import { BlockList, isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';

function plain(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? (m[1] as string) : address;
}

export class TrustedProxies {
  private readonly list = new BlockList();
  /** No proxy configured: every peer is a client (skips BlockList.check on each upgrade). */
  private readonly none: boolean;

  constructor(entries: readonly string[]) {
    this.none = entries.length === 0;
    for (const entry of entries) {
      const [addr, prefix] = entry.split('/');
      const family = isIP(addr ?? '');
      if (family === 0) throw new Error(`trusted proxy ${JSON.stringify(entry)} is not an address or CIDR range`);
      const type = family === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.list.addAddress(addr as string, type);
      else this.list.addSubnet(addr as string, Number(prefix), type);
    }
  }

  has(address: string): boolean {
    if (this.none) return false;
    const a = plain(address);
    const family = isIP(a);
    if (family === 0) return false;
    return this.list.check(a, family === 6 ? 'ipv6' : 'ipv4');
  }

  /**
   * The address to rate-limit, or undefined when the peer is a trusted proxy that sent no
   * forwarded address (a local agent or test: not limited). With X-Forwarded-For from a
   * trusted proxy, the rightmost address that is not itself a trusted proxy.
   */
  clientAddress(req: IncomingMessage): string | undefined {
    const peer = plain(req.socket.remoteAddress ?? '');
    if (!this.has(peer)) return peer;
    const header = req.headers['x-forwarded-for'];
    const value = Array.isArray(header) ? header.join(',') : header;
    if (value === undefined || value.trim() === '') return undefined;
    const hops = value.split(',').map((s) => plain(s.trim())).filter((s) => s !== '');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i] as string;
      if (!this.has(hop)) return hop;
    }
    return hops[0];
  }
}

/**
 * At most `perMinute` upgrade attempts per address in any 60 s window (0 disables). Timed with
 * performance.now(): by the wall clock, a step back (`date -s`, NTP) kept every attempt in the
 * window for as long as the step, and an address that reached the limit was refused that long
 * (DECISIONS G45).
 */
export class UpgradeRateLimiter {
  private readonly attempts = new Map<string, number[]>();
  private lastSweep = performance.now();

  constructor(private readonly perMinute: number) {}

  /** Records an attempt; false when it is over the limit. `now`: performance.now()'s time. */
  allow(address: string, now = performance.now()): boolean {
    if (this.perMinute <= 0) return true;
    if (now - this.lastSweep > 60_000) this.sweep(now);
    const since = now - 60_000;
    const list = (this.attempts.get(address) ?? []).filter((t) => t > since);
    if (list.length >= this.perMinute) {
      this.attempts.set(address, list);
      return false;
    }
    list.push(now);
    this.attempts.set(address, list);
    return true;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [k, list] of this.attempts) if (list.every((t) => t <= now - 60_000)) this.attempts.delete(k);
  }
}
