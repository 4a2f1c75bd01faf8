// Probes across servers on one database (DECISIONS G4). The server a caller asks (admin
// API, `probe` CLI) may not hold the host's session; the one named in agents.server_id
// does. The request goes through the database:
//   1. origin inserts a probe_requests row (state pending) and NOTIFYs `cortex_probe`
//      {"t":"req","id","target"};
//   2. the target claims it (pending -> taken, so it runs once), runs the probe on its own
//      session (ProbeRouter.invokeLocal: the same checks, errors and timeout), stores the
//      outcome (HTTP status + {"result"} or {"error"}), state done, NOTIFYs {"t":"ans"};
//   3. origin reads the answer, deletes the row and answers its caller with exactly that
//      status and JSON-RPC error. No answer within timeout_ms + grace + FORWARD_SLACK_MS:
//      -32012 (504), as for a local probe.
// While it waits, the origin watches the target (DECISIONS G42): its lease row gone or run out,
// its presence lock let go (PostgreSQL: the lock its LISTEN connection holds goes with its
// process), the request left unclaimed for FORWARD_UNCLAIMED_MS, or, at the deadline, its lease
// not renewed for longer than a live server lets it go: the server holding the session went away, and the caller is
// told so at once (503 -32603, as when the agent's session closes under a local probe), not
// after the whole timeout as if the host had not answered.
// Without a notification bus (SQLite), or when a notification is missed (the LISTEN
// connection was down), both sides poll the table every pollMs.
// The origin's waits (the deadline, how long the target has gone without renewing, the
// presence lock gone, the request unclaimed) are measured with performance.now(): a step of
// the wall clock (`date -s`, NTP) ahead answered a probe "went away" at once, one back kept it
// waiting for as long as the step (DECISIONS G45). Lease times stay in the database's time.
import { randomUUID } from 'node:crypto';
import { errorFromWire, InternalError, ProbeTimeoutError, type ProbeOutput, type RpcErrorObject } from '@cortex/agent-protocol';
import { DatabaseOutage } from '../db/outage.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import { ProbeFailure, type ProbeRouter } from '../control/probes.js';
import type { HeldSession, SessionRegistry } from './registry.js';

/** Extra wait for the two database hops of a forwarded probe (ms). */
export const FORWARD_SLACK_MS = 1000;
/** A request the target has not claimed for this long is withdrawn: it is not taking probes up (ms). */
export const FORWARD_UNCLAIMED_MS = 5000;
/** The target's presence lock seen and then let go for this long: its process is gone (ms; a reconnect of its LISTEN connection takes it again within about a second). */
export const PRESENCE_GONE_MS = 2000;
const CHANNEL = 'cortex_probe';

/** What the origin saw of the target while it waited (see ProbeForwarder.holderGone). */
interface HolderWatch {
  readonly target: string;
  readonly askedAt: number;
  /** The target's lease_until as last renewed (seen to change), when that was seen (performance.now()) and how long it had to run then (ms). */
  lease?: { until: string; seenAt: number; leftMs: number };
  presenceSeen: boolean;
  presenceGoneSince?: number;
}

type Notice = { t: 'req'; id: string; target: string } | { t: 'ans'; id: string; origin: string };

/** Time a renewal may come late (its timer, its own queries) before it counts as missed (ms). */
const RENEWAL_SLACK_MS = 2000;

/**
 * How long the target has gone without renewing its lease, when that is longer than a live
 * server does (else undefined). A server renews its lease every third of its length, and its
 * length is at least what was left of it when it was seen (leftMs): a live server renews it
 * within leftMs/3 of that, whatever its --lease-secs.
 */
function notRenewedFor(watch: HolderWatch): number | undefined {
  if (watch.lease === undefined) return undefined;
  const since = performance.now() - watch.lease.seenAt;
  return since > watch.lease.leftMs / 3 + RENEWAL_SLACK_MS ? since : undefined;
}

export class ProbeForwarder {
  private readonly waiting = new Map<string, () => void>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  private scanning: Promise<void> | undefined;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly storage: Storage,
    private readonly registry: SessionRegistry<HeldSession>,
    private readonly router: ProbeRouter,
    private readonly logger: Logger,
    private readonly graceMs: number,
    private readonly outage = new DatabaseOutage({ logger }),
    private readonly pollMs = storage.notifyBus === undefined ? 250 : 1000,
  ) {}

  async start(): Promise<void> {
    const bus = this.storage.notifyBus?.();
    if (bus !== undefined) {
      await bus.listen(CHANNEL, (payload) => this.onNotice(payload));
      // What tells the servers waiting for this one's answers that it is gone, should it die.
      bus.holdPresence?.(this.registry.serverId);
    }
    this.timer = setInterval(() => this.poll(), this.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const wake of this.waiting.values()) wake();
    await this.scanning;
    await Promise.allSettled([...this.running]);
  }

  private onNotice(payload: string): void {
    let n: Notice;
    try {
      n = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (n.t === 'req' && n.target === this.registry.serverId) this.takeSafely(n.id);
    else if (n.t === 'ans' && n.origin === this.registry.serverId) this.waiting.get(n.id)?.();
  }

  private poll(): void {
    if (this.waiting.size > 0) for (const wake of this.waiting.values()) wake();
    this.scanning ??= (async () => {
      const rows = await this.storage.db
        .selectFrom('probe_requests')
        .select('request_id')
        .where('target_server', '=', this.registry.serverId)
        .where('state', '=', 'pending')
        .execute();
      this.outage.readSucceeded();
      for (const r of rows) this.takeSafely(r.request_id);
    })()
      .catch((error: unknown) => {
        this.outage.report('forwarded probes', error, (say) => this.logger.warn({ err: String(error), ...say }, 'forwarded probes: database read failed; retrying'));
      })
      .finally(() => (this.scanning = undefined));
  }

  /**
   * The probe through the server holding the host's session; undefined when no other
   * live server holds it (the caller answers as for a local probe: 404 and why).
   */
  async forward(host_id: string, probe: string, args: unknown, timeout_ms: number): Promise<ProbeOutput | undefined> {
    const db = this.storage.db;
    const now = this.registry.now(); // leases are in the database's time (G20)
    const holder = await db
      .selectFrom('agents')
      .innerJoin('servers', 'servers.server_id', 'agents.server_id')
      .select(['agents.server_id as server_id'])
      .where('agents.host_id', '=', host_id)
      .where('agents.connection_state', '=', 'Active')
      .where('servers.lease_until', '>', now.toISOString())
      .executeTakeFirst();
    const target = holder?.server_id ?? null;
    if (target === null || target === this.registry.serverId) return undefined;

    const request_id = randomUUID();
    await db
      .insertInto('probe_requests')
      .values({ request_id, origin_server: this.registry.serverId, target_server: target, host_id, probe, args_json: JSON.stringify(args ?? {}), timeout_ms, created_at: now.toISOString() })
      .execute();
    this.logger.debug({ host_id, probe, target_server: target, request_id }, 'probe forwarded to the server holding the session');
    const deadline = performance.now() + timeout_ms + this.graceMs + FORWARD_SLACK_MS;
    const watch: HolderWatch = { target, askedAt: performance.now(), presenceSeen: false };
    try {
      await this.storage.notifyBus?.().notify(CHANNEL, JSON.stringify({ t: 'req', id: request_id, target } satisfies Notice));
      for (;;) {
        const row = await db.selectFrom('probe_requests').select(['state', 'http_status', 'answer_json']).where('request_id', '=', request_id).executeTakeFirst();
        if (row !== undefined && row.state === 'done' && row.answer_json !== null) {
          const answer = JSON.parse(row.answer_json) as { result?: ProbeOutput; error?: RpcErrorObject };
          if (answer.error !== undefined) throw new ProbeFailure(row.http_status ?? 502, errorFromWire(answer.error));
          return answer.result as ProbeOutput;
        }
        const gone = await this.holderGone(watch, request_id, row?.state).catch(() => undefined); // not known now: asked again at the next turn
        if (gone !== undefined) throw this.wentAway(watch, host_id, probe, gone);
        const left = deadline - performance.now();
        const stale = left <= 0 ? notRenewedFor(watch) : undefined;
        if (stale !== undefined) throw this.wentAway(watch, host_id, probe, `it has not renewed its lease for ${Math.round(stale / 1000)} s (a live server renews it every third of its length)`);
        if (left <= 0 || this.stopped) break;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, this.pollMs));
          this.waiting.set(request_id, () => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      this.logger.info({ host_id, probe, timeout_ms, target_server: target }, 'forwarded probe not answered in time (-32012)');
      throw new ProbeFailure(504, new ProbeTimeoutError({ probe, timeout_ms }, 'ProbeTimeout'));
    } finally {
      this.waiting.delete(request_id);
      await db.deleteFrom('probe_requests').where('request_id', '=', request_id).execute().catch(() => undefined);
    }
  }

  /**
   * Why the target of a forwarded probe is gone, or undefined while it may still answer: its
   * lease row deleted (it stopped, or a live server swept it) or run out; its presence lock
   * let go for PRESENCE_GONE_MS after it was seen held (its process ended: PostgreSQL lets
   * the lock go with its LISTEN connection); the request still unclaimed after
   * FORWARD_UNCLAIMED_MS (a live server claims it at once on the notification, or at its next
   * poll), then withdrawn so that it does not run late.
   */
  private async holderGone(watch: HolderWatch, request_id: string, state: string | undefined): Promise<string | undefined> {
    const db = this.storage.db;
    const lease = await db.selectFrom('servers').select('lease_until').where('server_id', '=', watch.target).executeTakeFirst();
    if (lease === undefined) return 'it left the servers on this database (it stopped, or another server found its lease run out)';
    if (lease.lease_until <= this.registry.now().toISOString()) return `its lease ran out at ${lease.lease_until} (it stopped renewing it)`;
    if (lease.lease_until !== watch.lease?.until) watch.lease = { until: lease.lease_until, seenAt: performance.now(), leftMs: Date.parse(lease.lease_until) - this.registry.now().getTime() };
    const bus = this.storage.notifyBus?.();
    if (bus?.presenceHeld !== undefined) {
      if (await bus.presenceHeld(watch.target)) {
        watch.presenceSeen = true;
        delete watch.presenceGoneSince;
      } else if (watch.presenceSeen) {
        watch.presenceGoneSince ??= performance.now();
        if (performance.now() - watch.presenceGoneSince >= PRESENCE_GONE_MS) return 'its connection to the database ended (its process stopped)';
      }
    }
    if (state === 'pending' && performance.now() - watch.askedAt >= FORWARD_UNCLAIMED_MS) {
      // Withdrawn only while still unclaimed: claimed meanwhile, it runs and its answer is waited for.
      const withdrawn = await db.deleteFrom('probe_requests').where('request_id', '=', request_id).where('state', '=', 'pending').executeTakeFirst();
      if (withdrawn.numDeletedRows > 0n) return `it did not take the probe up within ${FORWARD_UNCLAIMED_MS / 1000} s (it stopped, or cannot use the database)`;
    }
    return undefined;
  }

  /** The answer for a probe whose target went away: 503 -32603, as when the session closes under a local probe. */
  private wentAway(watch: HolderWatch, host_id: string, probe: string, why: string): ProbeFailure {
    this.logger.info({ host_id, probe, target_server: watch.target, why }, 'forwarded probe: the server holding the session went away (-32603)');
    return new ProbeFailure(
      503,
      new InternalError(
        { reason: `the server holding the host's session (${watch.target}) went away before the probe was answered: ${why}; try again once the host's agent has reconnected (to another server)` },
        'InternalError',
      ),
    );
  }

  /**
   * take() called from a notification or the poll, where nobody awaits it: whatever it throws
   * is logged (as the poll's own read failures), never an unhandled rejection, which would end
   * the server's process.
   */
  private takeSafely(request_id: string): void {
    this.take(request_id).catch((error: unknown) => {
      this.outage.report('forwarded probes', error, (say) => this.logger.warn({ request_id, err: String(error), ...say }, 'forwarded probe: could not claim it; the poll tries again'));
    });
  }

  /** Target side: claim a pending request addressed here, run it, store the answer. */
  private async take(request_id: string): Promise<void> {
    if (this.stopped) return;
    const db = this.storage.db;
    const claimed = await db
      .updateTable('probe_requests')
      .set({ state: 'taken' })
      .where('request_id', '=', request_id)
      .where('target_server', '=', this.registry.serverId)
      .where('state', '=', 'pending')
      .returning(['origin_server', 'host_id', 'probe', 'args_json', 'timeout_ms'])
      .executeTakeFirst(); // a failure is takeSafely's to log; the request stays pending for the poll
    if (claimed === undefined) return;
    const job = (async () => {
      let status = 200;
      let answer: { result?: ProbeOutput; error?: RpcErrorObject };
      try {
        answer = { result: await this.router.invokeLocal(claimed.host_id, claimed.probe, JSON.parse(claimed.args_json) as unknown, Number(claimed.timeout_ms)) };
      } catch (error) {
        if (error instanceof ProbeFailure) {
          status = error.status;
          answer = { error: error.rpc.toJSON() as RpcErrorObject };
        } else {
          status = 503;
          answer = { error: { code: -32603, message: 'InternalError', data: { reason: String((error as Error)?.message ?? error) } } };
        }
      }
      await db.updateTable('probe_requests').set({ state: 'done', http_status: status, answer_json: JSON.stringify(answer) }).where('request_id', '=', request_id).execute();
      await this.storage.notifyBus?.().notify(CHANNEL, JSON.stringify({ t: 'ans', id: request_id, origin: claimed.origin_server } satisfies Notice));
    })().catch((error: unknown) => this.logger.warn({ request_id, err: String(error) }, 'forwarded probe: could not store the answer'));
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
  }
}
