// wss:// with the system CAs plus an optional --ca FILE (a self-signed test CA).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupDirs, makeAgent, tempDir } from './helpers/agent-harness.js';
import { FakeServer } from './helpers/fake-server.js';

afterAll(cleanupDirs);

function selfSigned(): { cert: string; key: string; certFile: string } {
  const dir = tempDir();
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile };
}

describe('wss://', () => {
  it('connects with --ca trusting the server certificate, and refuses an untrusted one', async () => {
    const tls = selfSigned();
    const s = await FakeServer.start({ tls });
    try {
      const untrusted = await makeAgent(s.url, { allowInsecure: false });
      untrusted.agent.start();
      await untrusted.agent.waitForState('Reconnecting');
      expect(untrusted.agent.status().last_error).toMatch(/certificate/i);
      await untrusted.agent.stop();
      const trusted = await makeAgent(s.url, { allowInsecure: false, caFile: tls.certFile });
      trusted.agent.start();
      await trusted.agent.waitForState('Active');
      await trusted.agent.stop();
    } finally {
      await s.close();
    }
  });
});
