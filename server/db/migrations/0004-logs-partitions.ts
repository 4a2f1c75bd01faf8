// PostgreSQL: `logs` becomes a table partitioned by day of received_at (see
// ../pg-partitions.ts and DECISIONS G6). The global UNIQUE (host_id, seq) cannot stay (a
// unique index of a partitioned table must contain the partition key); each day's
// partition keeps UNIQUE (host_id, seq), and the ingest statement's accepted_seq check
// under the agents row lock keeps each seq stored once across days. Existing rows are
// moved into their days' partitions. SQLite: nothing changes.
import { sql, type Kysely, type Migration } from 'kysely';
import { dayOf, ensureDayPartition, ensurePartitionsAround } from '../pg-partitions.js';
import { isPostgres } from './dialect-of.js';

export const logsPartitions: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (!isPostgres(db)) return;
    await sql`alter table logs rename to logs_unpartitioned`.execute(db);
    await sql`alter index logs_host_id_ts_idx rename to logs_unpartitioned_host_id_ts_idx`.execute(db);
    await sql`alter index logs_received_at_idx rename to logs_unpartitioned_received_at_idx`.execute(db);
    await sql`alter table logs_unpartitioned rename constraint logs_host_id_seq_unique to logs_unpartitioned_host_id_seq_unique`.execute(db);
    await sql`
      create table logs (
        host_id text not null,
        seq bigint not null,
        ts text not null,
        received_at text collate "C" not null,
        severity text not null,
        facility text,
        app_name text,
        process_id text,
        message text not null,
        source text not null,
        metadata_json text
      ) partition by range (received_at)`.execute(db);
    await sql`create index logs_host_id_ts_idx on logs (host_id, ts)`.execute(db);
    await sql`create index logs_received_at_idx on logs (received_at)`.execute(db);
    await ensurePartitionsAround(db, new Date());
    const days = await sql<{ d: string }>`select distinct substr(received_at, 1, 10) as d from logs_unpartitioned`.execute(db);
    for (const r of days.rows) {
      if (/^\d{4}-\d{2}-\d{2}$/.test(r.d)) await ensureDayPartition(db, dayOf(r.d));
    }
    await sql`insert into logs select * from logs_unpartitioned`.execute(db);
    await sql`drop table logs_unpartitioned`.execute(db);
  },

  async down(db: Kysely<any>): Promise<void> {
    if (!isPostgres(db)) return;
    await sql`alter table logs rename to logs_partitioned`.execute(db);
    await sql`alter index logs_host_id_ts_idx rename to logs_partitioned_host_id_ts_idx`.execute(db);
    await sql`alter index logs_received_at_idx rename to logs_partitioned_received_at_idx`.execute(db);
    await sql`create table logs (like logs_partitioned)`.execute(db);
    await sql`alter table logs add constraint logs_host_id_seq_unique unique (host_id, seq)`.execute(db);
    await sql`insert into logs select * from logs_partitioned on conflict do nothing`.execute(db);
    await sql`drop table logs_partitioned`.execute(db);
    await sql`create index logs_host_id_ts_idx on logs (host_id, ts)`.execute(db);
    await sql`create index logs_received_at_idx on logs (received_at)`.execute(db);
  },
};
