// What a trusted reverse proxy says about the request as the browser or agent made it
// (DECISIONS I26): the scheme (X-Forwarded-Proto), the host (X-Forwarded-Host) and the path
// prefix it strips (X-Forwarded-Prefix). Read only from a configured trusted proxy; from any
// other peer these headers mean nothing. Used for the session cookie's Secure flag, the
// sign-in's same-origin check and the server URL shown in enroll commands; never for who may
// use the admin API (./access.ts decides that, and treats these headers as "forwarded").
import type { IncomingHttpHeaders } from 'node:http';

export interface Forwarded {
  /** 'https' when the proxy says the client used TLS. */
  proto: 'http' | 'https' | undefined;
  /** host[:port] the client asked for. */
  host: string | undefined;
  /** The path the proxy serves the server under ('' for none; else '/a/b', no trailing slash). */
  prefix: string;
}

interface ForwardedRequest {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined };
}

/** The first of a header's comma-separated values (proxies in a chain append theirs). */
function first(h: string | string[] | undefined): string | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  const s = v?.split(',')[0]?.trim();
  return s === undefined || s === '' ? undefined : s;
}

// host or IPv4, or [IPv6], then an optional port: nothing that could carry a path or a scheme.
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const PREFIX = /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+\/?$/;

/** What the proxy says, when the peer is a trusted proxy; undefined otherwise. */
export function forwarded(req: ForwardedRequest, isTrustedProxy: ((address: string) => boolean) | undefined): Forwarded | undefined {
  const peer = req.socket.remoteAddress ?? '';
  if (isTrustedProxy === undefined || !isTrustedProxy(peer)) return undefined;
  const proto = first(req.headers['x-forwarded-proto'])?.toLowerCase();
  const host = first(req.headers['x-forwarded-host']);
  const prefix = first(req.headers['x-forwarded-prefix']);
  return {
    proto: proto === 'https' || proto === 'http' ? proto : undefined,
    host: host !== undefined && HOST.test(host) ? host : undefined,
    prefix: prefix !== undefined && PREFIX.test(prefix) && !prefix.split('/').some((x) => x === '.' || x === '..') ? prefix.replace(/\/$/, '') : '',
  };
}

/** The host the client asked for: the trusted proxy's X-Forwarded-Host, else the Host header. */
export function clientHost(req: ForwardedRequest, isTrustedProxy: ((address: string) => boolean) | undefined): string | undefined {
  return forwarded(req, isTrustedProxy)?.host ?? (typeof req.headers['host'] === 'string' ? req.headers['host'] : undefined);
}

/** Whether the client reached us over TLS: ours, or a trusted proxy's (X-Forwarded-Proto: https). */
export function clientUsesTls(req: ForwardedRequest, tls: boolean, isTrustedProxy: ((address: string) => boolean) | undefined): boolean {
  return tls || forwarded(req, isTrustedProxy)?.proto === 'https';
}
