// Read queries of the admin API (filters, sort, paging) over agents, logs and metrics.
// kysely query builder only, so they run on SQLite and PostgreSQL alike; text search is
// lower(column) LIKE lower(pattern) with an explicit ESCAPE (LIKE's case rules differ).
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { Severity } from '@cortex/agent-protocol';
import defs from '@cortex/agent-protocol/schemas/defs.json' with { type: 'json' };
import type { AgentSummary } from '../db/agents.repository.js';
import { LOG_COLUMNS, toLogView, type LogView } from '../db/logs.repository.js';
import type { ConnectionState, Database } from '../db/schema.js';
import { CONNECTION_STATES } from '../db/schema.js';

type Db = Kysely<Database>;

/** Syslog severities, most severe first (the contract's Severity enum order). */
export const SEVERITIES: readonly Severity[] = defs.$defs.Severity.enum as Severity[];

/** `severity` and every more severe one. */
export function atLeast(severity: Severity): Severity[] {
  return SEVERITIES.slice(0, SEVERITIES.indexOf(severity) + 1);
}

function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function contains(column: 'hostname' | 'host_id' | 'message', text: string): Expression<SqlBool> {
  return sql<SqlBool>`lower(${sql.ref(column)}) like ${likePattern(text)} escape '\\'`;
}

export const AGENT_SORT_KEYS = ['hostname', 'host_id', 'connection_state', 'last_seen', 'agent_version', 'accepted_seq', 'created_at'] as const;
export type AgentSortKey = (typeof AGENT_SORT_KEYS)[number];

export interface AgentQuery {
  states?: ConnectionState[];
  q?: string;
  sort?: AgentSortKey;
  order?: 'asc' | 'desc';
  limit?: number;
  offset?: number;
}

const NULLABLE_SORT: ReadonlySet<AgentSortKey> = new Set(['last_seen', 'agent_version']);

function filteredAgents(db: Db, query: AgentQuery) {
  let qb = db.selectFrom('agents');
  if (query.states !== undefined && query.states.length > 0) qb = qb.where('connection_state', 'in', query.states);
  const text = query.q;
  if (text !== undefined && text !== '') qb = qb.where((eb) => eb.or([contains('hostname', text), contains('host_id', text)]));
  return qb;
}

/** Agents matching the filter, sorted, one page; and how many match in all. */
export async function queryAgents(db: Db, columns: readonly (keyof AgentSummary)[], query: AgentQuery): Promise<{ rows: AgentSummary[]; total: number }> {
  const sort = query.sort ?? 'hostname';
  const dir = query.order ?? 'asc';
  // NULLs sort first on SQLite and last on PostgreSQL: compare as '' on both.
  let qb = filteredAgents(db, query)
    .select(columns)
    .orderBy(NULLABLE_SORT.has(sort) ? sql`coalesce(${sql.ref(sort)}, '')` : sql.ref(sort), dir)
    .orderBy('host_id', dir);
  if (query.limit !== undefined) qb = qb.limit(query.limit).offset(query.offset ?? 0);
  else if ((query.offset ?? 0) > 0) qb = qb.limit(Number.MAX_SAFE_INTEGER).offset(query.offset ?? 0);
  const [rows, count] = await Promise.all([
    qb.execute() as Promise<AgentSummary[]>,
    filteredAgents(db, query).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** Number of agents per connection state (every state present). */
export async function countByState(db: Db): Promise<Record<ConnectionState, number>> {
  const rows = await db
    .selectFrom('agents')
    .select(['connection_state', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('connection_state')
    .execute();
  const out = Object.fromEntries(CONNECTION_STATES.map((s) => [s, 0])) as Record<ConnectionState, number>;
  for (const r of rows) out[r.connection_state] = Number(r.n);
  return out;
}

export interface LogQuery {
  from?: string;
  to?: string;
  severity?: Severity;
  source?: string;
  q?: string;
  /** Rows with seq below this (the cursor). */
  beforeSeq?: number;
  limit: number;
}

/** Rows of a host matching the query, newest (highest seq) first; next_cursor when more remain. */
export async function queryLogs(db: Db, host_id: string, query: LogQuery): Promise<{ items: LogView[]; next_cursor: string | null }> {
  let qb = db.selectFrom('logs').select(LOG_COLUMNS).where('host_id', '=', host_id);
  if (query.from !== undefined) qb = qb.where('ts', '>=', query.from);
  if (query.to !== undefined) qb = qb.where('ts', '<', query.to);
  if (query.severity !== undefined) qb = qb.where('severity', 'in', atLeast(query.severity));
  if (query.source !== undefined) qb = qb.where('source', '=', query.source);
  const text = query.q;
  if (text !== undefined && text !== '') qb = qb.where(contains('message', text));
  if (query.beforeSeq !== undefined) qb = qb.where('seq', '<', query.beforeSeq);
  const rows = await qb.orderBy('seq', 'desc').limit(query.limit + 1).execute();
  const more = rows.length > query.limit;
  const items = rows.slice(0, query.limit).map(toLogView);
  const last = items[items.length - 1];
  return { items, next_cursor: more && last !== undefined ? String(last.seq) : null };
}

/** Whether a row passes the live tail's filters (same meaning as in queryLogs). */
export function logMatches(row: LogView, filter: { severity?: Severity; source?: string; q?: string }): boolean {
  if (filter.severity !== undefined && SEVERITIES.indexOf(row.severity as Severity) > SEVERITIES.indexOf(filter.severity)) return false;
  if (filter.source !== undefined && row.source !== filter.source) return false;
  if (filter.q !== undefined && filter.q !== '' && !row.message.toLowerCase().includes(filter.q.toLowerCase())) return false;
  return true;
}

export interface MetricSample {
  ts: string;
  value: number;
  labels: unknown;
}

/** Samples of one metric of a host in [from, to), oldest first; the newest `limit` when more match. */
export async function queryMetrics(db: Db, host_id: string, name: string, from: string, to: string, limit: number): Promise<{ samples: MetricSample[]; truncated: boolean }> {
  const rows = await db
    .selectFrom('metrics')
    .select(['ts', 'value', 'labels_json'])
    .where('host_id', '=', host_id)
    .where('name', '=', name)
    .where('ts', '>=', from)
    .where('ts', '<', to)
    .orderBy('ts', 'desc')
    .limit(limit + 1)
    .execute();
  const truncated = rows.length > limit;
  return {
    truncated,
    samples: rows
      .slice(0, limit)
      .reverse()
      .map((r) => ({ ts: r.ts, value: Number(r.value), labels: r.labels_json === null ? null : (JSON.parse(r.labels_json) as unknown) })),
  };
}

/** The metric names a host has samples for, sorted. */
export async function metricNames(db: Db, host_id: string): Promise<string[]> {
  const rows = await db.selectFrom('metrics').select('name').distinct().where('host_id', '=', host_id).orderBy('name').execute();
  return rows.map((r) => r.name);
}
