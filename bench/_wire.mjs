// Shared by the server benchmarks (ingest, retention): a load client's log entry and its
// WebSocket connect + agent.hello. Not a benchmark itself (run.mjs skips files named _*).
import WebSocket from 'ws';
import { SUBPROTOCOL } from '@cortex/agent-protocol';

/** One sshd-like entry (about 200 bytes of JSON) with the given seq. */
export function entry(seq) {
  return { seq, ts: '2026-05-16T19:42:50.123Z', severity: 'info', app_name: 'sshd', process_id: '1431', message: `Accepted publickey for user from 10.0.0.4 port 5${seq % 10000} ssh2: ED25519 SHA256:abcdefghijklmnop`, source: 'journald' };
}

/**
 * Opens a session for an issued agent ({ host_id, hostname, token }); resolves with the
 * socket, the server's accepted_seq and the rotated token (null when none was sent).
 */
export function connect(url, agent) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, SUBPROTOCOL, { perMessageDeflate: false });
    ws.once('error', reject);
    ws.once('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'agent.hello', params: { protocol_version: 1, agent_version: '0.1.0', hostname: agent.hostname, host_id: agent.host_id, platform: { os: 'linux', arch: 'x86_64', kernel: '6.6', distro: null }, capabilities: { supported_probes: [], sources: ['journald'], max_batch_entries: 1000, compression: [] }, token: agent.token, resume_from_seq: 0 } }));
      ws.once('message', (d) => {
        const m = JSON.parse(d.toString());
        if (m.error) return reject(new Error(JSON.stringify(m.error)));
        resolve({ ws, accepted: m.result.accepted_seq, rotated: m.result.rotated_token ?? null });
      });
    });
  });
}
