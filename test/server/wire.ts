// Test harness for the wire: an in-process server on 127.0.0.1:0 with a real SQLite file,
// and a minimal `ws` client that records every message and the close.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { SUBPROTOCOL, type AgentHelloParams } from '@cortex/agent-protocol';
import type { ServerConfig } from '../../server/generated/server-config.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { createCapturingLogger, type CapturedLogger } from '../../server/log.js';
import { startServer, type RunningServer, type StartOptions } from '../../server/server.js';
import { resolveSettings } from '../../server/settings.js';
import { testDialect } from '../support/dialects.js';
import type { DialectName } from '../../server/db/storage.js';
import { makeTempDir } from './helpers.js';
import { RawWs } from '../support/raw-ws.js';

export interface TestServer {
  server: RunningServer;
  url: string;
  dir: string;
  /** The --db value (SQLite file or postgres:// URL of a fresh schema). */
  dbPath: string;
  dialect: DialectName;
  log: CapturedLogger;
  /** Every token a test handled: checked against the logs at the end. */
  tokens: string[];
  issue(hostname?: string): Promise<{ host_id: string; token: string }>;
  close(): Promise<void>;
}

export async function startTestServer(
  config: ServerConfig = {},
  extraAndDialect: Omit<StartOptions, 'settings' | 'logger'> & { dialect?: DialectName; sameDbAs?: TestServer } = {},
): Promise<TestServer> {
  const { dialect = testDialect(), sameDbAs, ...extra } = extraAndDialect;
  let dir: string;
  let dbPath: string;
  let drop: () => Promise<void> = async () => undefined;
  if (sameDbAs !== undefined) {
    // A second server on the first one's database (the first one drops it).
    dir = makeTempDir('cortex-wire-');
    dbPath = sameDbAs.dbPath;
  } else if (dialect === 'postgres') {
    const { newTestDb } = await import('../support/dialects.js');
    const target = await newTestDb('postgres');
    dir = target.dir;
    dbPath = target.db;
    drop = target.drop;
  } else {
    dir = makeTempDir('cortex-wire-');
    dbPath = join(dir, 'data', 'cortex.db');
  }
  const settings = resolveSettings({ listen: '127.0.0.1:0', db: dbPath, ...config });
  const log = createCapturingLogger({ name: 'test-server' });
  let server: RunningServer;
  try {
    server = await startServer({ settings, logger: log.logger, ...(dialect === 'postgres' ? { dbPool: 4 } : {}), ...extra });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    await drop();
    throw error;
  }
  const tokens: string[] = [];
  return {
    server,
    url: server.url,
    dir,
    dbPath,
    dialect,
    log,
    tokens,
    async issue(hostname = 'web-1') {
      const issued = await issueAgent(server.storage.db, hostname);
      tokens.push(issued.token);
      return issued;
    },
    async close() {
      try {
        await server.close();
        for (const t of tokens) {
          for (const line of log.lines) if (line.includes(t)) throw new Error(`a token appeared in a log line: ${line}`);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await drop();
      }
    },
  };
}

export type Msg = { jsonrpc: '2.0'; id?: number | string | null; method?: string; params?: any; result?: any; error?: { code: number; message: string; data?: any } };

export class TestClient {
  readonly messages: Msg[] = [];
  private waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void }[] = [];
  private nextId = 1;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as Msg;
      this.messages.push(m);
      this.waiters = this.waiters.filter((w) => {
        if (!w.pred(m)) return true;
        w.resolve(m);
        return false;
      });
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static open(url: string, opts: { protocol?: string | null; autoPong?: boolean; headers?: Record<string, string>; ca?: Buffer } = {}): Promise<TestClient> {
    const protocol = opts.protocol === undefined ? SUBPROTOCOL : opts.protocol;
    const ws = new WebSocket(url, protocol === null ? [] : [protocol], {
      perMessageDeflate: false,
      autoPong: opts.autoPong ?? true,
      ...(opts.headers ? { headers: opts.headers } : {}),
      ...(opts.ca ? { ca: opts.ca } : {}),
    });
    const client = new TestClient(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  send(message: object | string): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next message (already received or future) matching pred. */
  next(pred: (m: Msg) => boolean): Promise<Msg> {
    const found = this.messages.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ pred, resolve }));
  }

  response(id: number | string | null): Promise<Msg> {
    return this.next((m) => m.id === id && m.method === undefined);
  }

  request(method: string, params: unknown): Promise<Msg> {
    const id = this.nextId++;
    this.send({ jsonrpc: '2.0', id, method, params });
    return this.response(id);
  }

  /** Sends without waiting; returns the id. */
  fire(method: string, params: unknown): number {
    const id = this.nextId++;
    this.send({ jsonrpc: '2.0', id, method, params });
    return id;
  }

  notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params });
  }
}

export function helloParams(host_id: string, token: string, over: Partial<AgentHelloParams> & Record<string, unknown> = {}): AgentHelloParams {
  return {
    protocol_version: 1,
    agent_version: '0.1.0',
    hostname: 'web-1',
    host_id,
    platform: { os: 'linux', arch: 'x86_64', kernel: '6.6.21', distro: null },
    capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 1000, compression: [] },
    token,
    resume_from_seq: 0,
    ...over,
  } as AgentHelloParams;
}

export function logEntries(from: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    seq: from + i,
    ts: '2026-05-16T19:42:50.123Z',
    severity: 'info',
    message: `line ${from + i}`,
    source: 'custom:test',
  }));
}

/** Connects, says hello with the host's token, and returns the client and HelloResult. */
export async function enroll(t: TestServer, host?: { host_id: string; token: string }) {
  const h = host ?? (await t.issue());
  const client = await TestClient.open(t.url);
  const res = await client.request('agent.hello', helloParams(h.host_id, h.token));
  if (res.error) throw new Error(`hello failed: ${JSON.stringify(res.error)}`);
  const token = (res.result.rotated_token as string | undefined) ?? h.token;
  if (res.result.rotated_token) t.tokens.push(res.result.rotated_token);
  return { client, hello: res.result, host_id: h.host_id, token };
}

export async function countRows(t: TestServer, host_id: string): Promise<number> {
  const r = await t.server.storage.db
    .selectFrom('logs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('host_id', '=', host_id)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function waitFor(cond: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A raw WebSocket session authenticated with the host's token (it never answers a close frame); a rotated token replaces host.token and joins s.tokens. */
export async function authedRaw(s: TestServer, host: { host_id: string; token: string }): Promise<RawWs> {
  const ws = await RawWs.connect(s.server.port);
  ws.text(JSON.stringify({ jsonrpc: '2.0', id: 'hello', method: 'agent.hello', params: helloParams(host.host_id, host.token) }));
  await ws.until(() => ws.messages().some((m) => (m as { id?: unknown }).id === 'hello') || !ws.open, 5000);
  const res = ws.messages().find((m) => (m as { id?: unknown }).id === 'hello') as { result?: { rotated_token?: string } } | undefined;
  if (!res?.result) throw new Error(`hello failed: ${JSON.stringify(res)}`);
  if (res.result.rotated_token !== undefined) {
    host.token = res.result.rotated_token;
    s.tokens.push(host.token);
  }
  return ws;
}
