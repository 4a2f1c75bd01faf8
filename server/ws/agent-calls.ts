// The server's calls to one session's agent (probe.request, agent.shutdown, config.update),
// with their frame counters. Probe answers that come after their caller already got -32012
// are remembered here (a bounded set of ids), so the peer's "unknown response" tells a late
// answer from a stray one.
import { PeerError, RpcError, type AgentConfig, type ProbeOutput, type ProbeRequestParams, type RpcId, type ServerClient } from '@cortex/agent-protocol';
import { nestedDeeperThan } from '@cortex/agent-protocol/runtime';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';

/** At most this many expired probe ids are remembered. */
const MAX_EXPIRED = 1000;

/**
 * Deepest nesting of a probe's `output` the server passes on (the output itself is level 1).
 * Deeper is an invalid answer (502): 5,000 levels overflowed the stack of the JSON.stringify
 * that writes the admin API's answer (a 500), and of the console that shows it (DECISIONS H68).
 * The built-in probes' outputs are 4 levels deep at most.
 */
export const PROBE_OUTPUT_MAX_DEPTH = 256;

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
    let result: ProbeOutput;
    try {
      result = await this.client.probeRequest(params, { timeoutMs: params.timeout_ms + graceMs });
    } catch (error) {
      // An answer that is no JSON-RPC response (result and error, an error without a message)
      // is an invalid answer like a result that is no ProbeOutput: the caller gets a 502 now,
      // not a 504 at the timeout (DECISIONS H67).
      if (error instanceof PeerError && error.code === 'invalid_response') {
        m.framesIn.labels('probe.response').inc();
        throw new PeerError('invalid_result', error.message, error.details === undefined ? undefined : { ...error.details });
      }
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
    m.framesIn.labels('probe.response').inc();
    if (nestedDeeperThan(result.output, PROBE_OUTPUT_MAX_DEPTH)) {
      throw new PeerError('invalid_result', `probe.request result is invalid: output is nested deeper than ${PROBE_OUTPUT_MAX_DEPTH} levels`);
    }
    return result;
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
