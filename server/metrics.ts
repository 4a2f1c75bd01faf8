// Prometheus metrics of one server (GET /metrics). One Registry per server instance (tests
// run several servers in one process). Labels are bounded sets (method names, close codes,
// probe names the agents declared, result names); no label or value ever holds a token.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type HandshakeResult =
  | 'ok'
  | 'enrolled'
  | 'rotated'
  | 'AuthFailed'
  | 'TokenRevoked'
  | 'AgentVersionUnsupported'
  | 'TokenRotationRequired'
  | 'InvalidParams'
  | 'timeout'
  | 'error';

export type ProbeResult = 'ok' | 'agent_error' | 'timeout' | 'session_closed' | 'unlisted' | 'invalid_output' | 'error';

export class ServerMetrics {
  readonly registry = new Registry();
  readonly connectionsActive: Gauge;
  readonly handshakes: Counter<'result'>;
  readonly framesIn: Counter<'method'>;
  readonly framesOut: Counter<'method'>;
  readonly logsPushed: Counter;
  readonly ackLag: Histogram;
  readonly probeRequests: Counter<'probe' | 'result'>;
  readonly probeDuration: Histogram<'probe'>;
  readonly probeLateAnswers: Counter;
  readonly disconnects: Counter<'code'>;
  readonly readsHeld: Counter;
  readonly metricsRefused: Counter;
  readonly ingestQueueDepth: Gauge;
  readonly ingestFailures: Counter<'reason'>;
  /** logs.push answered with an error before anything was queued, by code (-32020 queue full, -32030 agent rate, -32008, -32602, -32004). */
  readonly pushRefused: Counter<'code'>;
  /** 1 while the database answers, 0 from the first failure to reach it to the next success (server/db/outage.ts). */
  readonly databaseUp: Gauge;
  /** The oldest running ingest commit's wait (DECISIONS H45). */
  readonly commitWait: Gauge;
  /** This server's clock minus the database's, seconds (DECISIONS G20; 0 on SQLite). */
  readonly clockOffset: Gauge;
  /** When the TLS certificate served expires (DECISIONS H19; only with TLS). */
  readonly tlsExpiry: Gauge | undefined;
  readonly gaps: Counter<'kind'>;
  readonly gapEntries: Counter<'kind'>;
  readonly retentionPurged: Counter<'table' | 'reason'>;
  readonly retentionRuns: Counter;
  /** How far retention's time is held behind the clock that jumped ahead (DECISIONS H76; set by the retention pass). */
  readonly retentionClockHeld: Gauge;
  readonly controlActions: Counter<'action'>;
  /** Lone surrogates and NUL replaced by U+FFFD in stored log text (DECISIONS H3). */
  readonly charsReplaced: Counter;
  /** Hellos refused for a bad, revoked or stale token (throttled per address, DECISIONS H7). */
  readonly helloFailures: Counter;
  /** Upgrades refused before the WebSocket: origin, failed_hellos. */
  readonly upgradesRefused: Counter<'reason'>;
  // Pre-bound children for the hot path (no label lookup per frame).
  readonly pushIn: Counter.Internal;
  readonly pushOut: Counter.Internal;

  constructor(sources: { activeSessions: () => number; queueDepth: () => number; commitWaitMs?: () => number; databaseUp?: () => boolean; clockOffsetMs?: () => number; tlsExpiresAtMs?: () => number }, options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.defaultMetrics) {
      collectDefaultMetrics({ register: this.registry, prefix: 'cortex_process_' });
      // prom-client's *_total gauges break the naming rules (`promtool check metrics`:
      // "non-counter metrics should not have _total suffix"); the same figures remain, by
      // type, in cortex_process_nodejs_active_{handles,requests,resources}{type}.
      for (const kind of ['handles', 'requests', 'resources']) this.registry.removeSingleMetric(`cortex_process_nodejs_active_${kind}_total`);
    }
    this.connectionsActive = new Gauge({
      name: 'cortex_connections_active',
      help: 'Authenticated agent sessions held by this server',
      registers,
      collect() {
        this.set(sources.activeSessions());
      },
    });
    this.handshakes = new Counter({ name: 'cortex_handshakes_total', help: 'agent.hello outcomes', labelNames: ['result'], registers });
    this.framesIn = new Counter({ name: 'cortex_frames_in_total', help: 'Frames received from authenticated agents, by method (probe.response for answers)', labelNames: ['method'], registers });
    this.framesOut = new Counter({ name: 'cortex_frames_out_total', help: 'Frames sent to agents, by method (responses count under the request method)', labelNames: ['method'], registers });
    this.logsPushed = new Counter({ name: 'cortex_logs_pushed_entries_total', help: 'Log entries committed (stored) by the ingest path', registers });
    this.ackLag = new Histogram({
      name: 'cortex_ack_lag_seconds',
      help: 'Time from a logs.push arriving to its ack (commit included)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2.5, 5],
      registers,
    });
    this.probeRequests = new Counter({ name: 'cortex_probe_requests_total', help: 'Probe invocations by probe and result', labelNames: ['probe', 'result'], registers });
    this.probeDuration = new Histogram({
      name: 'cortex_probe_duration_seconds',
      help: 'Probe round trip as seen by the server (answered probes)',
      labelNames: ['probe'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.probeLateAnswers = new Counter({ name: 'cortex_probe_late_answers_total', help: 'Probe answers that arrived after the caller was failed with -32012 (dropped)', registers });
    this.metricsRefused = new Counter({ name: 'cortex_metrics_push_refused_total', help: 'metrics.push requests answered -32020: the agent had 4 being stored already (it sends without waiting for the answers)', registers });
    this.readsHeld = new Counter({ name: 'cortex_agent_reads_held_total', help: 'Times the server stopped reading an agent that had more than 1 MiB of answers queued (it sends without reading)', registers });
    this.disconnects = new Counter({ name: 'cortex_disconnects_total', help: 'Closed authenticated sessions by close code', labelNames: ['code'], registers });
    this.ingestQueueDepth = new Gauge({
      name: 'cortex_ingest_queue_depth_entries',
      help: 'Entries accepted and not yet committed (all sessions)',
      registers,
      collect() {
        this.set(sources.queueDepth());
      },
    });
    this.commitWait = new Gauge({
      name: 'cortex_ingest_commit_wait_seconds',
      help: 'How long the oldest ingest commit running now has waited for the database (0 when none runs); minutes mean something holds the database up (a lock, an overloaded database)',
      registers,
      collect() {
        this.set((sources.commitWaitMs?.() ?? 0) / 1000);
      },
    });
    this.databaseUp = new Gauge({
      name: 'cortex_database_up',
      help: 'Whether the database answers: 0 from the first operation that could not reach it to the next that succeeded',
      registers,
      collect() {
        this.set(sources.databaseUp === undefined || sources.databaseUp() ? 1 : 0);
      },
    });
    this.clockOffset = new Gauge({
      name: 'cortex_server_clock_offset_seconds',
      help: "This server's clock minus the database's, as measured at its last lease renewal (PostgreSQL; 0 on SQLite, where they are one clock)",
      registers,
      collect() {
        this.set((sources.clockOffsetMs?.() ?? 0) / 1000);
      },
    });
    const tlsExpiresAtMs = sources.tlsExpiresAtMs;
    this.tlsExpiry =
      tlsExpiresAtMs === undefined
        ? undefined
        : new Gauge({
            name: 'cortex_tls_certificate_expiry_timestamp_seconds',
            help: 'When the TLS certificate this server serves expires (Unix time); it is read again on SIGHUP and when its file changes',
            registers,
            collect() {
              this.set(tlsExpiresAtMs() / 1000);
            },
          });
    this.ingestFailures = new Counter({
      name: 'cortex_ingest_commit_failures_total',
      help: 'logs.push commits that failed (answered -32007, nothing stored, the agent resends), by reason: disk_full, read_only, db_unreachable, writer_stopped, error',
      labelNames: ['reason'],
      registers,
    });
    this.pushRefused = new Counter({
      name: 'cortex_logs_push_refused_total',
      help: 'logs.push refused before anything was queued, by JSON-RPC error code: -32020 the ingest queue full (the server at capacity), -32030 an agent over its rate, -32008 a batch over the cap, -32602 invalid, -32004 host gone',
      labelNames: ['code'],
      registers,
    });
    this.gaps = new Counter({ name: 'cortex_gaps_seen_total', help: 'Sequence gaps: seq_start beyond accepted_seq+1 (evicted), or the database holding less than was acked: resume_from_seq beyond accepted_seq, or accepted_seq gone back under a session (lost)', labelNames: ['kind'], registers });
    this.gapEntries = new Counter({ name: 'cortex_gap_entries_total', help: 'Entries missing in the gaps counted by cortex_gaps_seen_total', labelNames: ['kind'], registers });
    this.retentionPurged = new Counter({ name: 'cortex_retention_purged_rows_total', help: 'Rows deleted by retention (age) or the size cap (size)', labelNames: ['table', 'reason'], registers });
    this.retentionRuns = new Counter({ name: 'cortex_retention_runs_total', help: 'Retention passes completed', registers });
    this.retentionClockHeld = new Gauge({
      name: 'cortex_retention_clock_held_seconds',
      help: "How far behind the clock retention counts its cutoff from, as of its last pass: the clock (this machine's on SQLite, the database's time on PostgreSQL) jumped ahead of the time this process has seen pass, and retention keeps the rows it would otherwise delete; 0 when they agree. Check the clock (timedatectl status, chronyc tracking)",
      registers,
    });
    this.helloFailures = new Counter({ name: 'cortex_hello_auth_failures_total', help: 'Hellos refused for a bad, revoked or stale token (counted per address by the throttle)', registers });
    this.upgradesRefused = new Counter({ name: 'cortex_upgrades_refused_total', help: 'Upgrades refused before the WebSocket: origin (browser Origin not allowed), failed_hellos (throttled)', labelNames: ['reason'], registers });
    this.charsReplaced = new Counter({ name: 'cortex_log_chars_replaced_total', help: 'Lone surrogates and NUL characters in log text stored as U+FFFD', registers });
    this.controlActions = new Counter({ name: 'cortex_control_actions_total', help: 'Control-plane actions taken on sessions held here', labelNames: ['action'], registers });
    this.pushIn = this.framesIn.labels('logs.push');
    this.pushOut = this.framesOut.labels('logs.push');
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
