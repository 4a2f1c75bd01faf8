// Reading the `logs` table (`agent tail`, `--follow`). Writes go through the IngestWriter.
import type { Kysely } from 'kysely';
import { normalizeHostId } from './agents.repository.js';
import type { Database, LogRow } from './schema.js';

/** A log row as shown to admins: the `logs` columns, metadata_json parsed as `metadata`. */
export type LogView = Omit<LogRow, 'metadata_json'> & { metadata: unknown };

export const LOG_COLUMNS = [
  'host_id',
  'seq',
  'ts',
  'received_at',
  'severity',
  'facility',
  'app_name',
  'process_id',
  'message',
  'source',
  'metadata_json',
] as const satisfies readonly (keyof LogRow)[];

export function toLogView(row: LogRow): LogView {
  const { metadata_json, ...rest } = row;
  return { ...rest, seq: Number(rest.seq), metadata: parseMetadata(metadata_json) };
}

function parseMetadata(json: string | null): unknown {
  if (json === null) return null;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return json; // not written by the ingest path; show it as it is
  }
}

/** The last `n` rows of a host (by seq), oldest first. */
export async function tail(db: Kysely<Database>, host_id: string, n: number): Promise<LogView[]> {
  if (n <= 0) return [];
  const rows = await db
    .selectFrom('logs')
    .select(LOG_COLUMNS)
    .where('host_id', '=', normalizeHostId(host_id))
    .orderBy('seq', 'desc')
    .limit(Math.floor(n))
    .execute();
  return rows.reverse().map(toLogView);
}

/** Rows of a host with seq > after_seq, oldest first, at most `limit` (for --follow). */
export async function since(
  db: Kysely<Database>,
  host_id: string,
  after_seq: number,
  limit = 1000,
): Promise<LogView[]> {
  const rows = await db
    .selectFrom('logs')
    .select(LOG_COLUMNS)
    .where('host_id', '=', normalizeHostId(host_id))
    .where('seq', '>', after_seq)
    .orderBy('seq', 'asc')
    .limit(Math.max(1, Math.floor(limit)))
    .execute();
  return rows.map(toLogView);
}
