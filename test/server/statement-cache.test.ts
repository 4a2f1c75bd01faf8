// The prepared-statement cache handed to kysely: reuse, busy statements, bound.
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { withStatementCache } from '../../server/db/dialect.js';

const open: Database.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
});

function db(): Database.Database {
  const d = new Database(':memory:');
  open.push(d);
  d.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3);');
  return d;
}

it('hands out the same statement for the same SQL', () => {
  const cached = withStatementCache(db());
  const a = cached.prepare('SELECT n FROM t ORDER BY n');
  expect(cached.prepare('SELECT n FROM t ORDER BY n')).toBe(a);
  expect(cached.prepare('SELECT n FROM t WHERE n > ?')).not.toBe(a);
});

it('gives a query of its own while the cached statement is still being iterated', () => {
  const cached = withStatementCache(db());
  const sql = 'SELECT n FROM t ORDER BY n';
  const outer = cached.prepare(sql);
  const seen: number[][] = [];
  for (const row of outer.iterate([]) as IterableIterator<{ n: number }>) {
    const inner = cached.prepare(sql);
    expect(inner).not.toBe(outer);
    seen.push([row.n, (inner.all([]) as { n: number }[]).length]);
  }
  expect(seen).toEqual([[1, 3], [2, 3], [3, 3]]);
  // once the iteration ended, the cached one is handed out again
  expect(cached.prepare(sql)).toBe(outer);
});

it('keeps at most `max` statements, dropping the least recently used', () => {
  const cached = withStatementCache(db(), 2);
  const a = cached.prepare('SELECT 1');
  const b = cached.prepare('SELECT 2');
  expect(cached.prepare('SELECT 1')).toBe(a); // a is now the most recent
  cached.prepare('SELECT 3'); // evicts b
  expect(cached.prepare('SELECT 1')).toBe(a);
  expect(cached.prepare('SELECT 2')).not.toBe(b);
});
