// The runner catches faults: a deliberately broken server (built on the generated
// createServerPeer over ws) that accepts any subprotocol, never rotates the enrollment
// token, and acks logs.push before (instead of) committing. The matching cases must FAIL
// and the exit status must be non-zero.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthFailedError, createServerPeer, registerServerHandlers, webSocketTransport } from '@cortex/agent-protocol';
import { buildConformance, parseJson, runConformance, statusOf } from './helpers.js';

const TOKEN = 'broken-server-enrollment-token-0123456789abcdef';
const HOST = randomUUID();

/** A server with three faults; everything else roughly right. */
function startBrokenServer(): Promise<{ url: string; close: () => Promise<void> }> {
  // Fault 1: any offered subprotocol is confirmed (cortex.v1 must be required).
  const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => [...protocols][0] ?? false });
  const server = http.createServer((_q, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => {
    let authed = false;
    ws.on('error', () => undefined); // the runner sends malformed frames on purpose
    const peer = createServerPeer(webSocketTransport(ws as never), {
      intercept: (call) => (authed || call.method === 'agent.hello' ? undefined : new AuthFailedError({ reason: 'token_hash_mismatch' })),
    });
    registerServerHandlers(peer, {
      'agent.hello': (p) => {
        if (p.token !== TOKEN || p.host_id !== HOST) {
          setImmediate(() => ws.close(4001, 'AuthFailed'));
          throw new AuthFailedError({ reason: 'token_hash_mismatch' });
        }
        authed = true;
        // Fault 2: no rotated_token at first enrollment. Fault 3 (below): nothing is ever committed.
        return { server_version: 'broken', server_time: new Date().toISOString(), accepted_seq: 0, session_id: randomUUID(), config: { heartbeat_interval_secs: 30, max_batch_entries: 1000, flush_interval_ms: 200, probe_concurrency: 4, log_sources: [] } };
      },
      // Fault 3: acks up to the last seq without storing anything.
      'logs.push': (p) => ({ up_to_seq: p.entries.at(-1)?.seq ?? 0, received_at: new Date().toISOString() }),
      'metrics.push': (p) => ({ accepted: p.samples.length }),
      'agent.heartbeat': () => undefined,
    });
  }));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `ws://127.0.0.1:${port}/ws/agent`,
        close: () => new Promise<void>((r) => {
          for (const c of wss.clients) c.terminate();
          server.closeAllConnections();
          server.close(() => r());
        }),
      });
    }),
  );
}

describe('cortex-conformance against a broken server', () => {
  let broken: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    buildConformance();
    broken = await startBrokenServer();
  });
  afterAll(async () => broken?.close());

  it('fails the cases that match its faults and exits non-zero', async () => {
    const r = await runConformance(['server', '--url', broken.url, '--enroll-token', TOKEN, '--host-id', HOST, '--json', '--skip-slow', '--timeout-ms', '1000', '--agent-rate', '5000']);
    expect(r.code).toBe(1);
    const rep = parseJson(r);
    expect(rep.ok).toBe(false);
    // Accepts a wrong subprotocol.
    expect(statusOf(rep, 'subprotocol/wrong-refused')).toBe('FAIL');
    expect(statusOf(rep, 'subprotocol/missing-refused')).toBe('FAIL');
    // Does not rotate at first enrollment.
    expect(statusOf(rep, 'handshake/first-enrollment-rotates')).toBe('FAIL');
    // Acks before (without) committing: accepted_seq does not follow the acks.
    expect(statusOf(rep, 'ingest/duplicates-acked')).toBe('FAIL');
    expect(statusOf(rep, 'ingest/replay-accepted-seq')).toBe('FAIL');
    const replay = rep.cases.find((c) => c.id === 'ingest/replay-accepted-seq');
    expect(replay?.seen).toMatch(/accepted_seq 0/);
    // Has no per-agent rate limit: three seconds' worth at 5000/s all accepted at once.
    expect(statusOf(rep, 'error/-32030-QuotaExceeded')).toBe('FAIL');
    expect(rep.cases.find((c) => c.id === 'error/-32030-QuotaExceeded')?.seen).toMatch(/all 16000 entries accepted/);
    // What it does right still passes.
    expect(statusOf(rep, 'subprotocol/confirmed')).toBe('PASS');
    expect(statusOf(rep, 'ingest/ack-up-to-seq')).toBe('PASS');
  }, 60_000);
});
