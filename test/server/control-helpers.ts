// Helpers for control-plane tests: a scripted agent (hello with supported_probes, probe
// answers under the test's control) and a tiny HTTP client for the admin API.
import http from 'node:http';
import type { TestServer } from './wire.js';
import { helloParams, TestClient, type Msg } from './wire.js';

export function httpBase(t: { url: string }): string {
  return t.url.replace(/^ws/, 'http').replace(/\/ws\/agent$/, '');
}

export interface HttpReply {
  status: number;
  body: any;
  text: string;
  headers: http.IncomingHttpHeaders;
}

export function httpRequest(
  url: string,
  opts: { method?: string; body?: unknown; raw?: string; headers?: Record<string, string>; localAddress?: string } = {},
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const req = http.request(
      url,
      {
        method: opts.method ?? (payload === undefined ? 'GET' : 'POST'),
        headers: { ...(payload !== undefined ? { 'Content-Type': 'application/json' } : {}), ...(opts.headers ?? {}) },
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, text, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A connected scripted agent declaring `probes`. */
export async function connectAgent(t: TestServer, probes: string[] = ['sys.uptime', 'exec.systemctl_status'], host?: { host_id: string; token: string }) {
  const h = host ?? (await t.issue());
  const client = await TestClient.open(t.url);
  const caps = { supported_probes: probes, sources: ['custom'], max_batch_entries: 1000, compression: [] as string[] };
  const res = await client.request('agent.hello', helloParams(h.host_id, h.token, { capabilities: caps } as never));
  if (res.error) throw new Error(`hello failed: ${JSON.stringify(res.error)}`);
  const token = (res.result.rotated_token as string | undefined) ?? h.token;
  if (res.result.rotated_token) t.tokens.push(res.result.rotated_token);
  return { client, hello: res.result, host_id: h.host_id, token };
}

/** The next probe.request the agent receives (not yet answered by the test). */
export function nextProbe(client: TestClient, seen: Set<unknown> = new Set()): Promise<Msg> {
  return client.next((m) => m.method === 'probe.request' && !seen.has(m.id)).then((m) => {
    seen.add(m.id);
    return m;
  });
}

export function answer(client: TestClient, id: Msg['id'], result: unknown): void {
  client.send({ jsonrpc: '2.0', id, result });
}

export function answerError(client: TestClient, id: Msg['id'], error: { code: number; message: string; data?: unknown }): void {
  client.send({ jsonrpc: '2.0', id, error });
}

/** A metric's value from Prometheus text (sum over series matching all given labels). */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const lbl: Record<string, string> = {};
    for (const part of (m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) lbl[part[1] as string] = part[2] as string;
    if (Object.entries(labels).every(([k, v]) => lbl[k] === v)) {
      sum += Number(m[4]);
      found = true;
    }
  }
  return found ? sum : NaN;
}
