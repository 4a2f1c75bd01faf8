// The control watcher (server/control/control.ts) and a hello that commits while its read is
// in flight: a row read before the new session's activation committed still names the session
// before it, and the new session may be registered by the time the read returns. Closing on
// that read closed the session that had just taken the row (bench ingest --db postgres hung
// waiting for the acks of a session closed 1000 "replaced by a newer session"). The watcher
// reads such a row again before it acts; a session truly replaced is still closed.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlPlane } from '../../server/control/control.js';
import { issueAgent } from '../../server/db/agents.repository.js';
import { openSqliteStorage } from '../../server/db/dialect.js';
import { migrateToLatest } from '../../server/db/migrations/index.js';
import type { Storage } from '../../server/db/storage.js';
import { createLogger } from '../../server/log.js';
import { ServerMetrics } from '../../server/metrics.js';
import { resolveSettings } from '../../server/settings.js';
import type { Connection } from '../../server/ws/connection.js';
import { makeTempDir } from './helpers.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Runs `onFirstRead` once, after the first read that returns the host's row and before the caller sees it. */
class CommitAfterRead implements KyselyPlugin {
  private done = false;
  constructor(
    private readonly host_id: string,
    private readonly onFirstRead: () => void,
  ) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (!this.done && args.result.rows.some((r) => r['host_id'] === this.host_id && 'control_rev' in r)) {
      this.done = true;
      this.onFirstRead();
    }
    return args.result;
  }
}

async function setUp(rowSessionAtRead: string, rowSessionAfter: string) {
  const dir = makeTempDir();
  const path = join(dir, 'cortex.db');
  const storage = openSqliteStorage({ path, writer: 'inline' });
  cleanups.push(async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await migrateToLatest(storage);
  const { host_id } = await issueAgent(storage.db, 'race');
  const other = new Database(path);
  cleanups.push(() => {
    other.close();
  });

  const closed: { code: number; reason: string }[] = [];
  const conn = {
    open: true,
    session_id: 'new-session',
    configVersion: 0,
    control: { decommissioning: false },
    closeWith(code: number, reason: string) {
      closed.push({ code, reason });
      this.open = false;
    },
    sendConfig: () => false,
  };
  const sessions = new Map<string, Connection>([[host_id, conn as unknown as Connection]]);
  // The activation of the new session (or another server's takeover) commits after the
  // watcher's read has been answered.
  const plugin = new CommitAfterRead(host_id, () => {
    other.prepare('UPDATE agents SET session_id = ? WHERE host_id = ?').run(rowSessionAfter, host_id);
  });
  const watched: Storage = { ...storage, db: storage.db.withPlugin(plugin) };
  const metrics = new ServerMetrics({ activeSessions: () => sessions.size, queueDepth: () => 0 }, { defaultMetrics: false });
  const control = new ControlPlane(sessions, watched, resolveSettings(), createLogger({ level: 'silent' }), metrics, { pollMs: 60_000 });
  await control.start();
  cleanups.push(() => control.stop());
  // A change the watcher has not seen yet: the row as the read will find it.
  other.prepare("UPDATE agents SET session_id = ?, connection_state = 'Active', control_rev = control_rev + 1 WHERE host_id = ?").run(rowSessionAtRead, host_id);
  return { control, closed, conn };
}

describe('control watcher: a row read before a hello committed', () => {
  it('does not close the session that just took the row (the row is read again first)', async () => {
    // The read sees the session before; the new one's activation commits right after it.
    const { control, closed, conn } = await setUp('old-session', 'new-session');
    await control.poll();
    expect(closed).toEqual([]);
    expect(conn.open).toBe(true);
  });

  it('still closes a session that another one truly replaced', async () => {
    // Both the read and the read again name another session: replaced.
    const { control, closed } = await setUp('old-session', 'newer-session-elsewhere');
    await control.poll();
    expect(closed).toEqual([{ code: 1000, reason: 'replaced by a newer session' }]);
  });
});
