// The server's calls to one session's agent (probe.request, agent.shutdown, config.update),
// with their frame counters. Probe answers that come after their caller already got -32012
// are remembered here (a bounded set of ids), so the peer's "unknown response" tells a late
// answer from a stray one.
import { PeerError, RpcError, type AgentConfig, type ProbeOutput, type ProbeRequestParams, type RpcId, type ServerClient } from '@cortex/agent-protocol';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';

/** At most this many expired probe ids are remembered. */
const MAX_EXPIRED = 1000;

export class AgentCalls {
  /** Ids of probe.requests whose caller already got -32012: their answers are late. */
  private readonly expired = new Set<RpcId>();

  constructor(
    readonly client: ServerClient,
    private readonly metrics: ServerMetrics,
    private readonly logger: Logger,
    /** True while the session is open and authenticated. */
    private readonly open: () => boolean,
    private readonly hostId: () => string | undefined,
  ) {}

  /** Removes and reports an id whose probe.request already timed out. */
  expiredProbe(id: RpcId): boolean {
    return this.expired.delete(id);
  }

  /** See Connection.probe. */
  async probe(params: ProbeRequestParams, graceMs: number): Promise<ProbeOutput> {
    const m = this.metrics;
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
          this.expired.add(id);
          if (this.expired.size > MAX_EXPIRED) this.expired.delete(this.expired.values().next().value as RpcId);
        }
      }
      throw error;
    }
  }

  /** agent.shutdown (a notification). False when it could not be sent. */
  shutdown(reason: 'ServerReload' | 'Revoked' | 'Decommission', drain_seconds: number): boolean {
    return this.notify('agent.shutdown', () => this.client.agentShutdown({ reason, drain_seconds }));
  }

  /** config.update (a notification) with the config verbatim and apply_after passed through. */
  config(config: AgentConfig, apply_after: string | null): boolean {
    return this.notify('config.update', () => this.client.configUpdate({ config, apply_after }));
  }

  private notify(method: string, send: () => void): boolean {
    if (!this.open()) return false;
    try {
      send();
      this.metrics.framesOut.labels(method).inc();
      return true;
    } catch (error) {
      this.logger.warn({ host_id: this.hostId(), method, err: String(error) }, 'could not send notification');
      return false;
    }
  }
}
