// Opening the WebSocket (seed 2): subprotocol cortex.v1 offered and required back,
// no permessage-deflate, ws:// only when allowed, wss:// with the system CAs plus an
// optional extra CA file; through an HTTP(S) proxy when one is set (./proxy.ts).

import { readFileSync } from 'node:fs';
import { LIMITS, SUBPROTOCOL } from '@cortex/agent-protocol';
import type WebSocketClass from 'ws';
import { WebSocket, tlsModule } from './cjs.js';
import { proxyAgent, proxyFor, proxyRefusedMessage, proxySettingProblem, redactProxy, type ProxyRefusal } from './proxy.js';

type WebSocket = WebSocketClass;

export class UpgradeError extends Error {
  override readonly name = 'UpgradeError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Checks a server URL; returns a message naming the problem, or null. */
export function checkServerUrl(url: string, allowInsecure: boolean): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `server URL "${url}" is not a URL; give the full WebSocket URL, e.g. wss://logs.example.com/ws/agent`;
  }
  if (u.protocol === 'ws:') {
    // Seed 2: plain ws:// is for loopback only, and only with allow_insecure. A ws:// URL to
    // any other host would carry the token in clear text, so --allow-insecure does not
    // permit it (DECISIONS K3): such a server needs wss:// (--ca for a private CA).
    if (!isLoopbackHostname(u.hostname)) {
      return `server URL ${url} is unencrypted ws:// to a non-loopback host; ws:// is allowed only to loopback (127.0.0.0/8, ::1, localhost) with --allow-insecure: use wss:// (and --ca FILE for a private CA)`;
    }
    return allowInsecure ? null : `server URL ${url} is unencrypted ws://; use wss:// or pass --allow-insecure (loopback/testing only)`;
  }
  if (u.protocol !== 'wss:') return `server URL ${url} must start with wss:// (or ws:// with --allow-insecure)`;
  return null;
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and localhost: the hosts plain ws:// may reach. */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export interface OpenOptions {
  caFile?: string | null;
  /** Upgrade (TCP + TLS + HTTP) timeout, ms. */
  timeoutMs?: number;
  /** agent.json `proxy`: a proxy URL, or null for none; undefined: the environment's (HTTPS_PROXY …; ./proxy.ts). */
  proxy?: string | null;
  /** Told the proxy this attempt goes through (without its user and password), or null for a direct one. */
  onRoute?: (proxy: string | null) => void;
}

/**
 * Resolves with an open socket whose subprotocol is cortex.v1; rejects with
 * UpgradeError (HTTP error, TLS/DNS/TCP failure, missing or wrong subprotocol, timeout, a proxy
 * that refused the tunnel).
 */
export async function openSocket(url: string, options: OpenOptions = {}): Promise<WebSocket> {
  let ca: string[] | undefined;
  if (options.caFile) {
    try {
      ca = [...tlsModule().rootCertificates, readFileSync(options.caFile, 'utf8')];
    } catch (err) {
      throw new UpgradeError(`cannot read CA file ${options.caFile}: ${(err as { code?: string }).code ?? (err as Error).message}`);
    }
  }
  // A server on this machine (loopback) is never reached through a proxy: the proxy's loopback is not ours.
  let target: URL | null = null;
  try {
    target = new URL(url);
  } catch {
    // new WebSocket says so below
  }
  const host = target?.host ?? '';
  const proxy = target === null || isLoopbackHostname(target.hostname) ? null : await proxyFor(url, options.proxy);
  // agent.json's proxy was checked at start; one from the environment is checked here
  const problem = proxy === null ? null : proxySettingProblem(proxy);
  if (problem !== null) throw new UpgradeError(`the proxy of the environment (HTTPS_PROXY, HTTP_PROXY or ALL_PROXY): ${problem}`);
  options.onRoute?.(proxy === null ? null : redactProxy(proxy));
  let refused: ProxyRefusal | null = null;
  const agent = proxy === null ? undefined : await proxyAgent(proxy, (r) => (refused = r));
  const through = proxy === null ? '' : ` (through the proxy ${redactProxy(proxy)})`;
  return new Promise((resolve, reject) => {
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, SUBPROTOCOL, {
        perMessageDeflate: false,
        handshakeTimeout: options.timeoutMs ?? 10_000,
        maxPayload: LIMITS.max_frame_bytes,
        ...(ca ? { ca } : {}),
        ...(agent ? { agent } : {}),
      });
    } catch (err) {
      reject(new UpgradeError(`cannot connect to ${url}${through}: ${(err as Error).message}`));
      return;
    }
    let settled = false;
    const fail = (msg: string, status?: number) => {
      if (settled) return;
      settled = true;
      ws.removeAllListeners('open');
      ws.on('error', () => undefined);
      try {
        ws.terminate();
      } catch {
        // already gone
      }
      reject(new UpgradeError(msg, status));
    };
    ws.once('unexpected-response', (_req, res) => {
      if (refused !== null && proxy !== null) return fail(proxyRefusedMessage(proxy, host, refused), res.statusCode);
      const retry = res.headers['retry-after'];
      const wait = typeof retry === 'string' && /^\d{1,6}$/.test(retry) ? ` (Retry-After ${retry} s)` : '';
      fail(`${`server refused the WebSocket upgrade: HTTP ${res.statusCode ?? '?'} ${res.statusMessage ?? ''}`.trim()}${wait}`, res.statusCode);
    });
    ws.once('error', (err) => fail(`cannot connect to ${url}${through}: ${err.message}`));
    ws.once('open', () => {
      if (settled) return;
      if (ws.protocol !== SUBPROTOCOL) {
        fail(`server did not confirm subprotocol ${SUBPROTOCOL} (got "${ws.protocol}")`);
        return;
      }
      settled = true;
      ws.removeAllListeners('error');
      resolve(ws);
    });
  });
}
