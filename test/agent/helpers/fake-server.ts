// A scripted fake server for agent tests: a real `ws` WebSocketServer on 127.0.0.1
// port 0 speaking cortex.v1 through the generated server peer (so every frame the
// agent sends is validated against the contract). Default behaviour is a correct
// server (hello → HelloResult, logs.push → ack with dedupe by seq); tests override
// `hello` / `push` / `metrics` to script failures.

import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  RpcError,
  ServerClient,
  createServerPeer,
  registerServerHandlers,
  webSocketTransport,
  type AgentConfig,
  type AgentHelloParams,
  type AgentHelloResult,
  type LogsPushParams,
  type LogsPushResult,
  type MetricsPushParams,
  type ServerPeer,
} from '@cortex/agent-protocol';
import { WebSocketServer, type WebSocket } from 'ws';

export const TEST_CONFIG: AgentConfig = {
  heartbeat_interval_secs: 30,
  max_batch_entries: 1000,
  flush_interval_ms: 20,
  metrics_interval_secs: 60,
  probe_concurrency: 2,
  log_sources: [],
};

export interface Session {
  ws: WebSocket;
  peer: ServerPeer;
  client: ServerClient;
  hello: AgentHelloParams | null;
  closed: Promise<{ code: number; reason: string }>;
  frames: string[];
}

export interface FakeServerOptions {
  /** Subprotocol to answer with: default echoes cortex.v1; null = none. */
  protocol?: string | null;
  /** Refuse the upgrade with this HTTP status. */
  refuseStatus?: number;
  /** Serve wss:// with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
  /** Listen on this port (default 0: any free one), e.g. a server back where it was. */
  port?: number;
}

type Scripted<P, R> = (params: P, session: Session) => R | Promise<R>;

export class FakeServer extends EventEmitter {
  readonly wss: WebSocketServer;
  readonly https: HttpsServer | null;
  url = '';
  accepted = 0;
  /** seq → message text of every stored entry (first write wins; a different message for a stored seq is recorded in conflicts). */
  readonly stored = new Map<number, string>();
  readonly conflicts: number[] = [];
  readonly pushes: LogsPushParams[] = [];
  readonly sessions: Session[] = [];
  config: AgentConfig = TEST_CONFIG;
  rotatedToken: string | null = null;
  hello: Scripted<AgentHelloParams, AgentHelloResult> = (p) => this.defaultHello(p);
  push: Scripted<LogsPushParams, LogsPushResult> = (p) => this.store(p);
  options: FakeServerOptions;

  constructor(options: FakeServerOptions = {}) {
    super();
    this.options = options;
    this.https = options.tls ? createHttpsServer(options.tls) : null;
    this.wss = new WebSocketServer({
      ...(this.https ? { server: this.https } : { host: '127.0.0.1', port: options.port ?? 0 }),
      perMessageDeflate: false,
      handleProtocols: (protocols) => {
        const p = this.options.protocol;
        if (p === null) return false;
        if (p !== undefined) return p;
        return protocols.has('cortex.v1') ? 'cortex.v1' : false;
      },
      verifyClient: (_info, cb) => {
        if (this.options.refuseStatus) cb(false, this.options.refuseStatus, 'refused by test');
        else cb(true);
      },
    });
    this.wss.on('connection', (ws) => this.onConnection(ws));
  }

  static async start(options: FakeServerOptions = {}): Promise<FakeServer> {
    const s = new FakeServer(options);
    if (s.https) {
      await new Promise<void>((resolve) => s.https!.listen(0, '127.0.0.1', () => resolve()));
      s.url = `wss://127.0.0.1:${(s.https.address() as AddressInfo).port}/ws/agent`;
    } else {
      await new Promise<void>((resolve) => s.wss.once('listening', () => resolve()));
      s.url = `ws://127.0.0.1:${(s.wss.address() as AddressInfo).port}/ws/agent`;
    }
    return s;
  }

  get current(): Session | undefined {
    return this.sessions[this.sessions.length - 1];
  }

  /** The next hello is answered by `script`; later ones get the default answer again. */
  scriptNextHello(script: Scripted<AgentHelloParams, AgentHelloResult>): void {
    this.hello = (p, session) => {
      this.hello = (q) => this.defaultHello(q);
      return script(p, session);
    };
  }

  defaultHello(_p: AgentHelloParams): AgentHelloResult {
    return {
      server_version: '0.0.0-test',
      server_time: new Date().toISOString(),
      accepted_seq: this.accepted,
      session_id: randomUUID(),
      config: this.config,
      ...(this.rotatedToken ? { rotated_token: this.rotatedToken } : {}),
    };
  }

  /** Stores entries with seq > accepted (seed 7 dedupe) and acks. */
  store(p: LogsPushParams): LogsPushResult {
    for (const e of p.entries) {
      const prev = this.stored.get(e.seq);
      if (prev !== undefined && prev !== e.message) this.conflicts.push(e.seq);
      if (e.seq > this.accepted) this.stored.set(e.seq, e.message);
    }
    const end = p.entries[p.entries.length - 1]!.seq;
    this.accepted = Math.max(this.accepted, end);
    return { up_to_seq: this.accepted, received_at: new Date().toISOString() };
  }

  private onConnection(ws: WebSocket): void {
    const peer = createServerPeer(webSocketTransport(ws), { requestTimeoutMs: 5000 });
    const frames: string[] = [];
    ws.on('message', (d) => frames.push(String(d)));
    const session: Session = {
      ws,
      peer,
      client: new ServerClient(peer),
      hello: null,
      frames,
      closed: new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() }))),
    };
    this.sessions.push(session);
    registerServerHandlers(peer, {
      'agent.hello': async (params) => {
        session.hello = params;
        this.emit('hello', params, session);
        return this.hello(params, session);
      },
      'logs.push': async (params) => {
        this.pushes.push(params);
        this.emit('push', params, session);
        const r = await this.push(params, session);
        this.emit('acked', r.up_to_seq);
        return r;
      },
      'metrics.push': (params: MetricsPushParams) => {
        this.emit('metrics', params, session);
        return { accepted: params.samples.length, dropped: 0 };
      },
      'agent.heartbeat': (params) => {
        this.emit('heartbeat', params, session);
      },
    });
    this.emit('connection', session);
  }

  /** Resolves with the next event `name` (optionally matching). */
  next<T = unknown>(name: string, match: (...args: any[]) => boolean = () => true, timeoutMs = 10_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off(name, on);
        reject(new Error(`fake server: timed out waiting for ${name}`));
      }, timeoutMs);
      const on = (...args: any[]) => {
        if (!match(...args)) return;
        clearTimeout(timer);
        this.off(name, on);
        resolve(args[0] as T);
      };
      this.on(name, on);
    });
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    if (this.https) await new Promise<void>((resolve) => this.https!.close(() => resolve()));
  }
}

export function rpcError(code: number, message: string, data?: unknown): RpcError {
  return new RpcError(code, message, data);
}
