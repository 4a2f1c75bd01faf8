// kysely queries compiled once and run many times with new values (DECISIONS P7): building a
// query (its immutable operation-node tree) and compiling it to SQL cost more than SQLite
// takes to run a hello's SELECT or UPDATE. `runCached` builds the query once per shape with
// placeholder strings in the place of each value, compiles it with the dialect at hand, and
// remembers which parameter is which value; later calls only fill the parameter array.
//
// A shape is the caller's key plus which values are NULL (a NULL value is built as NULL, so a
// query that compiles differently for one — `IS NULL`, a dropped clause — gets a plan of its
// own). Plans are kept per dialect adapter (a transaction shares its database's), so SQLite
// and PostgreSQL each get their own SQL. With a kysely plugin installed the query is built and
// compiled as usual (a plugin may rewrite a query per call or keep state per query id).
import { createQueryId, type Compilable, type CompiledQuery, type Kysely, type QueryResult } from 'kysely';

/** The values of a query, by name. */
export type QueryValues = Readonly<Record<string, string | null>>;

interface Plan {
  readonly compiled: CompiledQuery;
  /** Per parameter of `compiled`: the name of the value it takes, or undefined (a constant of the query). */
  readonly names: readonly (string | undefined)[];
}

const PREFIX = '\u0000cortex-value:';
const SUFFIX = '\u0000';

const plans = new WeakMap<object, Map<string, Plan>>();

function placeholders(values: QueryValues): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const name of Object.keys(values)) out[name] = values[name] === null ? null : `${PREFIX}${name}${SUFFIX}`;
  return out;
}

function plan(query: Compilable<unknown>, values: QueryValues): Plan {
  const compiled = query.compile();
  const seen = new Set<string>();
  const names = compiled.parameters.map((p) => {
    if (typeof p !== 'string' || !p.toLowerCase().includes(PREFIX)) return undefined;
    const name = p.slice(PREFIX.length, -SUFFIX.length);
    if (!p.startsWith(PREFIX) || !(name in values) || p !== `${PREFIX}${name}${SUFFIX}`) throw new Error(`cached query: a value was changed on its way into the SQL (${JSON.stringify(p)})`);
    seen.add(name);
    return name;
  });
  if (compiled.sql.toLowerCase().includes(PREFIX)) throw new Error('cached query: a value was inlined into the SQL text');
  for (const name of Object.keys(values)) {
    if (values[name] !== null && !seen.has(name)) throw new Error(`cached query: value ${JSON.stringify(name)} is not a parameter of the query`);
  }
  return { compiled, names };
}

/**
 * Runs the query `build(db, v)` makes for the values `v`, compiling it only the first time
 * for this `key`, dialect and pattern of NULLs. `build` must use each value as a bound value
 * only (not in identifiers, not transformed: a value that comes out of the compiler changed
 * throws), and must build the same query for every call with the same key.
 */
export async function runCached<DB, V extends QueryValues, R>(db: Kysely<DB>, key: string, values: V, build: (db: Kysely<DB>, v: V) => Compilable<R>): Promise<QueryResult<R>> {
  const executor = db.getExecutor();
  if (executor.plugins.length > 0) return db.executeQuery(build(db, values));
  let byKey = plans.get(executor.adapter);
  if (byKey === undefined) plans.set(executor.adapter, (byKey = new Map()));
  let shape = key;
  for (const name of Object.keys(values)) if (values[name] === null) shape += `|${name}=null`;
  let p = byKey.get(shape);
  if (p === undefined) {
    p = plan(build(db, placeholders(values) as V), values);
    byKey.set(shape, p);
  }
  const names = p.names;
  const parameters = p.compiled.parameters.map((v, i) => {
    const name = names[i];
    return name === undefined ? v : values[name];
  });
  const compiled: CompiledQuery<R> = { query: p.compiled.query, queryId: createQueryId(), sql: p.compiled.sql, parameters };
  return db.executeQuery(compiled);
}
