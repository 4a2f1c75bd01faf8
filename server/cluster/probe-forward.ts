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
// Without a notification bus (SQLite), or when a notification is missed (the LISTEN
// connection was down), both sides poll the table every pollMs.
import { randomUUID } from 'node:crypto';
import { errorFromWire, ProbeTimeoutError, type ProbeOutput, type RpcErrorObject } from '@cortex/agent-protocol';
import { DatabaseOutage } from '../db/outage.js';
import type { Storage } from '../db/storage.js';
import type { Logger } from '../log.js';
import { ProbeFailure, type ProbeRouter } from '../control/probes.js';
import type { HeldSession, SessionRegistry } from './registry.js';

/** Extra wait for the two database hops of a forwarded probe (ms). */
export const FORWARD_SLACK_MS = 1000;
const CHANNEL = 'cortex_probe';

type Notice = { t: 'req'; id: string; target: string } | { t: 'ans'; id: string; origin: string };

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
    const deadline = Date.now() + timeout_ms + this.graceMs + FORWARD_SLACK_MS;
    try {
      await this.storage.notifyBus?.().notify(CHANNEL, JSON.stringify({ t: 'req', id: request_id, target } satisfies Notice));
      for (;;) {
        const row = await db.selectFrom('probe_requests').select(['state', 'http_status', 'answer_json']).where('request_id', '=', request_id).executeTakeFirst();
        if (row !== undefined && row.state === 'done' && row.answer_json !== null) {
          const answer = JSON.parse(row.answer_json) as { result?: ProbeOutput; error?: RpcErrorObject };
          if (answer.error !== undefined) throw new ProbeFailure(row.http_status ?? 502, errorFromWire(answer.error));
          return answer.result as ProbeOutput;
        }
        const left = deadline - Date.now();
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
