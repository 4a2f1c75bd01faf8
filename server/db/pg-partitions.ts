// PostgreSQL only: `logs` is partitioned by day of received_at (DECISIONS G6).
//
// One partition per UTC day, logs_pYYYYMMDD, FOR VALUES FROM ('YYYY-MM-DD') TO (next day)
// on received_at (text, COLLATE "C", so the ISO strings compare byte by byte). Each
// partition has its own UNIQUE (host_id, seq): a safety net within a day. Idempotency
// across partitions is the ingest statement's: it reads accepted_seq FOR UPDATE and
// inserts only seq > accepted_seq, so commits of one host are serialized by the agents
// row lock and a replay (even received on a later day) stores nothing.
//
// There is no DEFAULT partition (DETACH ... CONCURRENTLY refuses to run with one), so
// partitions are created ahead (yesterday .. today + AHEAD_DAYS) at start, on every
// retention pass, and by the ingest path itself if a row finds none. Retention detaches
// whole expired days CONCURRENTLY (a SHARE UPDATE EXCLUSIVE lock: inserts go on) and
// drops them, instead of a long DELETE.
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export const AHEAD_DAYS = 3;

const DAY_MS = 86_400_000;

export function dayOf(iso: string | Date): string {
  return (typeof iso === 'string' ? iso : iso.toISOString()).slice(0, 10);
}

function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS).toISOString().slice(0, 10);
}

export function partitionName(day: string): string {
  return `logs_p${day.replace(/-/g, '')}`;
}

/** Whether `name` is a partition of logs now (a pending detach counts: it is still one). */
async function isAttached(db: Kysely<Database>, name: string): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`
    select exists (select 1 from pg_inherits where inhrelid = to_regclass(${name}) and inhparent = 'logs'::regclass) as ok`.execute(db);
  return r.rows[0]?.ok === true;
}

/**
 * Adds the day's partition (with its unique index) unless logs has it. Returns true if added.
 *
 * Made as a table of its own, then attached (DECISIONS G34): `CREATE TABLE … PARTITION OF`
 * takes an ACCESS EXCLUSIVE lock on logs, which waits behind any reader of logs (a pg_dump, a
 * report in an open transaction) and, while it waits, holds up every insert queued behind it:
 * ingest stopped for as long as the nightly dump ran. `ATTACH PARTITION` takes SHARE UPDATE
 * EXCLUSIVE on logs, which neither inserts nor readers conflict with; the partition's own
 * indexes are built before, on an empty table nobody else uses.
 */
export async function ensureDayPartition(db: Kysely<Database>, day: string): Promise<boolean> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
  const name = partitionName(day);
  for (let attempt = 1; ; attempt++) {
    if (await isAttached(db, name)) return false;
    try {
      // `if not exists`: a table left by an attempt that stopped before its attach is taken as it is (empty: nothing writes to a table outside logs)
      await sql.raw(`create table if not exists ${name} (like logs)`).execute(db);
      await sql.raw(`create unique index if not exists ${name}_host_id_seq on ${name} (host_id, seq)`).execute(db);
      await sql.raw(`alter table logs attach partition ${name} for values from ('${day}') to ('${nextDay(day)}')`).execute(db);
      return true;
    } catch (error) {
      // Another server added it at the same moment (a name already taken, "already a partition"): look again.
      if (attempt >= 3) {
        if (await isAttached(db, name)) return false;
        throw error;
      }
    }
  }
}

/** Partitions for yesterday .. today + AHEAD_DAYS. */
export async function ensurePartitionsAround(db: Kysely<Database>, now: Date): Promise<string[]> {
  const created: string[] = [];
  for (let d = -1; d <= AHEAD_DAYS; d++) {
    const day = dayOf(new Date(now.getTime() + d * DAY_MS));
    if (await ensureDayPartition(db, day)) created.push(partitionName(day));
  }
  return created;
}

/** The day partitions of logs, oldest first; `pending`: a detach of it was started and not finished. */
export async function listDayPartitions(db: Kysely<Database>): Promise<{ name: string; day: string; pending: boolean }[]> {
  const r = await sql<{ name: string; pending: boolean }>`
    select c.relname as name, i.inhdetachpending as pending from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'logs'::regclass order by c.relname`.execute(db);
  return r.rows
    .map((x) => ({ name: x.name, pending: x.pending === true, m: /^logs_p(\d{4})(\d{2})(\d{2})$/.exec(x.name) }))
    .filter((x) => x.m !== null)
    .map((x) => ({ name: x.name, pending: x.pending, day: `${x.m![1]}-${x.m![2]}-${x.m![3]}` }));
}

/**
 * Day tables of this schema that are not partitions of logs: what a pass stopped between its
 * detach and its drop left (their rows no longer in logs, their disk never given back).
 */
async function listDetachedDays(db: Kysely<Database>): Promise<{ name: string; day: string }[]> {
  const r = await sql<{ name: string }>`
    select c.relname as name from pg_class c
    where c.relnamespace = (select oid from pg_namespace where nspname = current_schema()) and c.relkind = 'r' and c.relname ~ '^logs_p[0-9]{8}$'
      and not exists (select 1 from pg_inherits i where i.inhrelid = c.oid)
    order by c.relname`.execute(db);
  return r.rows.map((x) => ({ name: x.name, day: `${x.name.slice(6, 10)}-${x.name.slice(10, 12)}-${x.name.slice(12, 14)}` }));
}

/** Partitions up to this many rows are counted exactly; larger ones from the statistics. */
const EXACT_COUNT_MAX = 50_000;

/**
 * Rows of a partition about to be dropped, for the retention metrics. A count(*) of a
 * day of logs is a scan that competes with the ingest path for CPU, so a large
 * partition's rows come from the cumulative statistics (inserts minus deletes: exact for
 * a partition only ever inserted into, unless the statistics were reset).
 */
async function rowsOf(db: Kysely<Database>, name: string): Promise<number> {
  const stat = await sql<{ ins: number | null; del: number | null }>`
    select n_tup_ins::float8 as ins, n_tup_del::float8 as del from pg_stat_user_tables where relid = to_regclass(${name})`.execute(db);
  const s = stat.rows[0];
  const estimate = s?.ins == null ? null : Number(s.ins) - Number(s.del ?? 0);
  if (estimate !== null && estimate > EXACT_COUNT_MAX) return estimate;
  const n = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)}`.execute(db);
  return Number(n.rows[0]?.n ?? 0);
}

/**
 * Detaches (CONCURRENTLY) and drops every partition whose whole day lies before
 * `cutoff` (an ISO time). Returns what went, with the rows each held.
 */
export async function dropPartitionsBefore(db: Kysely<Database>, cutoff: string): Promise<{ name: string; rows: number }[]> {
  const dropped: { name: string; rows: number }[] = [];
  const expired = (day: string) => nextDay(day) <= cutoff;
  for (const p of await listDetachedDays(db)) {
    if (!expired(p.day)) continue; // a newer one may be another server's, between its create and its attach
    const rows = await rowsOf(db, p.name);
    await sql.raw(`drop table if exists ${p.name}`).execute(db);
    dropped.push({ name: p.name, rows });
  }
  for (const p of await listDayPartitions(db)) {
    if (!expired(p.day)) continue;
    const rows = await rowsOf(db, p.name);
    try {
      // A detach started by a pass that stopped halfway (the server killed, its connection
      // cut while the detach waited for older transactions) left the partition "pending
      // detach"; a new CONCURRENTLY is refused for it, FINALIZE completes it.
      await sql.raw(`alter table logs detach partition ${p.name} ${p.pending ? 'finalize' : 'concurrently'}`).execute(db);
      await sql.raw(`drop table ${p.name}`).execute(db);
    } catch (error) {
      // Dropped meanwhile by another process (an older server without the retention lock,
      // or an admin): nothing left to do for this day.
      const still = await sql<{ r: string | null }>`select to_regclass(${p.name}) as r`.execute(db);
      if (still.rows[0]?.r == null) continue;
      throw error;
    }
    dropped.push({ name: p.name, rows });
  }
  return dropped;
}
