// Stored logs (query, newest first, cursor paging), the live tail (Server-Sent Events,
// resumable with Last-Event-ID) and metric samples of one host.
//
// The tail polls the database (seq > last sent) rather than listening to this process's
// ingest path, so it shows a host's rows whichever server on the database holds its session.
import type { Severity } from '@cortex/agent-protocol';
import { getAgent } from '../db/agents.repository.js';
import { authorize } from './access.js';
import type { Route, RouteContext } from './context.js';
import { ApiError, hostIdParam, invalid, send, sendError, seqFromText, unknownHost } from './http.js';
import { SEVERITIES, logMatches, metricNames, queryLogs, queryMetrics } from './queries.js';
import { since, tail } from '../db/logs.repository.js';
import { isSessionEnded } from '../db/sessions.repository.js';

/** Live tail: database poll interval and rows per poll. */
const TAIL_POLL_MS = 200;
const TAIL_BATCH = 1000;
/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
/**
 * A client that has not taken what was written for this long is let go (DECISIONS J10): the
 * tail writes nothing more until the client drained what it has, so one that stopped reading
 * (a suspended laptop, a stuck proxy) would otherwise hold its socket and buffers for good.
 */
const TAIL_STALL_MS = 60_000;
/** How often a tail opened with a console session looks whether it was signed out (DECISIONS J14). */
const SESSION_RECHECK_MS = 1000;
/**
 * Live tails one server streams at once (DECISIONS H43). Each polls the database every
 * TAIL_POLL_MS on the connections the ingest path uses: 500 tails (a script in a loop, a wall of
 * browser tabs) put ack p50 at 605 ms and the server at 641 MB. One more is 503 with Retry-After.
 */
export const MAX_LIVE_TAILS = 64;
/** Live tails streaming now, per server (its storage). */
const liveTails = new WeakMap<object, number>();

async function knownHost(ctx: RouteContext): Promise<string> {
  const id = hostIdParam(ctx.params['host_id'] as string);
  if ((await getAgent(ctx.deps.storage.db, id)) === undefined) throw unknownHost(id);
  return id;
}

function filters(ctx: RouteContext): { severity?: Severity; source?: string; q?: string } {
  const severity = ctx.query.oneOf('severity', SEVERITIES);
  const source = ctx.query.string('source', 1024);
  const q = ctx.query.string('q', 200);
  return { ...(severity !== undefined ? { severity } : {}), ...(source !== undefined ? { source } : {}), ...(q !== undefined ? { q } : {}) };
}

/** Where a tail starts: Last-Event-ID (what an EventSource resends), else after_seq; undefined: the backlog. */
function resumePoint(ctx: RouteContext): number | undefined {
  const header = ctx.req.headers['last-event-id'];
  if (typeof header === 'string' && header.trim() !== '') {
    const seq = seqFromText(header.trim());
    if (seq === undefined) throw invalid(`Last-Event-ID must be a seq (digits, at most ${Number.MAX_SAFE_INTEGER}), got ${JSON.stringify(header.slice(0, 40))}`);
    return seq;
  }
  return ctx.query.int('after_seq', 0, Number.MAX_SAFE_INTEGER);
}

/**
 * Whether the credential the stream was opened with still holds. Access is otherwise checked
 * once per request, and a tail is a request that lasts: after SIGHUP changed the admin token
 * (or a console session expired) it went on streaming to the old credential, though the
 * docs say the previous token is refused from then on and its console sessions end.
 */
async function stillAuthorized(ctx: RouteContext, sessionCheck: { at: number }): Promise<boolean> {
  // no live token to compare with: a test's deps
  if (ctx.deps.currentAdminToken !== undefined && !authorize(ctx.req, { ...ctx.deps, adminToken: ctx.deps.currentAdminToken() }, false).ok) return false;
  // A console session signed out (DECISIONS J14) on any server: looked up once a second, not on every poll.
  if (ctx.session === undefined || Date.now() - sessionCheck.at < SESSION_RECHECK_MS) return true;
  sessionCheck.at = Date.now();
  return !(await isSessionEnded(ctx.deps.storage.db, ctx.session.nonce));
}

async function streamTail(ctx: RouteContext): Promise<void> {
  const id = await knownHost(ctx);
  const filter = filters(ctx);
  const after = resumePoint(ctx);
  const backlog = ctx.query.int('backlog', 0, 1000) ?? 50;
  const { req, res } = ctx;
  const head = {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  };
  if (req.method === 'HEAD') {
    res.writeHead(200, head).end(); // what GET would answer, without the stream
    return;
  }
  const storage = ctx.deps.storage;
  const max = ctx.deps.maxLiveTails ?? MAX_LIVE_TAILS;
  const open = liveTails.get(storage) ?? 0;
  if (open >= max) {
    ctx.deps.logger?.warn({ host_id: id, live_tails: open }, 'live tail refused: this server streams as many as it allows');
    sendError(
      res,
      new ApiError(503, 503, `this server already streams ${max} live tails, as many as it allows (each polls the database); close one (a browser tab, an agent tail --follow), or read with agent tail -n N without --follow`),
      { 'Retry-After': '10' },
    );
    return;
  }
  liveTails.set(storage, open + 1);
  res.writeHead(200, head);
  res.write(`retry: 1000\n\n`);
  try {
    await streamRows(ctx, id, filter, after, backlog);
  } catch (error) {
    // The headers are out: no error answer is possible any more. Cut the stream (an EventSource
    // comes back with Last-Event-ID); before, the loop died and left the client waiting forever
    // on an open, silent stream. httpHandler logs the error (or counts a database outage).
    ctx.deps.logger?.info({ host_id: id }, 'live tail cut by an error (the client resumes with Last-Event-ID)');
    res.destroy();
    throw error;
  } finally {
    liveTails.set(storage, (liveTails.get(storage) ?? 1) - 1);
  }
}

async function streamRows(ctx: RouteContext, id: string, filter: ReturnType<typeof filters>, after: number | undefined, backlog: number): Promise<void> {
  const { req, res } = ctx;
  const db = ctx.deps.storage.db;
  const pollMs = ctx.deps.tailPollMs ?? TAIL_POLL_MS;
  const stallMs = ctx.deps.tailStallMs ?? TAIL_STALL_MS;
  let closed = false;
  let wake: (() => void) | undefined;
  const onClose = (): void => {
    closed = true;
    wake?.();
  };
  req.once('close', onClose);
  res.once('close', onClose);
  /** Waits `ms`, or less when the client goes away or the socket drains. */
  const pause = (ms: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done(): void {
        clearTimeout(t);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  let last = after ?? 0;
  if (after === undefined) {
    const rows = await tail(db, id, backlog);
    // Start after the newest row even when the backlog shows none of them.
    const newest = await tail(db, id, 1);
    last = newest[0]?.seq ?? 0;
    const text = rows.filter((r) => logMatches(r, filter)).map((r) => `id: ${r.seq}\nevent: log\ndata: ${JSON.stringify(r)}\n\n`).join('');
    if (text !== '') res.write(text);
  }
  let lastWrite = Date.now();
  const sessionCheck = { at: Date.now() }; // the request's own check just looked
  while (!closed) {
    if (res.writableNeedDrain) {
      // Nothing more until the client took what it has (before: more rows after every 15 s
      // without a drain, so a client that stopped reading grew the server's memory).
      const waiting = pause(stallMs);
      const onDrain = (): void => wake?.();
      res.once('drain', onDrain);
      await waiting;
      res.off('drain', onDrain);
      if (closed) break;
      if (res.writableNeedDrain) {
        ctx.deps.logger?.info({ host_id: id, last_event_id: last, stalled_ms: stallMs }, 'live tail closed: its client took nothing for too long (it resumes with Last-Event-ID)');
        res.destroy();
        break;
      }
    }
    if (!(await stillAuthorized(ctx, sessionCheck))) {
      ctx.deps.logger?.info({ host_id: id, last_event_id: last }, 'live tail closed: the admin token it was opened with was changed, or its console session ended');
      break;
    }
    const rows = await since(db, id, last, TAIL_BATCH);
    if (closed) break;
    if (rows.length > 0) {
      last = rows[rows.length - 1]!.seq;
      const text = rows.filter((r) => logMatches(r, filter)).map((r) => `id: ${r.seq}\nevent: log\ndata: ${JSON.stringify(r)}\n\n`).join('');
      // Rows filtered out still move the resume point: send it as a bare id.
      res.write(text !== '' ? text : `id: ${last}\n\n`);
      lastWrite = Date.now();
      if (rows.length === TAIL_BATCH) continue; // more waiting: no pause (the loop's top waits for a drain)
    } else if (Date.now() - lastWrite >= KEEPALIVE_MS) {
      res.write(`: keepalive\n\n`);
      lastWrite = Date.now();
    }
    if (!closed) await pause(pollMs);
  }
  if (!res.writableEnded) res.end();
}

export const logRoutes: Route[] = [
  {
    method: 'GET',
    path: '/admin/agents/{host_id}/logs',
    async handler(ctx) {
      const id = await knownHost(ctx);
      const text = ctx.query.string('cursor', 64);
      const cursor = text === undefined ? undefined : seqFromText(text);
      if (text !== undefined && cursor === undefined) throw invalid('cursor must be the next_cursor of a previous page');
      const from = ctx.query.time('from');
      const to = ctx.query.time('to');
      if (from !== undefined && to !== undefined && from >= to) throw invalid(`from (${from}) must be before to (${to})`);
      const page = await queryLogs(ctx.deps.storage.db, id, {
        ...filters(ctx),
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...(cursor !== undefined ? { beforeSeq: cursor } : {}),
        limit: ctx.query.int('limit', 1, 1000) ?? 100,
      });
      send(ctx.res, 200, page);
    },
  },
  { method: 'GET', path: '/admin/agents/{host_id}/logs/stream', handler: streamTail },
  {
    method: 'GET',
    path: '/admin/agents/{host_id}/metrics',
    async handler(ctx) {
      const id = await knownHost(ctx);
      const name = ctx.query.string('name', 256);
      const db = ctx.deps.storage.db;
      if (name === undefined) {
        send(ctx.res, 200, { host_id: id, names: await metricNames(db, id) });
        return;
      }
      const to = ctx.query.time('to') ?? new Date().toISOString();
      const from = ctx.query.time('from') ?? new Date(Date.parse(to) - 3600_000).toISOString();
      if (from >= to) throw invalid(`from (${from}) must be before to (${to})`);
      const limit = ctx.query.int('limit', 1, 10_000) ?? 2000;
      const { samples, truncated } = await queryMetrics(db, id, name, from, to, limit);
      send(ctx.res, 200, { host_id: id, name, from, to, samples, truncated });
    },
  },
];
