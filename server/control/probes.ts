// The probe router (seed 4.6, 4.7, 8; DESIGN.md section 3 and 5.11): invoke(host_id, probe,
// args, timeout_ms) on the session this process holds for that host. Every outcome maps to
// a JSON-RPC error object and the admin API's HTTP status:
//   unknown host, or no session here        404  -32004
//   probe not in supported_probes           422  -32010  (nothing sent)
//   the agent's own JSON-RPC error          502  unchanged (-32010, -32011, -32012, -32602, ...)
//   reply that is not a ProbeOutput         502  -32603
//   session closed before the answer        503  -32603
//   no answer within timeout_ms + grace     504  -32012  (a late answer is dropped and counted)
import {
  InternalError,
  PeerError,
  ProbeTimeoutError,
  ProbeUnavailableError,
  RpcError,
  UnknownHostError as UnknownHostRpcError,
  type ProbeOutput,
  type ProbeRequestParams,
} from '@cortex/agent-protocol';
import { getAgent } from '../db/agents.repository.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import type { Connection } from '../ws/connection.js';

/** Default grace after timeout_ms before the server answers -32012 itself (DESIGN 5.11). */
export const PROBE_GRACE_MS = 1000;

export class ProbeFailure extends Error {
  constructor(
    readonly status: number,
    readonly rpc: RpcError,
  ) {
    super(rpc.message);
    this.name = 'ProbeFailure';
  }
}

export class ProbeRouter {
  constructor(
    private readonly sessions: ReadonlyMap<string, Connection>,
    private readonly storage: Storage,
    private readonly metrics: ServerMetrics,
    private readonly logger: Logger,
    private readonly graceMs = PROBE_GRACE_MS,
  ) {}

  /**
   * Reaches a host whose session another server on the same database holds
   * (server/cluster/probe-forward.ts); undefined: no such server, probes stay local.
   */
  forwarder: { forward(host_id: string, probe: string, args: unknown, timeout_ms: number): Promise<ProbeOutput | undefined> } | undefined;

  /**
   * Resolves with the agent's ProbeOutput as it sent it; rejects with a ProbeFailure. A
   * host held by another live server on the same database is probed through it, with the
   * same outcomes and timeouts.
   */
  async invoke(host_id: string, probe: string, args: unknown, timeout_ms: number): Promise<ProbeOutput> {
    const id = host_id.toLowerCase();
    const conn = this.sessions.get(id);
    if ((conn === undefined || !conn.open) && this.forwarder !== undefined && /^[0-9a-f-]{36}$/.test(id)) {
      const forwarded = await this.forwarder.forward(id, probe, args, timeout_ms);
      if (forwarded !== undefined) return forwarded;
    }
    return this.invokeLocal(host_id, probe, args, timeout_ms);
  }

  /** invoke() on this process's own session only (a forwarded probe runs this). */
  async invokeLocal(host_id: string, probe: string, args: unknown, timeout_ms: number): Promise<ProbeOutput> {
    const id = host_id.toLowerCase();
    const conn = this.sessions.get(id);
    if (conn === undefined || !conn.open) {
      const row = /^[0-9a-f-]{36}$/.test(id) ? await getAgent(this.storage.db, id) : undefined;
      const message =
        row === undefined
          ? `unknown host ${host_id}`
          : row.connection_state === 'Active'
            ? this.forwarder !== undefined
              ? `host ${id} is marked Active but no live server on this database holds its session (its server stopped or lost its lease; the agent reconnects shortly)`
              : `host ${id} has no session on this server (it may be connected to another server process; send the probe to that one)`
            : `host ${id} is not connected (state ${row.connection_state})`;
      throw new ProbeFailure(404, new UnknownHostRpcError({ host_id: id, reason: message }, 'UnknownHost'));
    }
    if (!conn.supportedProbes.has(probe)) {
      this.metrics.probeRequests.labels(probe, 'unlisted').inc();
      throw new ProbeFailure(422, new ProbeUnavailableError({ probe, reason: 'not in the host\'s capabilities.supported_probes; nothing was sent' }, 'ProbeUnavailable'));
    }
    const params: ProbeRequestParams = { probe, args, timeout_ms };
    const started = performance.now();
    try {
      const output = await conn.probe(params, this.graceMs);
      this.metrics.probeRequests.labels(probe, 'ok').inc();
      this.metrics.probeDuration.labels(probe).observe((performance.now() - started) / 1000);
      return output;
    } catch (error) {
      if (error instanceof RpcError) {
        this.metrics.probeRequests.labels(probe, 'agent_error').inc();
        this.metrics.probeDuration.labels(probe).observe((performance.now() - started) / 1000);
        throw new ProbeFailure(502, error);
      }
      if (error instanceof PeerError && error.code === 'timeout') {
        this.metrics.probeRequests.labels(probe, 'timeout').inc();
        this.logger.info({ host_id: id, probe, timeout_ms }, 'probe timed out (-32012)');
        throw new ProbeFailure(504, new ProbeTimeoutError({ probe, timeout_ms }, 'ProbeTimeout'));
      }
      if (error instanceof PeerError && error.code === 'invalid_result') {
        this.metrics.probeRequests.labels(probe, 'invalid_output').inc();
        throw new ProbeFailure(502, new InternalError({ reason: `the agent's answer is not a ProbeOutput: ${error.message}` }, 'InternalError'));
      }
      if (error instanceof PeerError && (error.code === 'closed' || error.code === 'send_failed')) {
        this.metrics.probeRequests.labels(probe, 'session_closed').inc();
        throw new ProbeFailure(503, new InternalError({ reason: `the session closed before the probe was answered (${error.message})` }, 'InternalError'));
      }
      this.metrics.probeRequests.labels(probe, 'error').inc();
      this.logger.error({ host_id: id, probe, err: String(error) }, 'probe failed');
      throw new ProbeFailure(503, new InternalError({ reason: String((error as Error)?.message ?? error) }, 'InternalError'));
    }
  }
}
