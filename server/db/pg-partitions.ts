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

/** Creates the day's partition (and its unique index) unless it exists. Returns true if created. */
export async function ensureDayPartition(db: Kysely<Database>, day: string): Promise<boolean> {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`not a day: ${day}`);
  const name = partitionName(day);
  const exists = await sql<{ r: string | null }>`select to_regclass(${name}) as r`.execute(db);
  if (exists.rows[0]?.r != null) return false;
  try {
    await sql.raw(`create table if not exists ${name} partition of logs for values from ('${day}') to ('${nextDay(day)}')`).execute(db);
    await sql.raw(`create unique index if not exists ${name}_host_id_seq on ${name} (host_id, seq)`).execute(db);
  } catch (error) {
    // Another server created it at the same moment.
    const again = await sql<{ r: string | null }>`select to_regclass(${name}) as r`.execute(db);
    if (again.rows[0]?.r != null) return false;
    throw error;
  }
  return true;
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

/** The day partitions of logs, oldest first. */
export async function listDayPartitions(db: Kysely<Database>): Promise<{ name: string; day: string }[]> {
  const r = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'logs'::regclass order by c.relname`.execute(db);
  return r.rows
    .map((x) => ({ name: x.name, m: /^logs_p(\d{4})(\d{2})(\d{2})$/.exec(x.name) }))
    .filter((x) => x.m !== null)
    .map((x) => ({ name: x.name, day: `${x.m![1]}-${x.m![2]}-${x.m![3]}` }));
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
  for (const p of await listDayPartitions(db)) {
    if (!(nextDay(p.day) <= cutoff)) continue;
    const rows = await rowsOf(db, p.name);
    try {
      await sql.raw(`alter table logs detach partition ${p.name} concurrently`).execute(db);
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
