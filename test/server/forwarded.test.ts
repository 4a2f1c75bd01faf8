// What a trusted reverse proxy says (server/security/forwarded.ts, DECISIONS I26): read only
// from a trusted peer, the first value of each header, and nothing that could smuggle a path,
// a scheme or a header into the URLs built from it.
import { describe, expect, it } from 'vitest';
import { clientHost, clientUsesTls, forwarded } from '../../server/security/forwarded.js';

const trusted = (a: string): boolean => a === '127.0.0.1';
const req = (headers: Record<string, string | string[]>, remoteAddress = '127.0.0.1') => ({ headers, socket: { remoteAddress } });

describe('forwarded()', () => {
  it('reads proto, host and prefix from a trusted proxy; the first of comma-separated values', () => {
    expect(forwarded(req({ 'x-forwarded-proto': 'HTTPS, http', 'x-forwarded-host': 'logs.example.com:8443, inner', 'x-forwarded-prefix': '/cortex/' }), trusted)).toEqual({ proto: 'https', host: 'logs.example.com:8443', prefix: '/cortex' });
    expect(forwarded(req({ 'x-forwarded-host': '[2001:db8::1]:443', 'x-forwarded-prefix': '/a/b' }), trusted)).toEqual({ proto: undefined, host: '[2001:db8::1]:443', prefix: '/a/b' });
    expect(forwarded(req({}), trusted)).toEqual({ proto: undefined, host: undefined, prefix: '' });
  });

  it('ignores every header from a peer that is not a trusted proxy, or without a trust list', () => {
    const h = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' };
    expect(forwarded(req(h, '10.0.0.5'), trusted)).toBeUndefined();
    expect(forwarded(req(h), undefined)).toBeUndefined();
    expect(clientHost(req({ ...h, host: 'real:3100' }, '10.0.0.5'), trusted)).toBe('real:3100');
    expect(clientUsesTls(req(h, '10.0.0.5'), false, trusted)).toBe(false);
    expect(clientUsesTls(req({}, '10.0.0.5'), true, trusted)).toBe(true);
  });

  it('drops values that are not a plain host or path: no scheme, path, userinfo, CRLF or quote gets through', () => {
    for (const host of ['evil.example/path', 'https://evil.example', 'user@evil.example', 'a b', 'evil.example\r\nX: y', '"x"', '-leading.example']) {
      expect(forwarded(req({ 'x-forwarded-host': host }), trusted)?.host, host).toBeUndefined();
    }
    for (const prefix of ['cortex', '//evil.example', '/a b', '/a/../b', '/..', '/a/./b', '/a?x', '/a#b', '/"x"']) {
      expect(forwarded(req({ 'x-forwarded-prefix': prefix }), trusted)?.prefix, prefix).toBe('');
    }
    expect(forwarded(req({ 'x-forwarded-proto': 'gopher' }), trusted)?.proto).toBeUndefined();
  });
});
