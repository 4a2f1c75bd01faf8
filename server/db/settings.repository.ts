// `server_settings`: a key/value table (JSON values). `serve` records its effective
// settings here (at least max_batch_entries) so admin commands on the same database can
// check against them.
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database>;

/** The parsed value of a setting, or undefined when it was never set. */
export async function getSetting(db: Db, key: string): Promise<unknown> {
  const row = await db
    .selectFrom('server_settings')
    .select('value_json')
    .where('key', '=', key)
    .executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.value_json) as unknown);
}

/** Every setting, parsed. */
export async function getSettings(db: Db): Promise<Record<string, unknown>> {
  const rows = await db.selectFrom('server_settings').select(['key', 'value_json']).execute();
  const out: Record<string, unknown> = {};
  for (const r of rows) out[r.key] = JSON.parse(r.value_json) as unknown;
  return out;
}

/** Stores one setting (any JSON-serializable value). */
export async function setSetting(db: Db, key: string, value: unknown): Promise<void> {
  await setSettings(db, { [key]: value });
}

/** Stores several settings in one statement (upsert). Undefined values are skipped. */
export async function setSettings(
  db: Db,
  values: Readonly<Record<string, unknown>>,
  options: { now?: string } = {},
): Promise<void> {
  const updated_at = options.now ?? new Date().toISOString();
  const rows = Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([key, v]) => ({ key, value_json: JSON.stringify(v), updated_at }));
  if (rows.length === 0) return;
  await db
    .insertInto('server_settings')
    .values(rows)
    .onConflict((oc) =>
      oc.column('key').doUpdateSet((eb) => ({
        value_json: eb.ref('excluded.value_json'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}
