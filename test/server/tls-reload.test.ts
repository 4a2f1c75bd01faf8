// The TLS certificate of a running server is read again on SIGHUP and when its files change
// (DECISIONS H19); before, only at start: a renewal needed a restart, and a forgotten one left
// an expired certificate in front of every agent that reconnected.
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { metricValue } from './control-helpers.js';
import { makeTempDir } from './helpers.js';
import { TestClient, helloParams, startTestServer, waitFor, type TestServer } from './wire.js';
import { requireDist, startServer as startServerProcess, tempDir, cleanupTempDirs } from '../support/procs.js';

let dir: string;
/** A self-signed pair for 127.0.0.1 named `cn`, valid `days`; returns its paths. */
function pair(cn: string, days = 30): { cert: string; key: string } {
  const cert = join(dir, `${cn}.crt`);
  const key = join(dir, `${cn}.key`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', String(days), '-subj', `/CN=${cn}`, '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { cert, key };
}
/** Puts a pair where the server reads it (as a renewal does: a new file renamed into place). */
function install(from: { cert: string; key: string }, to: { cert: string; key: string }): void {
  copyFileSync(from.cert, `${to.cert}.new`);
  copyFileSync(from.key, `${to.key}.new`);
  renameSync(`${to.cert}.new`, to.cert);
  renameSync(`${to.key}.new`, to.key);
}
/** The CN of the certificate a new TLS connection to `port` gets. */
function servedCn(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const cn = s.getPeerCertificate().subject?.CN;
      s.destroy();
      resolve(String(cn));
    });
    s.on('error', reject);
  });
}

beforeAll(() => {
  dir = makeTempDir('cortex-tls-reload-');
});
const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
afterAll(() => cleanupTempDirs());

it('a renewed pair is served to new connections after reloadTls (SIGHUP); connected agents keep their session; the expiry metric follows', async () => {
  const live = pair('live-1');
  const first = pair('first', 20);
  install(first, live);
  const t = await startTestServer({ tls_cert: live.cert, tls_key: live.key }, { tlsCheckMs: 60_000 });
  servers.push(t);
  expect(await servedCn(t.server.port)).toBe('first');
  const before = metricValue(await t.server.metrics.text(), 'cortex_tls_certificate_expiry_timestamp_seconds');
  expect(Math.abs(before - (Date.now() / 1000 + 20 * 86_400))).toBeLessThan(3600);
  // an agent connected with the first certificate (trusted as its CA)
  const h = await t.issue();
  const agent = { client: await TestClient.open(t.url, { ca: readFileSync(first.cert) }) };
  expect((await agent.client.request('agent.hello', helloParams(h.host_id, h.token))).result?.session_id).toEqual(expect.any(String));

  install(pair('second', 90), live);
  expect(t.server.reloadTls('SIGHUP')).toBe(true);
  expect(await servedCn(t.server.port)).toBe('second');
  const reloaded = t.log.records().find((r) => r['msg'] === 'TLS certificate reloaded (SIGHUP): new connections get it, connected agents keep theirs');
  expect(reloaded).toMatchObject({ subject: 'CN=second', tls_cert: live.cert });
  const after = metricValue(await t.server.metrics.text(), 'cortex_tls_certificate_expiry_timestamp_seconds');
  expect(Math.abs(after - (Date.now() / 1000 + 90 * 86_400))).toBeLessThan(3600);
  // the agent connected before goes on on its session
  const ok = await agent.client.request('logs.push', { seq_start: 1, entries: [{ seq: 1, ts: new Date().toISOString(), severity: 'info', message: 'still here', source: 'custom:t' }] });
  expect(ok.result?.up_to_seq).toBe(1);
  agent.client.ws.close();
  await agent.client.closed;
});

it('a certificate that does not match its key is refused: the previous one stays served, one error line says why', async () => {
  const live = pair('live-2');
  install(pair('good'), live);
  const t = await startTestServer({ tls_cert: live.cert, tls_key: live.key }, { tlsCheckMs: 60_000 });
  servers.push(t);
  const other = pair('other');
  copyFileSync(other.cert, live.cert); // the new certificate, the old key
  expect(t.server.reloadTls('SIGHUP')).toBe(false);
  expect(await servedCn(t.server.port)).toBe('good');
  const refused = t.log.records().filter((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('TLS certificate not reloaded'));
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatchObject({ level: 'error', err: expect.stringMatching(new RegExp(`^${live.key} is not the private key of ${live.cert}`)) });
  expect(refused[0]?.['msg']).toMatch(/the previous certificate is still served — fix the files, then send SIGHUP/);
});

it('files renewed in place are picked up by themselves once they held still for one check; a certificate near its end is warned about', async () => {
  const live = pair('live-3');
  install(pair('old', 5), live);
  const t = await startTestServer({ tls_cert: live.cert, tls_key: live.key }, { tlsCheckMs: 100 });
  servers.push(t);
  const soon = t.log.records().find((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('the TLS certificate served expires soon'));
  expect(soon).toMatchObject({ level: 'warn', days_left: 4 });
  install(pair('renewed', 90), live);
  await waitFor(async () => (await servedCn(t.server.port)) === 'renewed', 5000);
  expect(t.log.records().some((r) => r['msg'] === 'TLS certificate reloaded (the certificate or key file changed): new connections get it, connected agents keep theirs')).toBe(true);
  expect(t.log.records().some((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('TLS certificate not reloaded'))).toBe(false);
});

it('a pair that does not match at start stops the start with E_CONFIG (it was E_INTERNAL "this is a bug")', async () => {
  const a = pair('start-a');
  const b = pair('start-b');
  const err = await startTestServer({ tls_cert: a.cert, tls_key: b.key }).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: 'E_CONFIG', message: expect.stringMatching(/^--tls-cert\/--tls-key: .*start-b\.key is not the private key of .*start-a\.crt/) });
});

it('SIGHUP to `serve`: with TLS the certificate is read again, without it nothing happens; the process goes on either way (SIGHUP ended it)', async () => {
  requireDist();
  const live = pair('live-4');
  install(pair('before-hup'), live);
  const withTls = await startServerProcess(join(tempDir(), 's.db'), ['--tls-cert', live.cert, '--tls-key', live.key]);
  const plain = await startServerProcess(join(tempDir(), 'p.db'));
  try {
    install(pair('after-hup'), live);
    const reloaded = withTls.waitForLog((r) => r['msg'] === 'TLS certificate reloaded (SIGHUP): new connections get it, connected agents keep theirs', 10_000);
    withTls.child.kill('SIGHUP');
    expect(await reloaded).toMatchObject({ subject: 'CN=after-hup' });
    expect(await servedCn(withTls.port)).toBe('after-hup');
    const told = plain.waitForLog((r) => r['msg'] === 'SIGHUP: nothing to reload (no --tls-cert, no --admin-token-file, no --config); the server goes on', 10_000);
    plain.child.kill('SIGHUP');
    await told;
    expect((await fetch(`${plain.http}/healthz`)).status).toBe(200);
    expect(withTls.child.exitCode).toBeNull();
    expect(plain.child.exitCode).toBeNull();
  } finally {
    await withTls.kill();
    await plain.kill();
  }
}, 60_000);

it('SIGHUP re-reads --admin-token-file: the new token works at once, the old one is refused; a refused file keeps the old token; no token in the log', async () => {
  requireDist();
  const tokenFile = join(dir, 'admin.token');
  const first = 'first-admin-token-0123456789';
  const second = 'second-admin-token-9876543210';
  writeFileSync(tokenFile, `${first}\n`, { mode: 0o600 });
  const s = await startServerProcess(join(tempDir(), 'a.db'), ['--admin-token-file', tokenFile]);
  const status = async (token: string) => (await fetch(`${s.http}/admin/agents`, { headers: { Authorization: `Bearer ${token}` } })).status;
  try {
    expect(await status(first)).toBe(200);
    writeFileSync(tokenFile, `${second}\n`);
    const reloaded = s.waitForLog((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('admin token reloaded (SIGHUP)'), 10_000);
    s.child.kill('SIGHUP');
    expect(await reloaded).toMatchObject({ admin_token_file: tokenFile, msg: 'admin token reloaded (SIGHUP): the previous token is refused from now on, and console sessions signed with it end' });
    expect(await status(first)).toBe(401);
    expect(await status(second)).toBe(200);
    // a token the server would not start with is refused; the one in use stays
    writeFileSync(tokenFile, 'short\n');
    const refused = s.waitForLog((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('admin token not reloaded'), 10_000);
    s.child.kill('SIGHUP');
    expect(String((await refused)['err'])).toMatch(/must NOT have fewer than 16 characters/);
    expect(await status(second)).toBe(200);
    expect(s.stderr()).not.toContain(first);
    expect(s.stderr()).not.toContain(second);
  } finally {
    await s.kill();
  }
}, 60_000);

it('SIGHUP re-reads --config: its admin_token takes effect at once; other changed settings are named as waiting for a restart; a refused file changes nothing (I19)', async () => {
  requireDist();
  const configFile = join(dir, 'server.json');
  const first = 'config-admin-token-0123456789';
  const second = 'config-admin-token-9876543210';
  writeFileSync(configFile, JSON.stringify({ admin_token: first, retention_days: 7 }), { mode: 0o600 });
  const s = await startServerProcess(join(tempDir(), 'a.db'), ['--config', configFile]);
  const status = async (token: string) => (await fetch(`${s.http}/admin/agents`, { headers: { Authorization: `Bearer ${token}` } })).status;
  try {
    expect(await status(first)).toBe(200);
    writeFileSync(configFile, JSON.stringify({ admin_token: second, retention_days: 14, upgrades_per_minute: 50 }));
    const reloaded = s.waitForLog((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('admin token reloaded (SIGHUP)'), 10_000);
    const waiting = s.waitForLog((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('config file read again (SIGHUP)'), 10_000);
    s.child.kill('SIGHUP');
    expect(await reloaded).toMatchObject({ config: configFile });
    expect(await waiting).toMatchObject({ level: 'warn', settings: ['retention_days', 'upgrades_per_minute'], msg: 'config file read again (SIGHUP): retention_days, upgrades_per_minute changed, which take effect at the next restart' });
    expect(await status(first)).toBe(401);
    expect(await status(second)).toBe(200);
    // Not JSON: refused as a whole, the token in use stays.
    writeFileSync(configFile, '{"admin_token": ');
    const refused = s.waitForLog((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('config file not reloaded (SIGHUP)'), 10_000);
    s.child.kill('SIGHUP');
    expect(await refused).toMatchObject({ level: 'error', config: configFile });
    expect(await status(second)).toBe(200);
    // No admin_token any more: the previous one stays (going without takes a restart).
    writeFileSync(configFile, JSON.stringify({ retention_days: 7 }));
    const kept = s.waitForLog((r) => typeof r['msg'] === 'string' && r['msg'].startsWith('admin token not reloaded (SIGHUP): the config file has no admin_token'), 10_000);
    s.child.kill('SIGHUP');
    await kept;
    expect(await status(second)).toBe(200);
    expect(s.child.exitCode).toBeNull();
    expect(s.stderr()).not.toContain(first);
    expect(s.stderr()).not.toContain(second);
  } finally {
    await s.kill();
  }
}, 60_000);
