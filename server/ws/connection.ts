// One WebSocket connection: the pre-hello limits, the hello timer, the handshake
// (seed section 3 in its order), then the authenticated session (logs.push through
// ../ingest.ts, metrics.push, agent.heartbeat) and the row bookkeeping on close
// (DESIGN.md 5.14).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';
import {
  AgentVersionUnsupportedError,
  AuthFailedError,
  AuthRequiredError,
  InvalidParamsError,
  InvalidRequestError,
  LIMITS,
  PeerError,
  PROTOCOL_VERSION,
  RpcError,
  ServerClient,
  TokenRevokedError,
  TokenRotationRequiredError,
  UnknownHostError as UnknownHostRpcError,
  createServerPeer,
  registerServerHandlers,
  toIssues,
  validateAgentConfig,
  validateAgentHelloParams,
  validateJsonRpcRequest,
  type AgentConfig,
  type AgentHelloParams,
  type AgentHelloResult,
  type Frame,
  type MetricsPushResult,
  type PeerEvent,
  type ProbeOutput,
  type ProbeRequestParams,
  type RpcId,
  type ServerPeer,
  type Transport,
} from '@cortex/agent-protocol';
import { generateToken, hashToken, hashesEqual } from '../auth/tokens.js';
import {
  getAgent,
  markActive,
  markDisconnected,
  findForHello,
  revoke,
  rotateOnFirstEnrollment,
  rotateOnHello,
  touchLastSeen,
  type HelloLookup,
  type SessionStart,
} from '../db/agents.repository.js';
import { UnknownHostError } from '../db/storage.js';
import { enrollmentExpiresAt } from '../security/enrollment.js';
import type { SessionIngest } from '../ingest.js';
import { isAgentVersionSupported } from '../version.js';
import type { ServerContext } from './context.js';

type State = 'new' | 'hello_pending' | 'activating' | 'active' | 'closed';

/** Largest WebSocket frame header (2 + 8 length + 4 mask): counted with each frame. */
const MAX_HEADER = 14;
/** A hash that no token has: unknown hosts cost the same comparisons as known ones. */
const NO_HASH = '0'.repeat(64);

const CLOSE_NAMES: Record<number, string> = { 1000: 'normal', 1001: 'going away', 1005: 'no status', 1006: 'abnormal' };
const WS_ERRORS: Record<string, [number, string]> = {
  WS_ERR_UNSUPPORTED_MESSAGE_LENGTH: [1009, 'oversize'],
  WS_ERR_INVALID_UTF8: [1007, 'invalid utf-8'],
};

export class Connection {
  state: State = 'new';
  host_id: string | undefined;
  session_id: string | undefined;
  /** Pings sent without a pong since (the server's ping sweep reads and resets it). */
  missedPongs = 0;
  /** The last agent.heartbeat's buffer figures (the console shows them). */
  lastHeartbeat: { queue_depth: number; buffer_bytes: number; at: string } | undefined;
  readonly address: string;
  private readonly peer: ServerPeer;
  /** Typed calls to the agent (probe.request, agent.shutdown, config.update). */
  readonly client: ServerClient;
  /** capabilities.supported_probes of this session's hello (what is stored for the host). */
  supportedProbes: ReadonlySet<string> = new Set();
  /** agents.config_version this session's agent has (HelloResult.config or the last config.update). */
  configVersion = 0;
  /** Control-plane bookkeeping (server/control/control.ts). */
  readonly control = { rotationAsked: false, decommissioning: false, revoking: false, shuttingDown: false };
  /** Ids of probe.requests whose caller already got -32012: their answers are late. */
  private readonly expiredProbes = new Set<RpcId>();
  private frameListener: ((frame: Frame) => void) | undefined;
  private closeListener: ((code: number, reason: string) => void) | undefined;
  private helloTimer: ReturnType<typeof setTimeout> | undefined;
  private rawBytes = 0;
  private nonHelloBytes = 0;
  private serverClose: { code: number; reason: string } | undefined;
  private ingest: SessionIngest | undefined;
  /** The client address the failed-hello throttle counts against (DECISIONS H7). */
  private readonly clientKey: string;
  private resolveClosed!: () => void;
  /** Resolves once the socket closed and the row bookkeeping is done. */
  readonly closed = new Promise<void>((resolve) => (this.resolveClosed = resolve));

  constructor(
    private readonly ws: WebSocket,
    req: IncomingMessage,
    private readonly ctx: ServerContext,
  ) {
    this.address = req.socket.remoteAddress ?? '';
    // The request itself is not kept: a session would hold it, its headers and head buffer
    // for its whole life (test/server/upgrade-retention.test.ts).
    this.clientKey = ctx.clientKey?.(req) ?? this.address;
    const transport: Transport = {
      send: (text) => ws.send(text),
      close: (code, reason) => this.closeWith(code ?? 1000, reason ?? ''),
      onFrame: (l) => (this.frameListener = l),
      onClose: (l) => (this.closeListener = l),
    };
    this.peer = createServerPeer(transport, {
      intercept: (call) => {
        if (this.state !== 'active') return new AuthRequiredError({ reason: 'send agent.hello first' }, 'AuthRequired');
        if (call.method === 'logs.push') this.ctx.metrics.pushIn.inc();
        else this.ctx.metrics.framesIn.labels(call.method).inc();
        if (call.method === 'agent.hello') return new InvalidRequestError({ reason: 'this session is already authenticated' }, 'InvalidRequest');
        return undefined;
      },
      onEvent: (e) => this.onPeerEvent(e),
    });
    this.client = new ServerClient(this.peer);
    const out = this.ctx.metrics;
    registerServerHandlers(this.peer, {
      'logs.push': (params) => {
        const answered = (this.ingest as SessionIngest).push(params);
        void answered.then(
          () => out.pushOut.inc(),
          () => out.pushOut.inc(),
        );
        return answered;
      },
      'metrics.push': (params) => {
        const answered = this.metricsPush(params.ts, params.samples);
        void answered.finally(() => out.framesOut.labels('metrics.push').inc()).catch(() => undefined);
        return answered;
      },
      'agent.heartbeat': (params) => {
        this.lastHeartbeat = { queue_depth: params.queue_depth, buffer_bytes: params.buffer_bytes, at: new Date().toISOString() };
        void touchLastSeen(this.ctx.storage.db, this.host_id as string).catch((error: unknown) =>
          this.ctx.logger.warn({ host_id: this.host_id, err: String(error) }, 'heartbeat: last_seen update failed'),
        );
      },
    });

    const socket = (ws as unknown as { _socket: Socket })._socket;
    socket.on('data', (chunk: Buffer) => {
      if (this.state === 'active' || this.state === 'closed') return;
      this.rawBytes += chunk.length;
      // Everything before hello is bounded: the hello frame itself plus 1 KiB of anything else.
      if (this.rawBytes > LIMITS.max_hello_frame_bytes + LIMITS.pre_hello_bytes + 2 * MAX_HEADER) {
        this.preHelloOversize();
      }
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('ping', (data: Buffer) => this.countPreHello(data.length + MAX_HEADER));
    ws.on('pong', (data: Buffer) => {
      this.missedPongs = 0;
      this.countPreHello(data.length + MAX_HEADER);
    });
    ws.on('error', (error: Error & { code?: string }) => {
      const mapped = WS_ERRORS[error.code ?? ''] ?? [1002, 'protocol error'];
      this.serverClose ??= { code: mapped[0], reason: mapped[1] };
      this.ctx.logger.info({ host_id: this.host_id, address: this.address, code: error.code }, `websocket error: ${mapped[1]}`);
    });
    ws.on('close', (code: number, reason: Buffer) => {
      void this.onClose(code, reason.toString()).finally(() => this.resolveClosed());
    });
    this.helloTimer = setTimeout(() => {
      if (this.state === 'new' || this.state === 'hello_pending') {
        this.ctx.logger.info({ address: this.address }, 'hello timeout: closing 4000');
        this.ctx.metrics.handshakes.labels('timeout').inc();
        this.closeWith(4000, '');
      }
    }, this.ctx.settings.hello_timeout_ms);
  }

  ping(): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.ping();
  }

  /** Close with our own code and reason (recorded as last_disconnect_reason). */
  closeWith(code: number, reason: string, opts: { terminateAfterMs?: number } = {}): void {
    if (this.serverClose === undefined) this.serverClose = { code, reason };
    if (this.state !== 'active' && this.state !== 'closed') this.state = 'closed';
    try {
      this.ws.close(code, reason);
    } catch {
      this.ws.terminate();
    }
    const after = opts.terminateAfterMs;
    if (after !== undefined) setTimeout(() => this.ws.terminate(), after).unref();
  }

  private preHelloOversize(): void {
    this.ctx.logger.info({ address: this.address }, 'pre-hello limit exceeded: closing 1009');
    this.closeWith(1009, '', { terminateAfterMs: 1000 });
  }

  private countPreHello(bytes: number): void {
    if (this.state === 'active' || this.state === 'closed') return;
    this.nonHelloBytes += bytes;
    if (this.nonHelloBytes > LIMITS.pre_hello_bytes) this.preHelloOversize();
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.state === 'active') {
      this.frameListener?.(isBinary ? { kind: 'binary', byteLength: data.length } : { kind: 'text', text: data.toString() });
      return;
    }
    if (this.state === 'closed') return;
    if (isBinary) {
      this.frameListener?.({ kind: 'binary', byteLength: data.length });
      return;
    }
    if (this.state === 'new') {
      if (data.length > LIMITS.max_hello_frame_bytes) return this.preHelloOversize();
      const text = data.toString();
      const hello = parseHello(text);
      if (hello !== undefined) {
        this.state = 'hello_pending';
        void this.handshake(hello.id, hello.params).catch((error: unknown) => {
          this.ctx.logger.error({ address: this.address, err: String(error) }, 'hello failed with an internal error');
          this.sendRaw({ jsonrpc: '2.0', id: hello.id, error: { code: -32603, message: 'InternalError' } });
          this.closeWith(1011, 'internal error');
        });
        return;
      }
      this.countPreHello(data.length + MAX_HEADER);
      if (this.isClosed()) return;
      this.frameListener?.({ kind: 'text', text });
    } else {
      // hello_pending / activating: anything else is answered by the peer (-32000 etc.).
      this.countPreHello(data.length + MAX_HEADER);
      if (this.isClosed()) return;
      this.frameListener?.({ kind: 'text', text: data.toString() });
    }
    // Whatever the peer answered (-32700, -32600, -32601, -32000), the socket is not
    // authenticated: close 4001.
    if (!this.isActive() && !this.isClosed()) this.closeWith(4001, 'agent.hello required');
  }

  private isClosed(): boolean {
    return this.state === 'closed';
  }

  private isActive(): boolean {
    return this.state === 'active';
  }

  private sendRaw(message: object): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify(message));
  }

  private fail(id: string | number, error: RpcError, closeCode: number, host_id: unknown): void {
    this.ctx.logger.info(
      { address: this.address, host_id: typeof host_id === 'string' ? host_id : undefined, code: error.code },
      `hello refused: ${error.message} (closing ${closeCode})`,
    );
    this.ctx.metrics.handshakes.labels(error.message).inc();
    this.ctx.onHelloFailed?.(this.clientKey, error.code);
    this.sendRaw({ jsonrpc: '2.0', id, error: error.toJSON() });
    this.closeWith(closeCode, error.message);
  }

  /** True while the socket is open and authenticated. */
  get open(): boolean {
    return this.state === 'active' && this.ws.readyState === this.ws.OPEN;
  }

  /**
   * probe.request on this session (seed 4.6). Resolves with the agent's ProbeOutput as it
   * sent it (only the envelope is checked), rejects with the agent's RpcError unchanged, or
   * with a PeerError: 'timeout' after timeout_ms + graceMs (a later answer is dropped and
   * counted), 'closed' at once when the session closes, 'invalid_result' for a reply that
   * is not a ProbeOutput.
   */
  async probe(params: ProbeRequestParams, graceMs: number): Promise<ProbeOutput> {
    const m = this.ctx.metrics;
    m.framesOut.labels('probe.request').inc();
    try {
      const result = await this.client.probeRequest(params, { timeoutMs: params.timeout_ms + graceMs });
      m.framesIn.labels('probe.response').inc();
      return result;
    } catch (error) {
      if (error instanceof RpcError) m.framesIn.labels('probe.response').inc();
      else if (error instanceof PeerError && error.code === 'invalid_result') m.framesIn.labels('probe.response').inc();
      else if (error instanceof PeerError && error.code === 'timeout') {
        const id = error.details?.['id'];
        if (typeof id === 'number' || typeof id === 'string') {
          this.expiredProbes.add(id);
          if (this.expiredProbes.size > 1000) this.expiredProbes.delete(this.expiredProbes.values().next().value as RpcId);
        }
      }
      throw error;
    }
  }

  /** agent.shutdown (a notification). False when it could not be sent. */
  sendShutdown(reason: 'ServerReload' | 'Revoked' | 'Decommission', drain_seconds: number): boolean {
    return this.notify('agent.shutdown', () => this.client.agentShutdown({ reason, drain_seconds }));
  }

  /** config.update (a notification) with the config verbatim and apply_after passed through. */
  sendConfig(config: AgentConfig, apply_after: string | null): boolean {
    return this.notify('config.update', () => this.client.configUpdate({ config, apply_after }));
  }

  private notify(method: string, send: () => void): boolean {
    if (!this.open) return false;
    try {
      send();
      this.ctx.metrics.framesOut.labels(method).inc();
      return true;
    } catch (error) {
      this.ctx.logger.warn({ host_id: this.host_id, method, err: String(error) }, 'could not send notification');
      return false;
    }
  }

  /** agent.hello in the seed's order: envelope (done), protocol, version, token, schema. */
  private async handshake(id: string | number, params: unknown): Promise<void> {
    const s = this.ctx.settings;
    const p = (params !== null && typeof params === 'object' && !Array.isArray(params) ? params : {}) as Record<string, unknown>;
    const hostIdRaw = p['host_id'];

    const pv = p['protocol_version'];
    if (pv === undefined) {
      // Not a version mismatch: a hello without the field is malformed (DECISIONS H10).
      const issue = { path: '/protocol_version', message: `is required (this server speaks protocol_version ${PROTOCOL_VERSION})` };
      return this.fail(id, new InvalidParamsError({ method: 'agent.hello', errors: [issue] }, 'InvalidParams'), 4001, hostIdRaw);
    }
    if (pv !== PROTOCOL_VERSION || pv < s.required_protocol_version) {
      const current = typeof pv === 'number' && Number.isInteger(pv) ? pv : PROTOCOL_VERSION;
      return this.fail(id, new AgentVersionUnsupportedError({ required_protocol_version: Math.max(s.required_protocol_version, PROTOCOL_VERSION), current }, 'AgentVersionUnsupported'), 4001, hostIdRaw);
    }
    const av = p['agent_version'];
    if (typeof av === 'string' && !isAgentVersionSupported(av, s.min_agent_version)) {
      return this.fail(id, new AgentVersionUnsupportedError({ min_agent_version: s.min_agent_version as string, agent_version: av }, 'AgentVersionUnsupported'), 4001, hostIdRaw);
    }

    const token = typeof p['token'] === 'string' ? (p['token'] as string) : '';
    const host_id = typeof hostIdRaw === 'string' && /^[0-9a-fA-F-]{36}$/.test(hostIdRaw) ? hostIdRaw.toLowerCase() : undefined;
    const row: HelloLookup | undefined = host_id === undefined ? undefined : await findForHello(this.ctx.storage.db, host_id);
    if (this.state !== 'hello_pending') return; // timed out or closed meanwhile: touch nothing
    const presented = hashToken(token);
    const matchCurrent = hashesEqual(presented, row?.token_hash ?? NO_HASH);
    const matchPrev = hashesEqual(presented, row?.token_hash_prev ?? NO_HASH);
    const authFailed = () => new AuthFailedError({ reason: 'token_hash_mismatch' }, 'AuthFailed');
    if (row === undefined || host_id === undefined) return this.fail(id, authFailed(), 4001, hostIdRaw);
    if (row.connection_state === 'Revoked' || (row.token_hash === null && row.token_hash_prev === null)) {
      return this.fail(id, new TokenRevokedError({ reason: 'revoked' }, 'TokenRevoked'), 4002, host_id);
    }
    if (!matchCurrent && !matchPrev) return this.fail(id, authFailed(), 4001, host_id);
    const now = new Date();
    const inGrace = row.token_rotation_grace_until !== null && now.toISOString() < row.token_rotation_grace_until;
    if (!matchCurrent && !inGrace) {
      return this.fail(id, new TokenRotationRequiredError({ reason: 'the previous token is no longer valid: re-enroll with `agent issue --host-id`' }, 'TokenRotationRequired'), 4001, host_id);
    }
    if (matchCurrent && row.connection_state === 'NeverConnected') {
      // One-time enrollment tokens expire (DECISIONS H8).
      const expires = await enrollmentExpiresAt(this.ctx.storage.db, host_id);
      if (this.state !== 'hello_pending') return;
      if (expires !== undefined && expires <= now.toISOString()) {
        this.ctx.logger.info({ host_id, expires_at: expires }, 'enrollment token expired: issue a new one with `agent issue --host-id`');
        return this.fail(id, new AuthFailedError({ reason: 'expired' }, 'AuthFailed'), 4001, host_id);
      }
    }
    if (row.decommission_requested_at !== null) {
      // Decommissioned while not connected (or its server went away): revoke now (DESIGN 5.13).
      await revoke(this.ctx.storage.db, host_id).catch(() => undefined);
      this.ctx.logger.info({ host_id }, 'hello from a decommissioned host: revoked');
      return this.fail(id, new TokenRevokedError({ reason: 'decommissioned' }, 'TokenRevoked'), 4002, host_id);
    }
    if (!validateAgentHelloParams(params)) {
      const issues = toIssues(validateAgentHelloParams.errors).slice(0, 20).map((i) => ({ ...i }));
      return this.fail(id, new InvalidParamsError({ method: 'agent.hello', errors: issues }, 'InvalidParams'), 4001, host_id);
    }
    const hello: AgentHelloParams = params;
    if (typeof hello.resume_from_seq === 'number' && hello.resume_from_seq > LIMITS.max_seq) {
      const issue = { path: '/resume_from_seq', message: `must be at most max_seq = ${LIMITS.max_seq} (2^53 - 1)` };
      return this.fail(id, new InvalidParamsError({ method: 'agent.hello', errors: [issue] }, 'InvalidParams'), 4001, host_id);
    }

    // Authenticated. From here the hello timer no longer closes the socket.
    this.state = 'activating';
    const session_id = randomUUID();
    const start: SessionStart = {
      session_id,
      agent_version: hello.agent_version,
      hostname: hello.hostname,
      platform_json: JSON.stringify(hello.platform),
      capabilities_json: JSON.stringify(hello.capabilities),
      last_handshake: now.toISOString(),
      server_id: this.ctx.serverId,
    };
    const db = this.ctx.storage.db;
    let rotated: string | undefined;
    let ok: boolean;
    if (matchCurrent && row.connection_state === 'NeverConnected') {
      rotated = generateToken(); // first enrollment: no grace window
      ok = await rotateOnFirstEnrollment(db, host_id, start, { presented_hash: presented, new_token_hash: hashToken(rotated) });
    } else if (!matchCurrent) {
      rotated = generateToken(); // previous token inside its grace window: rotate again (DESIGN 5.2)
      ok = await rotateOnHello(db, host_id, start, { presented_hash: presented, new_token_hash: hashToken(rotated), grace_until: row.token_rotation_grace_until as string });
    } else if (row.rotate_requested_at !== null) {
      rotated = generateToken(); // `agent rotate` asked for it (DESIGN 5.2)
      const graceSecs = row.rotation_grace_secs ?? s.rotation_grace_secs;
      ok = await rotateOnHello(db, host_id, start, { presented_hash: presented, new_token_hash: hashToken(rotated), grace_until: new Date(now.getTime() + graceSecs * 1000).toISOString() });
    } else {
      ok = await markActive(db, host_id, start, presented, { clear_prev: row.token_hash_prev !== null });
    }
    if (!ok) {
      this.state = 'hello_pending';
      return this.fail(id, authFailed(), 4001, host_id);
    }
    const current = await getAgent(db, host_id);
    clearTimeout(this.helloTimer);
    this.host_id = host_id;
    this.session_id = session_id;
    this.ingest = this.ctx.ingest.session(host_id, session_id);
    const accepted_seq = Number(current?.accepted_seq ?? row.accepted_seq);
    if (this.ws.readyState !== this.ws.OPEN) {
      // The socket went away while the row was being activated: record the close now.
      this.state = 'active';
      return this.onCloseAuthenticated(1006, 'closed during hello');
    }
    this.state = 'active';
    this.supportedProbes = new Set(hello.capabilities.supported_probes);
    this.configVersion = Number(current?.config_version ?? row.config_version);
    this.ctx.register(this);
    const resume = hello.resume_from_seq;
    if (typeof resume === 'number' && resume > accepted_seq) {
      this.ctx.logger.warn({ host_id, resume_from_seq: resume, accepted_seq, lost: resume - accepted_seq }, 'agent acked more than the database holds (restored from an older copy?): range lost');
      this.ctx.metrics.gaps.labels('lost').inc();
      this.ctx.metrics.gapEntries.labels('lost').inc(resume - accepted_seq);
    }
    const result: AgentHelloResult = {
      server_version: this.ctx.serverVersion,
      server_time: new Date().toISOString(),
      accepted_seq,
      session_id,
      config: this.configFor(current?.agent_config_json ?? null, current?.config_apply_after ?? null),
      ...(rotated !== undefined ? { rotated_token: rotated } : {}),
    };
    this.sendRaw({ jsonrpc: '2.0', id, result });
    this.ctx.onHelloOk?.(this.clientKey);
    this.ctx.metrics.framesOut.labels('agent.hello').inc();
    this.ctx.metrics.handshakes.labels(rotated === undefined ? 'ok' : row.connection_state === 'NeverConnected' ? 'enrolled' : 'rotated').inc();
    this.ctx.logger.info({ host_id, session_id, address: this.address, rotated: rotated !== undefined, accepted_seq }, 'agent connected');
    // A staged config (apply_after in the future) goes out at once, so the agent applies it on time.
    const staged = current?.config_apply_after ?? null;
    if (current?.agent_config_json != null && staged !== null && staged > new Date().toISOString()) {
      const cfg = parseStoredConfig(current.agent_config_json);
      if (cfg !== undefined) this.sendConfig(cfg, staged);
    }
  }

  private configFor(json: string | null, applyAfter: string | null): AgentConfig {
    if (json !== null && (applyAfter === null || applyAfter <= new Date().toISOString())) {
      try {
        const parsed: unknown = JSON.parse(json);
        if (validateAgentConfig(parsed)) return parsed;
      } catch {
        // fall through to the default
      }
      this.ctx.logger.warn({ host_id: this.host_id }, 'stored agent config is invalid; sending the server default');
    }
    return this.ctx.settings.default_agent_config;
  }

  private async metricsPush(ts: string, samples: { name: string; value: number; labels?: Record<string, string> }[]): Promise<MetricsPushResult> {
    try {
      const accepted = await this.ctx.storage.ingest.insertMetrics(this.host_id as string, ts, samples);
      return { accepted, dropped: samples.length - accepted };
    } catch (error) {
      if (error instanceof UnknownHostError) throw new UnknownHostRpcError({ host_id: this.host_id as string });
      throw error;
    }
  }

  private onPeerEvent(e: PeerEvent): void {
    const log = this.ctx.logger;
    switch (e.type) {
      case 'handler_error':
        log.error({ host_id: this.host_id, method: e.method, err: String(e.error) }, 'handler failed');
        break;
      case 'invalid_params':
        if (e.id !== undefined) this.ctx.metrics.framesOut.labels(e.method).inc();
        log.info({ host_id: this.host_id, method: e.method, issues: e.issues.slice(0, 5) }, e.id === undefined ? 'malformed notification dropped' : 'invalid params (-32602)');
        break;
      case 'unknown_response':
        if (e.id !== null && this.expiredProbes.delete(e.id)) {
          this.ctx.metrics.probeLateAnswers.inc();
          this.ctx.metrics.framesIn.labels('probe.response').inc();
          log.info({ host_id: this.host_id, id: e.id }, 'late probe answer dropped (the caller already got -32012)');
        } else log.info({ host_id: this.host_id, id: e.id }, 'response with an unknown id dropped');
        break;
      case 'rejected':
      case 'invalid_request':
      case 'parse_error':
        this.ctx.metrics.framesOut.labels(e.type === 'rejected' ? e.method : '(error)').inc();
        log.debug({ host_id: this.host_id, event: e.type }, 'peer event');
        break;
      case 'binary_frame':
        log.info({ host_id: this.host_id, address: this.address }, 'binary frame: closing 1003');
        break;
      default:
        log.debug({ host_id: this.host_id, event: e.type }, 'peer event');
    }
  }

  private async onClose(code: number, reason: string): Promise<void> {
    const wasActive = this.state === 'active';
    this.state = 'closed';
    clearTimeout(this.helloTimer);
    this.ctx.unregister(this);
    const recorded = this.serverClose ?? { code, reason };
    this.closeListener?.(code, reason);
    if (wasActive) {
      this.ctx.metrics.disconnects.labels(String(recorded.code)).inc();
      await this.onCloseAuthenticated(recorded.code, recorded.reason);
      this.ctx.onSessionClosed?.(this);
    }
  }

  private async onCloseAuthenticated(code: number, reason: string): Promise<void> {
    this.ctx.unregister(this);
    try {
      await this.ingest?.drain();
    } catch {
      // answered (or not) already; nothing else to do
    }
    const text = `${code} ${reason || CLOSE_NAMES[code] || 'closed'}`;
    try {
      await markDisconnected(this.ctx.storage.db, this.host_id as string, this.session_id as string, text);
    } catch (error) {
      this.ctx.logger.warn({ host_id: this.host_id, err: String(error) }, 'could not record the disconnect');
    }
    this.ctx.logger.info({ host_id: this.host_id, session_id: this.session_id, reason: text }, 'agent disconnected');
  }
}

/** A stored AgentConfig JSON text, when it parses and validates. */
export function parseStoredConfig(json: string): AgentConfig | undefined {
  try {
    const parsed: unknown = JSON.parse(json);
    return validateAgentConfig(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The hello frame, when the first frame is a well-formed agent.hello request. */
function parseHello(text: string): { id: string | number; params: unknown } | undefined {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return undefined;
  const m = msg as { method?: unknown; id?: unknown; params?: unknown };
  if (m.method !== 'agent.hello' || !validateJsonRpcRequest(msg)) return undefined;
  if (typeof m.id !== 'string' && typeof m.id !== 'number') return undefined;
  return { id: m.id, params: m.params };
}
